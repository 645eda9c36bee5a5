package dev.syncular.server.testsupport;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A real webhook endpoint for tests (the JDK HTTP server on a free port): it records every request (path, body,
 * headers) and answers with what the test scripted — a fixed answer, or answers queued one per request, each of
 * which may hold its response until the test releases a latch (a timeout without sleeping).
 */
public final class TestWebhook implements AutoCloseable {
    /** One received request. */
    public record Received(String path, String body, Map<String, List<String>> headers) {
        public String header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (e.getKey() != null && e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue().get(0);
                }
            }
            return null;
        }
    }

    /** An answer: status and body, sent once {@code hold} (when not null) is released. */
    public record Answer(int status, String body, CountDownLatch hold) {
        public static Answer ok(String body) {
            return new Answer(200, body, null);
        }
    }

    private final HttpServer server;
    public final List<Received> received = new CopyOnWriteArrayList<>();
    private final BlockingQueue<Answer> queued = new LinkedBlockingQueue<>();
    private volatile Function<Received, Answer> fallback = r -> Answer.ok("{}");

    public TestWebhook() {
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/", exchange -> {
            byte[] in = exchange.getRequestBody().readAllBytes();
            Received r = new Received(
                    exchange.getRequestURI().getPath(),
                    new String(in, StandardCharsets.UTF_8),
                    Map.copyOf(exchange.getRequestHeaders()));
            received.add(r);
            Answer a = queued.poll();
            if (a == null) {
                a = fallback.apply(r);
            }
            if (a.hold() != null) {
                try {
                    a.hold().await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            byte[] out = a.body().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            try {
                exchange.sendResponseHeaders(a.status(), out.length == 0 ? -1 : out.length);
                if (out.length > 0) {
                    exchange.getResponseBody().write(out);
                }
            } catch (IOException e) {
                // the caller gave up (its timeout): nothing to answer
            }
            exchange.close();
        });
        server.start();
    }

    public String url(String path) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + path;
    }

    /** Answers every request not served by a queued answer. */
    public void answer(Function<Received, Answer> answer) {
        fallback = answer;
    }

    /** Queues answers, one per request, before the fallback. */
    public void then(Answer... answers) {
        queued.addAll(List.of(answers));
    }

    public void reset() {
        queued.clear();
        received.clear();
        fallback = r -> Answer.ok("{}");
    }

    /** Whether {@code signature} ({@code t=<ms>,v1=<hex>}) is the HMAC-SHA256 of {@code "<t>.<body>"} under {@code secret}. */
    public static boolean signed(String signature, String body, String secret) throws Exception {
        String t = signature.substring(2, signature.indexOf(','));
        String v1 = signature.substring(signature.indexOf("v1=") + 3);
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        return HexFormat.of()
                .formatHex(mac.doFinal((t + "." + body).getBytes(StandardCharsets.UTF_8)))
                .equals(v1);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
