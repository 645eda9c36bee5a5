package dev.syncular.server.testsupport;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnknownFieldSet;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.function.Predicate;
import java.util.zip.GZIPInputStream;

/**
 * A real trace collector for tests: the OTLP/HTTP protobuf receiver ({@code POST /v1/traces}, the JDK HTTP server on
 * a free port) that servers started by a test export their spans to ({@code QUARKUS_OTEL_EXPORTER_OTLP_PROTOCOL=
 * http/protobuf}). Requests are decoded field by field with protobuf's unknown-field reader (protobuf-java is on the
 * classpath with the server's gRPC and OTLP exporter, not a dependency of the tests' own), after the OTLP
 * messages' field numbers ({@code ExportTraceServiceRequest.resource_spans = 1}, {@code ResourceSpans.resource = 1},
 * {@code .scope_spans = 2}, {@code ScopeSpans.spans = 2}, {@code Span.trace_id = 1}, {@code .span_id = 2},
 * {@code .parent_span_id = 4}, {@code .name = 5}, {@code .attributes = 9}, {@code .links = 13}; {@code
 * KeyValue.key = 1}, {@code .value = 2}; {@code AnyValue.string_value = 1}, {@code .int_value = 3}).
 */
public final class OtlpCollector implements AutoCloseable {
    /** One exported span: ids in lower-case hex, attributes as strings, and the resource's attributes. */
    public record Collected(
            Map<String, String> resource,
            String traceId,
            String spanId,
            String parentSpanId,
            String name,
            Map<String, String> attributes,
            List<Link> links) {}

    /** A link of a span to another span, possibly of another trace. */
    public record Link(String traceId, String spanId) {}

    private final HttpServer server;
    private final List<Collected> spans = new CopyOnWriteArrayList<>();

    public OtlpCollector() {
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/v1/traces", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            int status = 200;
            try {
                String encoding = exchange.getRequestHeaders().getFirst("Content-Encoding");
                if ("gzip".equalsIgnoreCase(encoding)) {
                    try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(body))) {
                        body = in.readAllBytes();
                    }
                }
                spans.addAll(decode(body));
                synchronized (OtlpCollector.this) {
                    OtlpCollector.this.notifyAll();
                }
            } catch (InvalidProtocolBufferException e) {
                status = 400;
            }
            exchange.getResponseHeaders().set("Content-Type", "application/x-protobuf");
            // an empty ExportTraceServiceResponse: every span accepted
            exchange.sendResponseHeaders(status, -1);
            exchange.close();
        });
        server.start();
    }

    /** The endpoint to export to ({@code QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT}, OTLP/HTTP). */
    public String endpoint() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** The first span received matching {@code match}, waiting for each export until {@code deadline}. */
    public synchronized Collected await(String what, Predicate<Collected> match, Duration deadline)
            throws InterruptedException {
        long end = System.nanoTime() + deadline.toNanos();
        while (true) {
            for (Collected c : spans) {
                if (match.test(c)) {
                    return c;
                }
            }
            long left = end - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("no span " + what + " within " + deadline + "; received " + spans);
            }
            wait(Math.max(1, left / 1_000_000)); // woken by the next export
        }
    }

    static List<Collected> decode(byte[] request) throws InvalidProtocolBufferException {
        List<Collected> out = new ArrayList<>();
        UnknownFieldSet export = UnknownFieldSet.parseFrom(request);
        for (ByteString resourceSpans : lengthDelimited(export, 1)) {
            UnknownFieldSet rs = UnknownFieldSet.parseFrom(resourceSpans);
            Map<String, String> resource = new HashMap<>();
            for (ByteString r : lengthDelimited(rs, 1)) {
                resource.putAll(attributes(UnknownFieldSet.parseFrom(r), 1));
            }
            for (ByteString scopeSpans : lengthDelimited(rs, 2)) {
                for (ByteString span : lengthDelimited(UnknownFieldSet.parseFrom(scopeSpans), 2)) {
                    UnknownFieldSet s = UnknownFieldSet.parseFrom(span);
                    List<Link> links = new ArrayList<>();
                    for (ByteString link : lengthDelimited(s, 13)) {
                        UnknownFieldSet l = UnknownFieldSet.parseFrom(link);
                        links.add(new Link(hex(l, 1), hex(l, 2)));
                    }
                    out.add(new Collected(
                            Map.copyOf(resource),
                            hex(s, 1),
                            hex(s, 2),
                            hex(s, 4),
                            text(s, 5),
                            attributes(s, 9),
                            List.copyOf(links)));
                }
            }
        }
        return out;
    }

    private static List<ByteString> lengthDelimited(UnknownFieldSet message, int field) {
        return message.hasField(field) ? message.getField(field).getLengthDelimitedList() : List.of();
    }

    private static String hex(UnknownFieldSet message, int field) {
        List<ByteString> v = lengthDelimited(message, field);
        return v.isEmpty() ? "" : HexFormat.of().formatHex(v.get(0).toByteArray());
    }

    private static String text(UnknownFieldSet message, int field) {
        List<ByteString> v = lengthDelimited(message, field);
        return v.isEmpty() ? "" : v.get(0).toStringUtf8();
    }

    private static Map<String, String> attributes(UnknownFieldSet message, int field)
            throws InvalidProtocolBufferException {
        Map<String, String> out = new HashMap<>();
        for (ByteString kv : lengthDelimited(message, field)) {
            UnknownFieldSet pair = UnknownFieldSet.parseFrom(kv);
            List<ByteString> value = lengthDelimited(pair, 2);
            if (value.isEmpty()) {
                continue;
            }
            UnknownFieldSet any = UnknownFieldSet.parseFrom(value.get(0));
            String v;
            if (any.hasField(1)) {
                v = text(any, 1);
            } else if (any.hasField(3)) {
                v = Long.toString(any.getField(3).getVarintList().get(0));
            } else {
                v = any.toString();
            }
            out.put(text(pair, 1), v);
        }
        return out;
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
