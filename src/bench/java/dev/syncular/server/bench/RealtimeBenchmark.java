package dev.syncular.server.bench;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.RealtimeSocket;
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
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;

/**
 * The realtime benchmark (docs/BENCHMARKS.md, "Realtime"; not part of the test suite). Run with
 * {@code bench/realtime.sh}. It starts packaged servers itself ({@link ServerProcess}, the chart's JVM flags,
 * a fresh storage schema on the test PostgreSQL) and measures:
 * <ol>
 * <li><b>(a) idle sockets</b>: {@code bench.idleSockets} (10,000) authenticated sockets on one pod, opened from
 * several loopback source addresses ({@link SpreadSockets}); the pod's RSS before and after, and after a full GC
 * ({@code jcmd GC.run}), its heap in use after a full GC before and with them, the load generator's heap for
 * them; {@code bench.idleHoldSec} (0) more seconds held, then the sockets the server closed.</li>
 * <li><b>(b) fanout on one pod</b>: {@code bench.fanoutSockets} (1,000) sockets over 100 scopes (lists), each
 * synced and registered; a writer commits {@code bench.commitsPerSec} (100) one-row commits per second for
 * {@code bench.fanoutSec} (20 s), round-robin over the lists, after {@code bench.fanoutWarmupSec} (5 s) of the
 * same commits delivered but not measured. Latency is from the moment the writer sends
 * the push to the arrival of the delta carrying that row on a socket (an upper bound of commit-to-delta),
 * p50/p99/max over every delivery.</li>
 * <li><b>(c) the same across two pods</b>: the sockets on pod B, the writer's pushes through pod A, so every
 * delta crosses PostgreSQL's NOTIFY.</li>
 * <li><b>(d) socket rounds against HTTP rounds</b>: {@code bench.roundClients} (20) clients doing push+pull
 * rounds back to back, {@code bench.roundSec} (20 s) over HTTP, then the same over their sockets (§8.7),
 * after a warm-up of both.</li>
 * <li><b>(e) one commit to the sockets of one scope</b>: {@link ScopeFanout}.</li>
 * <li><b>(f) a reconnect storm</b>: {@link ReconnectStorm}, with {@code -Dbench.phases=f} (not in the default set).</li>
 * </ol>
 * The pod's heap is the chart's 192m unless {@code bench.serverHeap} sets it (e.g. {@code 2g} for 100,000
 * sockets); its {@code syncular.realtime.max-connections} is the largest socket count of the run plus 1,000, and
 * its {@code syncular.realtime.socket-budget} room for that many sockets and 64 MiB of outbound bytes.
 */
public final class RealtimeBenchmark {
    private static final int IDLE = Integer.getInteger("bench.idleSockets", 10_000);
    /** Seconds (a) holds its sockets after the RSS readings, then counts those the server closed. */
    private static final int IDLE_HOLD_SEC = Integer.getInteger("bench.idleHoldSec", 0);
    /** The pod's heap ({@code -Xms} and {@code -Xmx}), the chart's 192m unless set, e.g. {@code 1g}. */
    private static final String SERVER_HEAP = System.getProperty("bench.serverHeap", "");

    private static final int FANOUT = Integer.getInteger("bench.fanoutSockets", 1_000);
    private static final int SCOPES = Integer.getInteger("bench.scopes", 100);
    private static final int RATE = Integer.getInteger("bench.commitsPerSec", 100);
    private static final int FANOUT_SEC = Integer.getInteger("bench.fanoutSec", 20);
    private static final int FANOUT_WARMUP_SEC = Integer.getInteger("bench.fanoutWarmupSec", 5);
    private static final int ROUND_CLIENTS = Integer.getInteger("bench.roundClients", 20);
    private static final int ROUND_SEC = Integer.getInteger("bench.roundSec", 20);
    private static final int WARMUP_SEC = Integer.getInteger("bench.warmupSec", 20);
    /** The phases to run, e.g. {@code -Dbench.phases=cd}; (a) to (e) by default, (f) when named. */
    private static final String PHASES = System.getProperty("bench.phases", "abcde");

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static CompiledSchema schema;

    private RealtimeBenchmark() {}

    public static void main(String[] args) throws Exception {
        schema = SchemaLoader.parse(Files.readString(ServerProcess.BUNDLED_SCHEMA));
        // the script names the schema (it drops that one afterwards, not a concurrent run's)
        String pgSchema = System.getProperty(
                "bench.pgSchema",
                "bench_rt_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10));
        System.out.printf(
                Locale.ROOT,
                "== realtime benchmark, storage schema %s, server flags %s, file descriptors %s%n",
                pgSchema,
                String.join(" ", serverFlags()),
                ProcStats.fileLimit(ProcessHandle.current().pid()));
        try (ServerProcess a = pod("bench-realtime-a", pgSchema)) {
            System.out.printf(Locale.ROOT, "== pod A: file descriptors %s%n", ProcStats.fileLimit(a.pid()));
            if (PHASES.contains("a")) {
                idleSockets(a);
            }
            double[] onePod = PHASES.contains("b") ? fanout(a, a, "one pod") : new double[] {Double.NaN, Double.NaN};
            try (ServerProcess b = PHASES.contains("c") ? pod("bench-realtime-b", pgSchema) : null) {
                double[] twoPods = b == null
                        ? new double[] {Double.NaN, Double.NaN}
                        : fanout(a, b, "two pods (writer on A, sockets on B)");
                if (PHASES.contains("d")) {
                    rounds(a);
                }
                if (PHASES.contains("b") || PHASES.contains("c")) {
                    System.out.printf(
                            Locale.ROOT,
                            "== summary: (b) p50 %.1f ms p99 %.1f ms; (c) p50 %.1f ms p99 %.1f ms%n",
                            onePod[0],
                            onePod[1],
                            twoPods[0],
                            twoPods[1]);
                }
            }
            if (PHASES.contains("e")) {
                ScopeFanout.run(a, schema);
            }
            if (PHASES.contains("f")) {
                ReconnectStorm.run(a);
            }
        }
    }

    /**
     * The chart's JVM flags, the heap set by {@code bench.serverHeap} when given, then the space-separated
     * {@code bench.serverFlags} (e.g. a flight recording of the pods alone).
     */
    static List<String> serverFlags() {
        List<String> flags = new ArrayList<>();
        for (String f : ServerProcess.CHART_JVM_FLAGS) {
            boolean heap = f.startsWith("-Xms") || f.startsWith("-Xmx");
            flags.add(heap && !SERVER_HEAP.isEmpty() ? f.substring(0, 4) + SERVER_HEAP : f);
        }
        for (String f : System.getProperty("bench.serverFlags", "").trim().split("\\s+")) {
            if (!f.isEmpty()) {
                flags.add(f);
            }
        }
        return flags;
    }

    /**
     * {@code -Dbench.podSocketBudget=true}: the pods keep their own socket budget (a quarter of the heap), and phase (e)
     * counts the upgrades it refuses instead of failing on them; by default the budget has room for every socket.
     */
    static final boolean POD_SOCKET_BUDGET = Boolean.getBoolean("bench.podSocketBudget");

    static ServerProcess pod(String name, String pgSchema) throws Exception {
        int sockets = Math.max(Math.max(IDLE, FANOUT), Math.max(ScopeFanout.SOCKETS, ReconnectStorm.SOCKETS));
        ServerProcess.Builder pod = ServerProcess.builder(name, pgSchema)
                .jvmFlags(serverFlags())
                .env("SYNCULAR_REALTIME_MAX_CONNECTIONS", Integer.toString(sockets + 1000));
        if (!POD_SOCKET_BUDGET) {
            // the sockets' share of memory is what phase (a) measures: room for all of them
            pod.env("SYNCULAR_REALTIME_SOCKET_BUDGET", Long.toString((sockets + 1000L) * 16 * 1024 + (64L << 20)));
        }
        return pod.start();
    }

    static String ws(ServerProcess pod) {
        return pod.baseUrl().replaceFirst("^http", "ws") + "/realtime?clientId=";
    }

    // ------------------------------------------------------------------ (a)

    static void idleSockets(ServerProcess pod) throws Exception {
        long before = pod.rssBytes();
        long heapBefore = fullGc(pod);
        long selfBefore = selfHeapAfterGc();
        String partition = "idle-" + UUID.randomUUID();
        CountDownLatch hellos = new CountDownLatch(IDLE);
        long t0 = System.nanoTime();
        try (SpreadSockets open = SpreadSockets.open(
                pod.baseUrl(),
                partition,
                IDLE,
                i -> "idle-" + (i % 100),
                i -> "idle-" + i,
                (i, w, text) -> {
                    if (text.contains("\"hello\"")) {
                        hellos.countDown();
                    }
                },
                false)) {
            if (!hellos.await(120, TimeUnit.SECONDS)) {
                throw new IllegalStateException("hellos missing: " + hellos.getCount());
            }
            double connectSec = (System.nanoTime() - t0) / 1e9;
            long after = pod.rssBytes();
            long heapAfterGc = fullGc(pod);
            long afterGc = pod.rssBytes();
            System.out.printf(
                    Locale.ROOT,
                    "(a) %d idle authenticated sockets on one pod from %s: connected with hello in %.1f s"
                            + " (%.0f/s); RSS %.0f MB before, %.0f MB with the sockets, %.0f MB after a full GC"
                            + "; peak %.0f MB; pod heap in use after a full GC %.0f MB before, %.0f MB with the"
                            + " sockets; load generator heap %.0f MB more%n",
                    IDLE,
                    open.addressRange(),
                    connectSec,
                    IDLE / connectSec,
                    mb(before),
                    mb(after),
                    mb(afterGc),
                    mb(pod.peakRssBytes()),
                    mb(heapBefore),
                    mb(heapAfterGc),
                    mb(selfHeapAfterGc() - selfBefore));
            if (IDLE_HOLD_SEC > 0) {
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(IDLE_HOLD_SEC);
                while (System.nanoTime() < until && pod.alive()) {
                    TimeUnit.MILLISECONDS.sleep(200); // holding the sockets idle (a benchmark, not a test)
                }
            }
            System.out.printf(
                    Locale.ROOT,
                    "(a) after %d s more: %d of %d sockets closed by the server, RSS %.0f MB%n",
                    IDLE_HOLD_SEC,
                    open.closed.get(),
                    IDLE,
                    mb(pod.rssBytes()));
        }
    }

    /** This JVM's heap in use after {@code System.gc()}, in bytes. */
    static long selfHeapAfterGc() {
        System.gc();
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    /** A full GC of the pod ({@code jcmd GC.run}); the heap in use after it in bytes, -1 when unreadable. */
    static long fullGc(ServerProcess pod) throws Exception {
        new ProcessBuilder("jcmd", Long.toString(pod.pid()), "GC.run")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start()
                .waitFor(60, TimeUnit.SECONDS);
        Process info = new ProcessBuilder("jcmd", Long.toString(pod.pid()), "GC.heap_info")
                .redirectErrorStream(true)
                .start();
        String out = new String(info.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        info.waitFor(60, TimeUnit.SECONDS);
        // SerialGC: "def new generation total 98304K, used 1234K, ..." and "tenured generation total ..., used ..."
        Matcher m = Pattern.compile("(?m)^\\s*(def new|tenured|garbage-first)\\D*total \\d+K, used (\\d+)K")
                .matcher(out);
        long used = 0;
        boolean any = false;
        while (m.find()) {
            used += Long.parseLong(m.group(2)) * 1024;
            any = true;
        }
        return any ? used : -1;
    }

    // ------------------------------------------------------------------ (b), (c)

    /** A delta message (§8.2, {@code 0x00} and a response) read: the ids of its rows and its next cursor. */
    record Delta(List<String> rowIds, long cursor) {
        /** The delta in {@code message}, or {@code null} when the binary message is not one. */
        static Delta of(byte[] message) {
            if (message.length == 0 || message[0] != 0x00) {
                return null;
            }
            Message delta = MessageDecoder.decodeResponse(Arrays.copyOfRange(message, 1, message.length));
            List<String> rows = new ArrayList<>();
            long cursor = -1;
            for (Frame f : delta.frames()) {
                if (f instanceof CommitFrame c) {
                    for (Change ch : c.changes()) {
                        rows.add(ch.rowId());
                    }
                } else if (f instanceof SubEnd e) {
                    cursor = Math.max(cursor, e.nextCursor());
                }
            }
            return new Delta(rows, cursor);
        }

        /** The acknowledgement of this delta (§8.2). */
        String ack() {
            return ControlMessages.render(new ControlMessage.Ack(cursor));
        }
    }

    /** A socket of the fanout phases: times every delta row against its push's send time, acks each delta. */
    static final class TimingSocket implements WebSocket.Listener {
        final ByteArrayOutputStream binary = new ByteArrayOutputStream();
        final Map<String, Long> sent;
        final Histogram latency;
        final LongAdder deliveries;
        final LongAdder wakes;
        /** One permit per delivery or wake-up: what the drain waits on. */
        final Semaphore arrivals;

        TimingSocket(
                Map<String, Long> sent, Histogram latency, LongAdder deliveries, LongAdder wakes, Semaphore arrivals) {
            this.arrivals = arrivals;
            this.sent = sent;
            this.latency = latency;
            this.deliveries = deliveries;
            this.wakes = wakes;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket w, ByteBuffer data, boolean last) {
            long now = System.nanoTime();
            byte[] b = new byte[data.remaining()];
            data.get(b);
            binary.writeBytes(b);
            if (last) {
                byte[] m = binary.toByteArray();
                binary.reset();
                Delta delta = Delta.of(m);
                if (delta != null) {
                    for (String row : delta.rowIds()) {
                        Long t = sent.get(row);
                        if (t != null) {
                            synchronized (latency) {
                                latency.recordValue(Math.max(0, (now - t) / 1000));
                            }
                            deliveries.increment();
                            arrivals.release();
                        }
                    }
                    if (delta.cursor() >= 0) {
                        w.sendText(delta.ack(), true);
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
                arrivals.release();
            }
            w.request(1);
            return null;
        }
    }

    static double[] fanout(ServerProcess writerPod, ServerProcess socketPod, String label) throws Exception {
        String partition = "fanout-" + UUID.randomUUID();
        Map<String, Long> sent = new ConcurrentHashMap<>();
        Histogram latency = new Histogram(60_000_000L, 3);
        LongAdder deliveries = new LongAdder();
        LongAdder wakes = new LongAdder();
        Semaphore arrivals = new Semaphore(0);
        List<WebSocket> sockets = new ArrayList<>();
        for (int i = 0; i < FANOUT; i++) {
            SyncTestClient c = new SyncTestClient(
                    schema,
                    new HttpTransport(socketPod.baseUrl(), partition),
                    "reader-" + i,
                    "reader-" + i + "-" + UUID.randomUUID());
            c.subscribe("s1", "todos", Map.of("list_id", List.of("l" + (i % SCOPES))));
            c.syncUntilIdle(); // registers the subscription (client record) before the socket connects
            sockets.add(HTTP.newWebSocketBuilder()
                    .header("x-actor-id", c.actorId)
                    .header("x-syncular-partition", partition)
                    .buildAsync(
                            URI.create(ws(socketPod) + c.clientId),
                            new TimingSocket(sent, latency, deliveries, wakes, arrivals))
                    .get(60, TimeUnit.SECONDS));
        }
        SyncTestClient writer = new SyncTestClient(
                schema, new HttpTransport(writerPod.baseUrl(), partition), "writer", "writer-" + UUID.randomUUID());
        writer.syncUntilIdle();
        int commits = RATE * FANOUT_SEC;
        // warm-up commits first, at the same pace, delivered but not measured: a pod started just before the
        // phase (pod B of (c)) would otherwise time its JIT compilation in the tail
        int warmups = RATE * FANOUT_WARMUP_SEC;
        long periodNs = 1_000_000_000L / RATE;
        long paceStart = System.nanoTime();
        long start = paceStart;
        for (int k = -warmups; k < commits; k++) {
            long due = paceStart + (k + warmups) * periodNs;
            while (System.nanoTime() < due) {
                Thread.onSpinWait(); // the writer's pace (a benchmark, not a test)
            }
            String row = k < 0 ? "warm" + -k : "w" + k;
            if (k == 0) {
                start = System.nanoTime();
            }
            if (k >= 0) {
                sent.put(row, System.nanoTime());
            }
            writer.upsert(
                    "todos",
                    Map.of(
                            "id",
                            row,
                            "list_id",
                            "l" + (k % SCOPES),
                            "title",
                            "t",
                            "done",
                            false,
                            "position",
                            1L,
                            "updated_at_ms",
                            1L),
                    null);
            writer.sync();
        }
        double writerSec = (System.nanoTime() - start) / 1e9;
        long expected = (long) commits * (FANOUT / SCOPES);
        // the last deliveries: every expected arrival signalled, or 30 s (then the counts show what was missing)
        arrivals.tryAcquire((int) Math.min(expected, Integer.MAX_VALUE), 30, TimeUnit.SECONDS);
        for (WebSocket w : sockets) {
            w.abort();
        }
        double p50;
        double p99;
        synchronized (latency) {
            p50 = latency.getValueAtPercentile(50) / 1000.0;
            p99 = latency.getValueAtPercentile(99) / 1000.0;
            System.out.printf(
                    Locale.ROOT,
                    "(%s) %s: %d sockets over %d scopes, %d commits at %.0f/s; deltas %d of %d,"
                            + " wake-ups %d; push-to-delta latency p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms%n",
                    writerPod == socketPod ? "b" : "c",
                    label,
                    FANOUT,
                    SCOPES,
                    commits,
                    commits / writerSec,
                    deliveries.sum(),
                    expected,
                    wakes.sum(),
                    p50,
                    latency.getValueAtPercentile(90) / 1000.0,
                    p99,
                    latency.getMaxValue() / 1000.0);
        }
        return new double[] {p50, p99};
    }

    // ------------------------------------------------------------------ (d)

    record SocketTransport(RealtimeSocket socket) implements SyncTestClient.Transport {
        @Override
        public byte[] roundTrip(SyncTestClient client, byte[] request) {
            try {
                return socket.round(request, 1 << 16);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
            throw new UnsupportedOperationException("no segments in round phases");
        }
    }

    static void rounds(ServerProcess pod) throws Exception {
        String partition = "rounds-" + UUID.randomUUID();
        List<SyncTestClient> overHttp = new ArrayList<>();
        List<SyncTestClient> overSocket = new ArrayList<>();
        List<RealtimeSocket> sockets = new ArrayList<>();
        for (int i = 0; i < ROUND_CLIENTS; i++) {
            SyncTestClient h = new SyncTestClient(
                    schema,
                    new HttpTransport(pod.baseUrl(), partition),
                    "h" + i,
                    "http-" + i + "-" + UUID.randomUUID());
            overHttp.add(h.subscribe("s1", "todos", Map.of("list_id", List.of("rounds"))));
            String clientId = "socket-" + i + "-" + UUID.randomUUID();
            RealtimeSocket s = RealtimeSocket.connect(pod.baseUrl() + "/", partition, "s" + i, clientId);
            s.nextEvent("hello");
            sockets.add(s);
            SyncTestClient w = new SyncTestClient(schema, new SocketTransport(s), "s" + i, clientId);
            overSocket.add(w.subscribe("s1", "todos", Map.of("list_id", List.of("rounds"))));
        }
        runRounds(overHttp, WARMUP_SEC / 2);
        runRounds(overSocket, WARMUP_SEC / 2);
        double http = runRounds(overHttp, ROUND_SEC);
        double socket = runRounds(overSocket, ROUND_SEC);
        System.out.printf(
                Locale.ROOT,
                "(d) push+pull rounds, %d clients back to back, %d s each: HTTP %.0f rounds/s,"
                        + " socket %.0f rounds/s (%.2fx)%n",
                ROUND_CLIENTS,
                ROUND_SEC,
                http,
                socket,
                socket / http);
        sockets.forEach(s -> s.ws.abort());
    }

    /** Rounds/s of {@code clients}, each on its own thread, for {@code seconds}. */
    static double runRounds(List<SyncTestClient> clients, int seconds) throws Exception {
        AtomicLong rounds = new AtomicLong();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        List<Thread> threads = new ArrayList<>();
        AtomicLong seq = new AtomicLong();
        for (SyncTestClient c : clients) {
            Thread t = new Thread(() -> {
                while (System.nanoTime() < end) {
                    c.upsert(
                            "todos",
                            Map.of(
                                    "id",
                                    c.clientId + "-" + seq.incrementAndGet(),
                                    "list_id",
                                    "rounds",
                                    "title",
                                    "t",
                                    "done",
                                    false,
                                    "position",
                                    1L,
                                    "updated_at_ms",
                                    1L),
                            null);
                    c.sync();
                    rounds.incrementAndGet();
                }
            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        return rounds.get() / (double) seconds;
    }

    static double mb(long bytes) {
        return bytes / 1048576.0;
    }
}
