package dev.syncular.server.bench;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.Change;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.realtime.ControlMessage;
import dev.syncular.server.wire.realtime.ControlMessages;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The §8.7 backpressure proof, run by {@code bench/realtime-stuck.sh} (not a test): one packaged pod with the
 * chart's JVM flags; {@code bench.sockets} (10,000) registered sockets over {@code bench.scopes} (100) lists, of
 * which {@code bench.stuck} (1,000) never read; a writer commits {@code bench.commitsPerSec} (100) commits/s of
 * one {@code bench.rowBytes} (200 KB) row for {@code bench.sec} (20 s). Meanwhile liveness is asked every
 * 100 ms and the pod's RSS sampled every second. Reports: pushes applied and failed, deltas each reading socket
 * received against what it should have, wake-ups, the pod's outbound-budget and failure counters, liveness
 * answers and its slowest, the peak RSS against the chart's 512 Mi.
 */
public final class RealtimeStuckBenchmark {
    private static final int SOCKETS = Integer.getInteger("bench.sockets", 10_000);
    private static final int STUCK = Integer.getInteger("bench.stuck", 1_000);
    private static final int SCOPES = Integer.getInteger("bench.scopes", 100);
    private static final int RATE = Integer.getInteger("bench.commitsPerSec", 100);
    private static final int ROW_BYTES = Integer.getInteger("bench.rowBytes", 200_000);
    private static final int SEC = Integer.getInteger("bench.sec", 20);
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private RealtimeStuckBenchmark() {}

    /** A reading socket: counts the rows of its deltas and its wake-ups, acks every delta. */
    static final class ReadingSocket implements WebSocket.Listener {
        final ByteArrayOutputStream binary = new ByteArrayOutputStream();
        final LongAdder rows;
        final LongAdder wakes;
        final AtomicInteger closeCode = new AtomicInteger();
        final int scope;
        volatile long received;

        ReadingSocket(int scope, LongAdder rows, LongAdder wakes) {
            this.scope = scope;
            this.rows = rows;
            this.wakes = wakes;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket w, ByteBuffer data, boolean last) {
            byte[] b = new byte[data.remaining()];
            data.get(b);
            binary.writeBytes(b);
            if (last) {
                byte[] m = binary.toByteArray();
                binary.reset();
                if (m[0] == 0x00) {
                    Message delta = MessageDecoder.decodeResponse(Arrays.copyOfRange(m, 1, m.length));
                    long cursor = -1;
                    for (Frame f : delta.frames()) {
                        if (f instanceof CommitFrame c) {
                            for (Change ch : c.changes()) {
                                received++;
                                rows.increment();
                            }
                        } else if (f instanceof SubEnd e) {
                            cursor = Math.max(cursor, e.nextCursor());
                        }
                    }
                    if (cursor >= 0) {
                        w.sendText(ControlMessages.render(new ControlMessage.Ack(cursor)), true);
                    }
                }
            }
            w.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
            if (data.toString().contains("\"sync\"")) {
                wakes.increment();
            }
            w.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket w, int statusCode, String reason) {
            closeCode.set(statusCode);
            return null;
        }
    }

    /** A socket that never reads: it requests nothing, ever. */
    static final class StuckSocket implements WebSocket.Listener {
        @Override
        public void onOpen(WebSocket webSocket) {
            // no request(): nothing is read from the connection
        }
    }

    public static void main(String[] args) throws Exception {
        CompiledSchema schema = SchemaLoader.parse(Files.readString(ServerProcess.BUNDLED_SCHEMA));
        String pgSchema =
                "bench_rt_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        System.out.printf(
                Locale.ROOT,
                "== realtime stuck-socket benchmark, storage schema %s, server flags %s%n",
                pgSchema,
                String.join(" ", ServerProcess.CHART_JVM_FLAGS));
        try (ServerProcess pod = ServerProcess.builder("bench-realtime-stuck", pgSchema)
                .jvmFlags(ServerProcess.CHART_JVM_FLAGS)
                .env("SYNCULAR_REALTIME_MAX_CONNECTIONS", Integer.toString(SOCKETS + 100))
                .env("SYNCULAR_REALTIME_SOCKET_BUDGET", Long.toString((SOCKETS + 100L) * 16 * 1024 + (64L << 20)))
                .env("SYNCULAR_MAX_REQUEST_BYTES", "4M")
                .start()) {
            run(pod, schema);
        }
    }

    static void run(ServerProcess pod, CompiledSchema schema) throws Exception {
        String partition = "stuck-" + UUID.randomUUID();
        String ws = pod.baseUrl().replaceFirst("^http", "ws") + "/realtime?clientId=";
        LongAdder rows = new LongAdder();
        LongAdder wakes = new LongAdder();
        List<ReadingSocket> readers = new ArrayList<>();
        List<WebSocket> sockets = new ArrayList<>();
        int[] perScope = new int[SCOPES];
        long t0 = System.nanoTime();
        List<CompletableFuture<WebSocket>> opening = new ArrayList<>();
        for (int i = 0; i < SOCKETS; i++) {
            boolean stuck = i < STUCK;
            String list = "l" + (i % SCOPES);
            SyncTestClient c = new SyncTestClient(
                    schema,
                    new HttpTransport(pod.baseUrl(), partition),
                    (stuck ? "stuck-" : "reader-") + i,
                    "c-" + i + "-" + UUID.randomUUID());
            c.subscribe("s1", "todos", Map.of("list_id", List.of(list)));
            c.syncUntilIdle(); // registers the subscription before the socket connects
            WebSocket.Listener listener;
            if (stuck) {
                listener = new StuckSocket();
            } else {
                ReadingSocket r = new ReadingSocket(i % SCOPES, rows, wakes);
                readers.add(r);
                perScope[i % SCOPES]++;
                listener = r;
            }
            opening.add(HTTP.newWebSocketBuilder()
                    .header("x-actor-id", c.actorId)
                    .header("x-syncular-partition", partition)
                    .buildAsync(URI.create(ws + c.clientId), listener));
            if (opening.size() == 200) {
                for (CompletableFuture<WebSocket> f : opening) {
                    sockets.add(f.get(60, TimeUnit.SECONDS));
                }
                opening.clear();
            }
        }
        for (CompletableFuture<WebSocket> f : opening) {
            sockets.add(f.get(60, TimeUnit.SECONDS));
        }
        System.out.printf(
                Locale.ROOT,
                "%d sockets (%d never reading) registered and open in %.1f s; RSS %.0f MB%n",
                SOCKETS,
                STUCK,
                (System.nanoTime() - t0) / 1e9,
                mb(pod.rssBytes()));

        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong slowestLiveMs = new AtomicLong();
        AtomicInteger liveOk = new AtomicInteger();
        AtomicInteger liveFailed = new AtomicInteger();
        AtomicLong peakRss = new AtomicLong();
        Thread probe = new Thread(() -> {
            long next = System.nanoTime();
            while (!stop.get()) {
                long start = System.nanoTime();
                try {
                    int status = HTTP.send(
                                    HttpRequest.newBuilder(URI.create(pod.baseUrl() + "/q/health/live"))
                                            .timeout(Duration.ofSeconds(5))
                                            .GET()
                                            .build(),
                                    HttpResponse.BodyHandlers.discarding())
                            .statusCode();
                    (status == 200 ? liveOk : liveFailed).incrementAndGet();
                } catch (Exception e) {
                    liveFailed.incrementAndGet();
                }
                slowestLiveMs.accumulateAndGet((System.nanoTime() - start) / 1_000_000, Math::max);
                if ((liveOk.get() + liveFailed.get()) % 10 == 0) {
                    peakRss.accumulateAndGet(pod.rssBytes(), Math::max);
                }
                next += 100_000_000L;
                while (System.nanoTime() < next && !stop.get()) {
                    Thread.onSpinWait(); // the probe's pace (a benchmark, not a test)
                }
            }
        });
        probe.setDaemon(true);
        probe.start();

        SyncTestClient writer = new SyncTestClient(
                schema, new HttpTransport(pod.baseUrl(), partition), "writer", "writer-" + UUID.randomUUID());
        writer.syncUntilIdle();
        String big = "x".repeat(ROW_BYTES);
        int commits = RATE * SEC;
        long expected = 0;
        int applied = 0;
        int[] appliedPerScope = new int[SCOPES];
        int failed = 0;
        long periodNs = 1_000_000_000L / RATE;
        long start = System.nanoTime();
        for (int k = 0; k < commits; k++) {
            long due = start + k * periodNs;
            while (System.nanoTime() < due) {
                Thread.onSpinWait(); // the writer's pace
            }
            String id = writer.upsert(
                    "todos",
                    Map.of(
                            "id",
                            "big" + k,
                            "list_id",
                            "l" + (k % SCOPES),
                            "title",
                            big,
                            "done",
                            false,
                            "position",
                            (long) k,
                            "updated_at_ms",
                            1L),
                    null);
            try {
                writer.sync();
                if (SyncTestClient.applied(writer.result(id))) {
                    applied++;
                    appliedPerScope[k % SCOPES]++;
                    expected += perScope[k % SCOPES];
                } else {
                    failed++;
                }
            } catch (RuntimeException e) {
                failed++;
                writer.outbox.clear();
            }
        }
        double writerSec = (System.nanoTime() - start) / 1e9;
        // the last deliveries: at most 30 s for the readers to catch up
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (rows.sum() < expected && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        stop.set(true);
        probe.join();
        long complete = readers.stream()
                .filter(r -> r.received == appliedPerScope[r.scope])
                .count();
        String metrics = scrape(pod);
        System.out.printf(
                Locale.ROOT,
                "%d commits of %d bytes at %.0f/s: %d applied, %d failed; reading sockets: %d"
                        + " of %d got every delta (rows %d of %d), wake-ups %d; %s; liveness %d ok, %d failed, slowest %d ms;"
                        + " peak RSS %.0f MB (chart limit 512 Mi), VmHWM %.0f MB%n",
                commits,
                ROW_BYTES,
                commits / writerSec,
                applied,
                failed,
                complete,
                readers.size(),
                rows.sum(),
                expected,
                wakes.sum(),
                metrics,
                liveOk.get(),
                liveFailed.get(),
                slowestLiveMs.get(),
                mb(peakRss.get()),
                mb(pod.peakRssBytes()));
        for (WebSocket w : sockets) {
            w.abort();
        }
    }

    /** The pod's outbound-budget counters from its Prometheus endpoint. */
    static String scrape(ServerProcess pod) {
        try {
            String body = HTTP.send(
                            HttpRequest.newBuilder(
                                            URI.create("http://127.0.0.1:" + pod.managementPort() + "/q/metrics"))
                                    .GET()
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
            StringBuilder out = new StringBuilder();
            for (String line : body.split("\n")) {
                if (line.startsWith("syncular_realtime_outbound_") || line.startsWith("syncular_realtime_errors")) {
                    out.append(out.length() == 0 ? "" : ", ").append(line);
                }
            }
            return out.toString();
        } catch (Exception e) {
            return "metrics unavailable (" + e + ")";
        }
    }

    static double mb(long bytes) {
        return bytes / 1e6;
    }
}
