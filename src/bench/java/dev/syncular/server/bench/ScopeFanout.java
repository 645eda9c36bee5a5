package dev.syncular.server.bench;

import dev.syncular.server.bench.RealtimeBenchmark.Delta;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.SyncTestClient;
import io.vertx.core.http.WebSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;

/**
 * Phase (e) of {@link RealtimeBenchmark}: one commit fanned out to {@code bench.scopeSockets} (10,000) sockets of
 * one scope on one pod. Every socket's client subscribes {@code todos} of the same list and syncs to the head
 * over HTTP (that registers its subscription), then opens its socket ({@link SpreadSockets}). A writer then
 * pushes {@code bench.scopeWarmupCommits} (3) one-row commits, delivered but not measured, and {@code
 * bench.scopeCommits} (10) measured ones, one every {@code bench.scopeCommitMs} (500 ms). Each socket records when
 * the delta carrying each commit's row arrived, from the moment the writer sent the push (an upper bound of
 * commit-to-delta, as in (b)), and acknowledges every delta (§8.2). Per commit: the first socket, p50, p99 and the
 * last (the commit fully delivered); the push's answer; the sockets without its delta: woken (a text {@code sync}
 * event, §8.3) first while it was the newest commit, woken before (a woken socket gets no delta until its client
 * pulls, which these do not), or with nothing at all. Overall: the same over every delivery, the pod's CPU from
 * the first measured push to the last delivery, the load generator's CPU over the same time, the pod's RSS and
 * its nonzero realtime counters.
 */
final class ScopeFanout {
    static final int SOCKETS = Integer.getInteger("bench.scopeSockets", 10_000);
    private static final int COMMITS = Integer.getInteger("bench.scopeCommits", 10);
    private static final int WARMUP_COMMITS = Integer.getInteger("bench.scopeWarmupCommits", 3);
    private static final int PERIOD_MS = Integer.getInteger("bench.scopeCommitMs", 500);
    /** Threads registering the clients over HTTP before the sockets open. */
    private static final int REGISTER_THREADS = 4;
    /** How long after the last push the phase waits for missing deliveries. */
    private static final long DRAIN_SEC = 30;

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final Pattern RETRY_AFTER = Pattern.compile("\"retryAfterMs\":(\\d+)");

    private ScopeFanout() {}

    /** The sockets' shared record: arrival times per measured commit and socket, wake-ups per commit. */
    private static final class Arrivals implements SpreadSockets.Listener {
        /** {@code [commit]} → nanoTime of the arrival on socket {@code i} (0: none yet). */
        final AtomicLongArray[] at = new AtomicLongArray[COMMITS];

        /** Wake-ups before the first measured commit (during the warm-up commits). */
        final LongAdder warmupWakes = new LongAdder();
        /**
         * Per socket, the commit its first wake-up was counted against ({@code -1}: a warm-up commit; {@link
         * Integer#MAX_VALUE}: none): a woken socket gets no delta until its client pulls, which these do not.
         */
        final AtomicIntegerArray firstWake = new AtomicIntegerArray(SOCKETS);
        /** One permit per first arrival of a measured commit on a socket: what the drain waits on. */
        final Semaphore arrived = new Semaphore(0);

        final CountDownLatch hellos = new CountDownLatch(SOCKETS);
        /** The newest measured commit pushed (-1 before the first): the one a wake-up is counted against. */
        final AtomicInteger newest = new AtomicInteger(-1);
        /** The same delta bytes reach every socket: read once ({@code Delta.of}) per distinct message. */
        final Map<ByteBuffer, Delta> decoded = new ConcurrentHashMap<>();

        Arrivals() {
            for (int k = 0; k < COMMITS; k++) {
                at[k] = new AtomicLongArray(SOCKETS);
            }
            for (int i = 0; i < SOCKETS; i++) {
                firstWake.set(i, Integer.MAX_VALUE);
            }
        }

        @Override
        public void text(int index, WebSocket socket, String text) {
            if (text.contains("\"hello\"")) {
                hellos.countDown();
            } else if (text.contains("\"sync\"")) {
                int k = newest.get();
                if (k < 0) {
                    warmupWakes.increment();
                }
                firstWake.accumulateAndGet(index, k, Math::min);
            }
        }

        @Override
        public void binary(int index, WebSocket socket, byte[] message, long nanos) {
            ByteBuffer key = ByteBuffer.wrap(message);
            Delta delta = decoded.get(key);
            if (delta == null) {
                delta = Delta.of(message);
                if (delta == null) {
                    return;
                }
                if (decoded.size() > 10_000) {
                    decoded.clear();
                }
                decoded.put(key, delta);
            }
            for (String row : delta.rowIds()) {
                if (row.startsWith("e") && at[Integer.parseInt(row.substring(1))].compareAndSet(index, 0, nanos)) {
                    arrived.release();
                }
            }
            if (delta.cursor() >= 0) {
                socket.writeTextMessage(delta.ack());
            }
        }
    }

    static void run(ServerProcess pod, CompiledSchema schema) throws Exception {
        String partition = "scope-" + UUID.randomUUID();
        String run = UUID.randomUUID().toString().substring(0, 8);
        HttpTransport http = new HttpTransport(pod.baseUrl(), partition);
        long t0 = System.nanoTime();
        register(schema, http, run);
        double registerSec = (System.nanoTime() - t0) / 1e9;
        Arrivals arrivals = new Arrivals();
        t0 = System.nanoTime();
        try (SpreadSockets sockets = SpreadSockets.open(
                pod.baseUrl(),
                partition,
                SOCKETS,
                i -> "reader-" + i,
                i -> clientId(run, i),
                arrivals,
                RealtimeBenchmark.POD_SOCKET_BUDGET)) {
            // every admitted socket's hello: the latch counts down to the refused upgrades
            long helloDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (arrivals.hellos.getCount() > sockets.refused.get()) {
                if (System.nanoTime() > helloDeadline) {
                    throw new IllegalStateException(
                            "hellos missing: " + (arrivals.hellos.getCount() - sockets.refused.get()));
                }
                arrivals.hellos.await(100, TimeUnit.MILLISECONDS);
            }
            double connectSec = (System.nanoTime() - t0) / 1e9;
            System.out.printf(
                    Locale.ROOT,
                    "(e) %d clients of one scope registered over HTTP in %.1f s; sockets from %s: %d open with hello,"
                            + " %d upgrades refused 429 (socket budget), in %.1f s; RSS %.0f MB%n",
                    SOCKETS,
                    registerSec,
                    sockets.addressRange(),
                    SOCKETS - sockets.refused.get(),
                    sockets.refused.get(),
                    connectSec,
                    RealtimeBenchmark.mb(pod.rssBytes()));
            SyncTestClient writer = new SyncTestClient(schema, http, "writer", "writer-" + UUID.randomUUID());
            writer.syncUntilIdle();
            long[] sent = new long[COMMITS];
            long[] answered = new long[COMMITS];
            int[] refused = new int[COMMITS];
            double cpu0 = 0;
            double selfCpu0 = 0;
            long start = 0;
            long paceStart = System.nanoTime();
            for (int k = -WARMUP_COMMITS; k < COMMITS; k++) {
                long due = paceStart + TimeUnit.MILLISECONDS.toNanos((long) (k + WARMUP_COMMITS) * PERIOD_MS);
                while (System.nanoTime() < due) {
                    Thread.onSpinWait(); // the writer's pace (a benchmark, not a test)
                }
                if (k == 0) {
                    cpu0 = ProcStats.processCpuSeconds(pod.pid());
                    selfCpu0 =
                            ProcStats.processCpuSeconds(ProcessHandle.current().pid());
                    start = System.nanoTime();
                }
                if (k >= 0) {
                    sent[k] = System.nanoTime();
                    arrivals.newest.set(k);
                }
                writer.upsert("todos", row(k < 0 ? "warm" + -k : "e" + k), null);
                int refusals = push(writer);
                if (k >= 0) {
                    answered[k] = System.nanoTime();
                    refused[k] = refusals;
                }
            }
            boolean complete = arrivals.arrived.tryAcquire(
                    (int) Math.min((long) COMMITS * SOCKETS, Integer.MAX_VALUE), DRAIN_SEC, TimeUnit.SECONDS);
            long end = System.nanoTime();
            if (complete) {
                long last = 0;
                for (AtomicLongArray a : arrivals.at) {
                    for (int i = 0; i < SOCKETS; i++) {
                        last = Math.max(last, a.get(i));
                    }
                }
                end = last;
            }
            double wallSec = (end - start) / 1e9;
            double cpu = ProcStats.processCpuSeconds(pod.pid()) - cpu0;
            double selfCpu = ProcStats.processCpuSeconds(ProcessHandle.current().pid()) - selfCpu0;
            report(
                    arrivals,
                    sent,
                    answered,
                    refused,
                    wallSec,
                    cpu,
                    selfCpu,
                    pod,
                    sockets.closed.get(),
                    sockets.refused.get());
            System.out.println("(e) pod counters: " + realtimeCounters(pod));
        }
    }

    /**
     * The writer's round, sent again after the {@code retryAfterMs} of a 429 (§10 {@code sync.rate_limited}: a
     * pool's wait queue filled by the sockets' acknowledgements, say), as a client does; the 429s it got.
     */
    private static int push(SyncTestClient writer) throws InterruptedException {
        for (int refusals = 0; ; refusals++) {
            try {
                writer.sync();
                return refusals;
            } catch (HttpFailure e) {
                if (e.status != 429 || refusals >= 30) {
                    throw e;
                }
                Matcher m = RETRY_AFTER.matcher(e.body);
                TimeUnit.MILLISECONDS.sleep(m.find() ? Long.parseLong(m.group(1)) : 1000); // a benchmark, not a test
            }
        }
    }

    /** Every client subscribes the one scope and syncs to the head over HTTP, {@link #REGISTER_THREADS} at once. */
    private static void register(CompiledSchema schema, HttpTransport http, String run) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(REGISTER_THREADS);
        AtomicInteger next = new AtomicInteger();
        try {
            Future<?>[] workers = new Future<?>[REGISTER_THREADS];
            for (int t = 0; t < REGISTER_THREADS; t++) {
                workers[t] = pool.submit(() -> {
                    for (int i = next.getAndIncrement(); i < SOCKETS; i = next.getAndIncrement()) {
                        SyncTestClient c = new SyncTestClient(schema, http, "reader-" + i, clientId(run, i));
                        c.subscribe("s1", "todos", Map.of("list_id", List.of("one-scope")));
                        c.syncUntilIdle();
                    }
                    return null;
                });
            }
            for (Future<?> w : workers) {
                w.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static String clientId(String run, int i) {
        return "scope-" + run + "-" + i;
    }

    private static Map<String, Object> row(String id) {
        return Map.of(
                "id", id, "list_id", "one-scope", "title", "t", "done", false, "position", 1L, "updated_at_ms", 1L);
    }

    private static void report(
            Arrivals arrivals,
            long[] sent,
            long[] answered,
            int[] refused,
            double wallSec,
            double cpu,
            double selfCpu,
            ServerProcess pod,
            int closed,
            int refusedSockets) {
        Histogram all = new Histogram(60_000_000L, 3);
        double[] lasts = new double[COMMITS];
        long delivered = 0;
        long wakes = 0;
        long wokenBefore = 0;
        long nothing = 0;
        for (int k = 0; k < COMMITS; k++) {
            long[] us = new long[SOCKETS];
            int n = 0;
            long w = 0;
            long before = 0;
            for (int i = 0; i < SOCKETS; i++) {
                long t = arrivals.at[k].get(i);
                int woken = arrivals.firstWake.get(i);
                if (t != 0) {
                    us[n++] = Math.max(0, (t - sent[k]) / 1000);
                } else if (woken == k) {
                    w++;
                } else if (woken < k) {
                    before++;
                }
            }
            Arrays.sort(us, 0, n);
            long none = SOCKETS - refusedSockets - n - w - before;
            delivered += n;
            wakes += w;
            wokenBefore += before;
            nothing += none;
            for (int j = 0; j < n; j++) {
                all.recordValue(us[j]);
            }
            lasts[k] = n == 0 ? Double.NaN : us[n - 1] / 1000.0;
            System.out.printf(
                    Locale.ROOT,
                    "(e) commit %d: push answered in %.1f ms (%d refused first); %d deltas, %d woken instead, %d woken before (no delta"
                            + " until a pull), %d nothing; first %.1f ms, p50 %.1f ms, p99 %.1f ms, last %.1f ms%n",
                    k,
                    (answered[k] - sent[k]) / 1e6,
                    refused[k],
                    n,
                    w,
                    before,
                    none,
                    n == 0 ? Double.NaN : us[0] / 1000.0,
                    n == 0 ? Double.NaN : us[(int) Math.min(n - 1, Math.ceil(n * 0.50) - 1)] / 1000.0,
                    n == 0 ? Double.NaN : us[(int) Math.min(n - 1, Math.ceil(n * 0.99) - 1)] / 1000.0,
                    lasts[k]);
        }
        double[] sortedLasts = lasts.clone();
        Arrays.sort(sortedLasts);
        System.out.printf(
                Locale.ROOT,
                "(e) one commit to %d sockets of one scope on one pod, %d commits every %d ms: deltas %d of %d,"
                        + " woken instead %d, woken before %d, nothing %d (wake-ups during the warm-up commits %d);"
                        + " push-to-delta over every delivery first %.1f ms, p50 %.1f ms,"
                        + " p99 %.1f ms, max %.1f ms; last socket (commit fully delivered) median %.1f ms,"
                        + " worst %.1f ms; pod CPU %.2f s in %.1f s (%.2f cores, %.0f ms a commit),"
                        + " load generator CPU %.2f s; RSS %.0f MB, peak %.0f MB; %d sockets closed by the server%n",
                SOCKETS - refusedSockets,
                COMMITS,
                PERIOD_MS,
                delivered,
                (long) COMMITS * (SOCKETS - refusedSockets),
                wakes,
                wokenBefore,
                nothing,
                arrivals.warmupWakes.sum(),
                all.getMinValue() / 1000.0,
                all.getValueAtPercentile(50) / 1000.0,
                all.getValueAtPercentile(99) / 1000.0,
                all.getMaxValue() / 1000.0,
                sortedLasts[COMMITS / 2],
                sortedLasts[COMMITS - 1],
                cpu,
                wallSec,
                cpu / wallSec,
                cpu * 1000 / COMMITS,
                selfCpu,
                RealtimeBenchmark.mb(pod.rssBytes()),
                RealtimeBenchmark.mb(pod.peakRssBytes()),
                closed);
    }

    /**
     * The pod's nonzero realtime counters ({@code syncular_realtime_*_total} of {@code /q/metrics}: deltas,
     * wake-ups by reason, errors by kind, refusals), in one line.
     */
    static String realtimeCounters(ServerProcess pod) {
        try {
            String metrics = HTTP.send(
                            HttpRequest.newBuilder(
                                            URI.create("http://127.0.0.1:" + pod.managementPort() + "/q/metrics"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
            StringBuilder out = new StringBuilder();
            for (String line : metrics.split("\n")) {
                if (line.startsWith("syncular_realtime_") && line.contains("_total")) {
                    String value = line.substring(line.lastIndexOf(' ') + 1);
                    if (Double.parseDouble(value) != 0) {
                        out.append(out.length() == 0 ? "" : ", ")
                                .append(line, 0, line.lastIndexOf(' '))
                                .append(' ')
                                .append(String.format(Locale.ROOT, "%.0f", Double.parseDouble(value)));
                    }
                }
            }
            return out.length() == 0 ? "none" : out.toString();
        } catch (Exception e) {
            return "unreadable (" + e + ")";
        }
    }
}
