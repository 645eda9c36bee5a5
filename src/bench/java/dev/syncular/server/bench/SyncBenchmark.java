package dev.syncular.server.bench;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRef;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/**
 * End-to-end sync benchmark against a running, packaged server over HTTP (not part of the test suite). Run
 * with {@code bench/sync.sh}, which packages the app, starts it on PostgreSQL in a fresh storage schema, runs
 * this class and stops the server.
 *
 * <p>Usage: {@code SyncBenchmark <baseUrl> <serverPid> <schemaPath>}. Phases:
 * <ol>
 * <li><b>Rounds</b>: {@code bench.clients} (20) threads, each its own clientId and actor in one partition,
 * all subscribed to the same scope; a round is one combined request pushing a one-operation commit (a
 * small {@code notes} upsert) and pulling the subscription (so each round also receives the other clients'
 * commits). Warm-up {@code bench.warmupSec} (45 s: the server's JIT still spends a quarter of its CPU
 * compiling 25 s in, so shorter warm-ups measure the compiler), then a measured window of {@code bench.measureSec}
 * (20 s): rounds/s and latency percentiles (HdrHistogram, µs). Every push result must be {@code applied};
 * at the end every replica must converge to the same rows.</li>
 * <li><b>Bootstrap</b>: for each size in {@code bench.bootstrapSizes} (20000,100000) a scope is seeded
 * through the protocol (commits of 500 upserts, the per-request operation cap), then a fresh client
 * bootstraps it to completion over the rows lane ({@code limitSnapshotRows=50000},
 * {@code maxSnapshotPages=50}, inline + external segments), {@code bench.bootstrapRuns} (5) times after
 * {@code bench.bootstrapWarmups} (3) untimed runs (the first bootstrap of a size also pays for the cold
 * table; the JIT compiles the bootstrap path over the first few).</li>
 * <li><b>Server RSS</b>: {@code /proc/<pid>/status} VmRSS is sampled every 100 ms during the run; VmHWM
 * is read at the end. CPU time of the server, of this process and of all {@code postgres} processes is
 * read from {@code /proc} per phase, to show where the 2 cores go.</li>
 * </ol>
 */
public final class SyncBenchmark {
    private static final int CLIENTS = Integer.getInteger("bench.clients", 20);
    private static final int WARMUP_SEC = Integer.getInteger("bench.warmupSec", 45);
    private static final int MEASURE_SEC = Integer.getInteger("bench.measureSec", 20);
    private static final int ROWS_PER_CLIENT = Integer.getInteger("bench.rowsPerClient", 50);
    private static final int BOOTSTRAP_RUNS = Integer.getInteger("bench.bootstrapRuns", 5);
    private static final int BOOTSTRAP_WARMUPS = Integer.getInteger("bench.bootstrapWarmups", 3);
    private static final String BOOTSTRAP_SIZES = System.getProperty("bench.bootstrapSizes", "20000,100000");
    private static final int SEED_BATCH = 500;
    private static final String TABLE = "notes";
    /** The local PostgreSQL postmaster (its backends are its children); 0 = unknown / remote database. */
    private static final long POSTMASTER_PID = Long.getLong("bench.pgPid", 0);

    private SyncBenchmark() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: SyncBenchmark <baseUrl> <serverPid> <schemaPath>");
            System.exit(2);
        }
        String baseUrl = args[0];
        long serverPid = Long.parseLong(args[1]);
        CompiledSchema schema = SchemaLoader.load(Path.of(args[2]));

        RssSampler rss = new RssSampler(serverPid);
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rss-sampler");
            t.setDaemon(true);
            return t;
        });
        sampler.scheduleAtFixedRate(rss, 0, 100, TimeUnit.MILLISECONDS);
        long rssStart = rss.current();
        System.out.printf(Locale.ROOT, "server pid %d, RSS at start %s%n", serverPid, mb(rssStart));

        CpuSnapshot cpu0 = CpuSnapshot.take(serverPid);
        rss.phase("rounds");
        RoundsResult rounds = rounds(schema, baseUrl, serverPid);
        CpuSnapshot cpu1 = CpuSnapshot.take(serverPid);
        long rssAfterRounds = rss.current();
        rss.phase("bootstrap");
        List<BootstrapResult> boots = new ArrayList<>();
        Map<Integer, double[]> seedTimes = new LinkedHashMap<>();
        // Each size lives in its own partition, so the seeds run concurrently (one partition lock each).
        List<Thread> seeders = new ArrayList<>();
        AtomicReference<Throwable> seedFailure = new AtomicReference<>();
        for (int n : bootstrapSizes()) {
            double[] t = new double[1];
            seedTimes.put(n, t);
            Thread th = new Thread(
                    () -> {
                        try {
                            t[0] = seed(schema, baseUrl, n);
                        } catch (Throwable e) {
                            seedFailure.compareAndSet(null, e);
                        }
                    },
                    "seed-" + n);
            th.start();
            seeders.add(th);
        }
        for (Thread th : seeders) {
            th.join();
        }
        if (seedFailure.get() != null) {
            throw new IllegalStateException("seeding failed", seedFailure.get());
        }
        CpuSnapshot cpu2 = CpuSnapshot.take(serverPid);
        for (int n : bootstrapSizes()) {
            boots.add(bootstrap(schema, baseUrl, n));
        }
        CpuSnapshot cpu3 = CpuSnapshot.take(serverPid);
        rss.phase("end");
        sampler.shutdownNow();
        long rssEnd = rss.current();
        long hwm = rss.hwm();

        // ----------------------------------------------------------------------------------------- report
        System.out.println();
        System.out.println("=== Push-pull rounds (" + CLIENTS + " clients, one partition, one shared scope; "
                + WARMUP_SEC + " s warm-up, " + MEASURE_SEC + " s measured) ===");
        Histogram h = rounds.latency;
        System.out.printf(
                Locale.ROOT, "| rounds | rounds/s | p50 ms | p95 ms | p99 ms | p99.9 ms | max ms | mean ms |%n");
        System.out.printf(
                Locale.ROOT,
                "| %,d | %,.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |%n",
                h.getTotalCount(),
                rounds.roundsPerSec,
                ms(h.getValueAtPercentile(50)),
                ms(h.getValueAtPercentile(95)),
                ms(h.getValueAtPercentile(99)),
                ms(h.getValueAtPercentile(99.9)),
                ms(h.getMaxValue()),
                h.getMean() / 1000.0);
        System.out.printf(
                Locale.ROOT,
                "commits delivered to other clients in the window: %,d (%.1f per round); "
                        + "errors: %d; replicas converged: %s (%d rows each)%n",
                rounds.commitsReceived,
                (double) rounds.commitsReceived / Math.max(1, h.getTotalCount()),
                rounds.errors,
                rounds.converged,
                rounds.replicaRows);
        System.out.println(
                "CPU during rounds (incl. warm-up): " + cpu1.minus(cpu0).describe());
        if (rounds.measuredCpu != null) {
            CpuSnapshot mc = rounds.measuredCpu;
            long n = Math.max(1, h.getTotalCount());
            System.out.println("CPU during the measured window: " + mc.describe());
            System.out.printf(
                    Locale.ROOT,
                    "CPU per round (measured window): server %.2f ms, postgres %.2f ms, "
                            + "benchmark clients %.2f ms%n",
                    1000 * mc.server / n,
                    1000 * mc.postgres / n,
                    1000 * mc.bench / n);
        }
        if (rounds.serverThreads != null) {
            long n = Math.max(1, h.getTotalCount());
            StringBuilder sb = new StringBuilder("server CPU per round by thread group (user+system ms):");
            double[] total = new double[2];
            rounds.serverThreads.entrySet().stream()
                    .sorted((a, b) ->
                            Double.compare(b.getValue()[0] + b.getValue()[1], a.getValue()[0] + a.getValue()[1]))
                    .forEach(e -> {
                        total[0] += e.getValue()[0];
                        total[1] += e.getValue()[1];
                        if (e.getValue()[0] + e.getValue()[1] > 0) {
                            sb.append(String.format(
                                    Locale.ROOT,
                                    " %s %.2f+%.2f;",
                                    e.getKey(),
                                    1000 * e.getValue()[0] / n,
                                    1000 * e.getValue()[1] / n));
                        }
                    });
            sb.append(String.format(
                    Locale.ROOT, " total user %.2f, system %.2f", 1000 * total[0] / n, 1000 * total[1] / n));
            System.out.println(sb);
        }

        System.out.println();
        System.out.println("=== Rows-lane bootstrap (fresh client to completion; limitSnapshotRows=50000, "
                + "maxSnapshotPages=50, inline+external; " + BOOTSTRAP_WARMUPS + " untimed + " + BOOTSTRAP_RUNS
                + " timed runs) ===");
        seedTimes.forEach((n, t) -> System.out.printf(
                Locale.ROOT,
                "seeded %,d rows in %.1f s (%,.0f rows/s pushed, commits of %d upserts; sizes seeded concurrently, one partition each)%n",
                n,
                t[0],
                n / t[0],
                SEED_BATCH));
        System.out.println("CPU during seeding: " + cpu2.minus(cpu1).describe());
        System.out.printf(
                Locale.ROOT,
                "| rows | rows/s best | rows/s median | time best ms | time median ms | bytes (responses + segment downloads) "
                        + "| requests | inline segments | external segments |%n");
        for (BootstrapResult b : boots) {
            System.out.printf(
                    Locale.ROOT,
                    "| %,d | %,.0f | %,.0f | %.0f | %.0f | %,d | %d | %d | %d |%n",
                    b.rows,
                    b.rows / b.bestSec,
                    b.rows / b.medianSec,
                    b.bestSec * 1000,
                    b.medianSec * 1000,
                    b.bytes,
                    b.requests,
                    b.inlineSegments,
                    b.externalSegments);
            System.out.println("  all runs (ms): " + b.allMs);
        }
        System.out.println("CPU during bootstraps: " + cpu3.minus(cpu2).describe());

        System.out.println();
        System.out.println("=== Server memory (/proc/" + serverPid + "/status) ===");
        System.out.printf(
                Locale.ROOT,
                "| at start | peak during rounds | after rounds | peak during seed+bootstrap | at end | VmHWM |%n");
        System.out.printf(
                Locale.ROOT,
                "| %s | %s | %s | %s | %s | %s |%n",
                mb(rssStart),
                mb(rss.peak("rounds")),
                mb(rssAfterRounds),
                mb(rss.peak("bootstrap")),
                mb(rssEnd),
                mb(hwm));

        System.out.println();
        BootstrapResult b20 =
                boots.stream().filter(b -> b.rows == 20_000).findFirst().orElse(null);
        BootstrapResult b100 =
                boots.stream().filter(b -> b.rows == 100_000).findFirst().orElse(null);
        double p99 = ms(h.getValueAtPercentile(99));
        System.out.println("=== Targets ===");
        System.out.printf(
                Locale.ROOT,
                "rounds/s >= 600: %,.0f -> %s%n",
                rounds.roundsPerSec,
                rounds.roundsPerSec >= 600 ? "MET" : "MISSED");
        System.out.printf(Locale.ROOT, "p99 <= 50 ms: %.2f ms -> %s%n", p99, p99 <= 50 ? "MET" : "MISSED");
        for (BootstrapResult b : new BootstrapResult[] {b20, b100}) {
            if (b != null) {
                double best = b.rows / b.bestSec;
                double med = b.rows / b.medianSec;
                System.out.printf(
                        Locale.ROOT,
                        "bootstrap %,d rows >= 250k rows/s: best %,.0f, median %,.0f -> %s%n",
                        b.rows,
                        best,
                        med,
                        med >= 250_000 ? "MET" : best >= 250_000 ? "MET (best only)" : "MISSED");
            }
        }
        System.out.printf(
                Locale.ROOT,
                "server RSS < 400 MB: peak sampled %s, VmHWM %s -> %s%n",
                mb(Math.max(rss.peak("rounds"), rss.peak("bootstrap"))),
                mb(hwm),
                hwm < 400L * 1024 * 1024 ? "MET" : "MISSED");
        if (!rounds.converged || rounds.errors > 0) {
            System.out.println("FAILED: rounds phase had errors or replicas did not converge");
            System.exit(1);
        }
    }

    // ============================================================================================ rounds

    private record RoundsResult(
            Histogram latency,
            double roundsPerSec,
            long commitsReceived,
            long errors,
            boolean converged,
            int replicaRows,
            CpuSnapshot measuredCpu,
            Map<String, double[]> serverThreads) {}

    private static Map<String, Object> noteRow(String id, String project, int n) {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("id", id);
        v.put("project_id", project);
        v.put("title", "note " + n);
        v.put("body", "benchmark body text for row " + id + " (round " + n + ")");
        v.put("priority", (long) (n % 5));
        v.put("done", (n & 1) == 0);
        return v;
    }

    private static RoundsResult rounds(CompiledSchema schema, String baseUrl, long serverPid) throws Exception {
        String scope = "rounds";
        BenchHttpTransport transport = new BenchHttpTransport(baseUrl, "bench-rounds");
        SyncTestClient[] clients = new SyncTestClient[CLIENTS];
        for (int i = 0; i < CLIENTS; i++) {
            clients[i] = new SyncTestClient(schema, transport, "actor-" + i, "rounds-client-" + i);
            clients[i].subscribe("s1", TABLE, Map.of("project_id", List.of(scope)));
            clients[i].syncUntilIdle(); // log epoch + (empty) bootstrap
        }
        long start = System.nanoTime() + 50_000_000L;
        long measureFrom = start + WARMUP_SEC * 1_000_000_000L;
        long measureTo = measureFrom + MEASURE_SEC * 1_000_000_000L;
        Histogram[] hist = new Histogram[CLIENTS];
        LongAdder received = new LongAdder();
        LongAdder errors = new LongAdder();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(CLIENTS);
        // CPU of the server / PostgreSQL / this process over exactly the measured window (no JIT warm-up).
        AtomicReference<CpuSnapshot> measuredCpu = new AtomicReference<>();
        AtomicReference<Map<String, double[]>> serverThreads = new AtomicReference<>();
        // Two snapshots fired by a scheduler at the window's edges; the rounds wait on their completion.
        ScheduledExecutorService cpuProbe = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "cpu-probe");
            t.setDaemon(true);
            return t;
        });
        CompletableFuture<Object[]> cpuFrom = new CompletableFuture<>();
        CompletableFuture<Void> cpuDone = new CompletableFuture<>();
        cpuProbe.schedule(
                () -> cpuFrom.complete(new Object[] {CpuSnapshot.take(serverPid), threadTimes(serverPid)}),
                measureFrom - System.nanoTime(),
                TimeUnit.NANOSECONDS);
        cpuProbe.schedule(
                () -> {
                    try {
                        Object[] from = cpuFrom.join();
                        measuredCpu.set(CpuSnapshot.take(serverPid).minus((CpuSnapshot) from[0]));
                        @SuppressWarnings("unchecked")
                        Map<Long, Object[]> threadsFrom = (Map<Long, Object[]>) from[1];
                        serverThreads.set(threadGroups(threadsFrom, threadTimes(serverPid)));
                        cpuDone.complete(null);
                    } catch (RuntimeException e) {
                        cpuDone.completeExceptionally(e);
                    }
                },
                measureTo - System.nanoTime(),
                TimeUnit.NANOSECONDS);
        Thread[] threads = new Thread[CLIENTS];
        for (int i = 0; i < CLIENTS; i++) {
            int idx = i;
            hist[i] = new Histogram(60_000_000L, 3);
            threads[i] = new Thread(
                    () -> {
                        SyncTestClient c = clients[idx];
                        int n = 0;
                        try {
                            while (System.nanoTime() < start) {
                                Thread.onSpinWait();
                            }
                            while (true) {
                                long t0 = System.nanoTime();
                                if (t0 >= measureTo) {
                                    break;
                                }
                                String id = "c" + idx + "-r" + (n % ROWS_PER_CLIENT);
                                String commitId = c.upsert(TABLE, noteRow(id, scope, n), null);
                                n++;
                                Message m = c.sync();
                                long t1 = System.nanoTime();
                                PushResult r = c.result(commitId);
                                if (!SyncTestClient.applied(r)) {
                                    errors.increment();
                                    c.outbox.clear();
                                }
                                if (t0 >= measureFrom) {
                                    hist[idx].recordValue(Math.max(1, (t1 - t0) / 1000));
                                    for (Frame f : m.frames()) {
                                        if (f instanceof CommitFrame) {
                                            received.increment();
                                        }
                                    }
                                }
                            }
                        } catch (Throwable t) {
                            failure.compareAndSet(null, t);
                        } finally {
                            done.countDown();
                        }
                    },
                    "round-client-" + i);
            threads[i].start();
        }
        done.await();
        cpuDone.join();
        cpuProbe.shutdownNow();
        if (failure.get() != null) {
            throw new IllegalStateException("a round client failed", failure.get());
        }
        Histogram all = new Histogram(60_000_000L, 3);
        for (Histogram x : hist) {
            all.add(x);
        }
        double perSec = all.getTotalCount() / (MEASURE_SEC * 1.0);
        // Convergence: every replica ends with the same rows at the same versions.
        boolean converged = true;
        int rows = -1;
        Map<String, SyncTestClient.LocalRow> reference = null;
        for (SyncTestClient c : clients) {
            c.syncUntilIdle();
            Map<String, SyncTestClient.LocalRow> t = c.table(TABLE);
            if (reference == null) {
                reference = t;
                rows = t.size();
            } else if (!sameVersions(reference, t)) {
                converged = false;
            }
        }
        int expected = CLIENTS * ROWS_PER_CLIENT;
        if (rows != expected && rows != -1) {
            // fewer rounds than ROWS_PER_CLIENT per client is possible only on very short runs
            converged &= rows <= expected;
        }
        return new RoundsResult(
                all, perSec, received.sum(), errors.sum(), converged, rows, measuredCpu.get(), serverThreads.get());
    }

    /** Per thread of {@code pid}: {name, user seconds, system seconds}. */
    private static Map<Long, Object[]> threadTimes(long pid) {
        Map<Long, Object[]> out = new LinkedHashMap<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : ds) {
                String stat = ProcStats.read(t.resolve("stat"));
                if (stat == null) {
                    continue; // thread went away
                }
                String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                String[] f = ProcStats.fields(stat);
                out.put(
                        Long.parseLong(t.getFileName().toString()),
                        new Object[] {name, ProcStats.ticks(f[11]), ProcStats.ticks(f[12])});
            }
        } catch (IOException e) {
            // process went away
        }
        return out;
    }

    /** CPU seconds {user, system} per thread group (name with digits folded) between two samples. */
    private static Map<String, double[]> threadGroups(Map<Long, Object[]> from, Map<Long, Object[]> to) {
        Map<String, double[]> out = new TreeMap<>();
        to.forEach((tid, now) -> {
            Object[] before = from.get(tid);
            double u = (double) now[1] - (before == null ? 0 : (double) before[1]);
            double sy = (double) now[2] - (before == null ? 0 : (double) before[2]);
            double[] acc = out.computeIfAbsent(((String) now[0]).replaceAll("[0-9]+", "#"), k -> new double[2]);
            acc[0] += u;
            acc[1] += sy;
        });
        return out;
    }

    private static boolean sameVersions(
            Map<String, SyncTestClient.LocalRow> a, Map<String, SyncTestClient.LocalRow> b) {
        if (!a.keySet().equals(b.keySet())) {
            return false;
        }
        for (Map.Entry<String, SyncTestClient.LocalRow> e : a.entrySet()) {
            SyncTestClient.LocalRow o = b.get(e.getKey());
            if (o.version() != e.getValue().version()
                    || !Arrays.equals(o.values(), e.getValue().values())) {
                return false;
            }
        }
        return true;
    }

    // ========================================================================================= bootstrap

    private static int[] bootstrapSizes() {
        return Arrays.stream(BOOTSTRAP_SIZES.split(","))
                .map(String::trim)
                .filter(x -> !x.isEmpty())
                .mapToInt(Integer::parseInt)
                .toArray();
    }

    private static String bootPartition(int n) {
        return "bench-boot-" + n;
    }

    private static String bootScope(int n) {
        return "boot-" + n;
    }

    /** Seeds {@code n} rows into scope {@code boot-n} through the protocol; returns seconds taken. */
    private static double seed(CompiledSchema schema, String baseUrl, int n) {
        String scope = bootScope(n);
        SyncTestClient seeder =
                new SyncTestClient(schema, new BenchHttpTransport(baseUrl, bootPartition(n)), "seeder", "seeder-" + n);
        seeder.syncUntilIdle(); // log epoch
        long t0 = System.nanoTime();
        for (int from = 0; from < n; from += SEED_BATCH) {
            List<PushOperation> ops = new ArrayList<>(SEED_BATCH);
            for (int i = from; i < Math.min(n, from + SEED_BATCH); i++) {
                ops.add(seeder.upsertOp(
                        TABLE, noteRow(String.format(Locale.ROOT, "%s-%07d", scope, i), scope, i), null));
            }
            String id = seeder.commit(ops);
            seeder.sync();
            if (!SyncTestClient.applied(seeder.result(id))) {
                throw new IllegalStateException("seed commit not applied: " + seeder.result(id));
            }
        }
        double sec = (System.nanoTime() - t0) / 1e9;
        System.out.printf(Locale.ROOT, "seeded %,d rows in %.1f s%n", n, sec);
        return sec;
    }

    private record BootstrapResult(
            int rows,
            double bestSec,
            double medianSec,
            long bytes,
            int requests,
            int inlineSegments,
            int externalSegments,
            String allMs) {}

    /** Counts bytes and requests of one client. */
    private static final class CountingTransport implements SyncTestClient.Transport {
        private final SyncTestClient.Transport delegate;
        long bytesIn;
        long bytesOut;
        int requests;
        int downloads;

        CountingTransport(SyncTestClient.Transport delegate) {
            this.delegate = delegate;
        }

        @Override
        public byte[] roundTrip(SyncTestClient client, byte[] request) {
            bytesOut += request.length;
            requests++;
            byte[] r = delegate.roundTrip(client, request);
            bytesIn += r.length;
            return r;
        }

        @Override
        public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
            downloads++;
            byte[] r = delegate.downloadSegment(client, segmentId, scopesHeader);
            bytesIn += r.length;
            return r;
        }
    }

    private static BootstrapResult bootstrap(CompiledSchema schema, String baseUrl, int n) {
        String scope = bootScope(n);
        BenchHttpTransport http = new BenchHttpTransport(baseUrl, bootPartition(n));
        double[] secs = new double[BOOTSTRAP_RUNS];
        long bytes = 0;
        int requests = 0;
        int inline = 0;
        int external = 0;
        for (int run = -BOOTSTRAP_WARMUPS; run < BOOTSTRAP_RUNS; run++) { // runs < 0: untimed warm-ups
            CountingTransport counting = new CountingTransport(http);
            SyncTestClient c = new SyncTestClient(
                    schema, counting, "reader-" + n, "boot-" + n + "-run" + run + "-" + System.nanoTime());
            c.limitSnapshotRows = 50_000;
            c.maxSnapshotPages = 50;
            c.subscribe("s1", TABLE, Map.of("project_id", List.of(scope)));
            int inl = 0;
            int ext = 0;
            long t0 = System.nanoTime();
            for (int i = 0; ; i++) {
                if (i > 200) {
                    throw new IllegalStateException("bootstrap did not finish");
                }
                Message m = c.sync();
                boolean progress = false;
                for (Frame f : m.frames()) {
                    if (f instanceof SegmentInline) {
                        inl++;
                        progress = true;
                    } else if (f instanceof SegmentRef) {
                        ext++;
                        progress = true;
                    } else if (f instanceof CommitFrame || f instanceof RespHeader h && h.resetRequired()) {
                        progress = true;
                    }
                }
                boolean bootstrapping = c.subscriptions.values().stream().anyMatch(s -> s.bootstrapState != null);
                if (!bootstrapping && c.subscriptions.get("s1").cursor >= 0 && !progress) {
                    break;
                }
                if (!bootstrapping
                        && c.subscriptions.get("s1").cursor >= 0
                        && c.table(TABLE).size() == n) {
                    break; // complete: every row received and the subscription is live
                }
            }
            double sec = (System.nanoTime() - t0) / 1e9;
            int got = c.table(TABLE).size();
            if (got != n) {
                throw new IllegalStateException("bootstrap of " + n + " rows delivered " + got);
            }
            if (run >= 0) {
                secs[run] = sec;
                bytes = counting.bytesIn;
                requests = counting.requests;
                inline = inl;
                external = ext;
            }
            System.out.printf(
                    Locale.ROOT,
                    "bootstrap %,d rows run %d: %.0f ms (%,.0f rows/s), %d requests, %,d bytes in%n",
                    n,
                    run,
                    sec * 1000,
                    n / sec,
                    counting.requests,
                    counting.bytesIn);
        }
        double[] sorted = secs.clone();
        Arrays.sort(sorted);
        double median = sorted.length % 2 == 1
                ? sorted[sorted.length / 2]
                : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
        StringBuilder all = new StringBuilder();
        for (double s : secs) {
            all.append(all.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.0f", s * 1000));
        }
        return new BootstrapResult(n, sorted[0], median, bytes, requests, inline, external, all.toString());
    }

    // ======================================================================================== /proc sampling

    private static final class RssSampler implements Runnable {
        private final long pid;
        private final Map<String, AtomicLong> peaks = new LinkedHashMap<>();
        private volatile AtomicLong currentPeak = new AtomicLong();

        RssSampler(long pid) {
            this.pid = pid;
        }

        synchronized void phase(String name) {
            AtomicLong p = new AtomicLong(current());
            peaks.put(name, p);
            currentPeak = p;
        }

        synchronized long peak(String name) {
            AtomicLong p = peaks.get(name);
            return p == null ? 0 : p.get();
        }

        long current() {
            return ProcStats.statusBytes(pid, "VmRSS:");
        }

        long hwm() {
            return ProcStats.statusBytes(pid, "VmHWM:");
        }

        /** One sample; scheduled every 100 ms by a scheduled executor. */
        @Override
        public void run() {
            currentPeak.accumulateAndGet(current(), Math::max);
        }
    }

    /** CPU seconds (user+system) of the server, this benchmark process and all postgres processes. */
    private record CpuSnapshot(
            long wallNanos, double server, double bench, double postgres, Map<Long, Double> pgByPid) {
        static CpuSnapshot take(long serverPid) {
            double pg = 0;
            Map<Long, Double> byPid = new HashMap<>();
            Map<Long, String> postgres = ProcStats.postgresStats(POSTMASTER_PID);
            if (postgres == null) {
                pg = Double.NaN;
            } else {
                for (Map.Entry<Long, String> e : postgres.entrySet()) {
                    double c = ProcStats.cpuSeconds(e.getValue());
                    pg += c;
                    byPid.put(e.getKey(), c);
                }
            }
            return new CpuSnapshot(
                    System.nanoTime(),
                    ProcStats.cpuSeconds(ProcStats.read(Path.of("/proc/" + serverPid + "/stat"))),
                    ProcStats.cpuSeconds(ProcStats.read(Path.of("/proc/self/stat"))),
                    pg,
                    byPid);
        }

        /**
         * PostgreSQL: per process alive at the end (earlier backends that exited meanwhile — other sessions on
         * a shared machine — would otherwise make the difference negative).
         */
        CpuSnapshot minus(CpuSnapshot o) {
            double pg = 0;
            for (Map.Entry<Long, Double> e : pgByPid.entrySet()) {
                pg += e.getValue() - o.pgByPid.getOrDefault(e.getKey(), 0.0);
            }
            return new CpuSnapshot(wallNanos - o.wallNanos, server - o.server, bench - o.bench, pg, Map.of());
        }

        String describe() {
            double wall = wallNanos / 1e9;
            int cores = Runtime.getRuntime().availableProcessors();
            return String.format(
                    Locale.ROOT,
                    "%.1f s wall × %d cores; server %.1f s (%.0f%% of one core), postgres %.1f s (%.0f%%), "
                            + "benchmark clients %.1f s (%.0f%%); total %.0f%% of the machine",
                    wall,
                    cores,
                    server,
                    100 * server / wall,
                    postgres,
                    100 * postgres / wall,
                    bench,
                    100 * bench / wall,
                    100 * (server + postgres + bench) / (wall * cores));
        }
    }

    private static String mb(long bytes) {
        return bytes < 0 ? "n/a" : String.format(Locale.ROOT, "%.0f MB", bytes / 1048576.0);
    }

    private static double ms(long micros) {
        return micros / 1000.0;
    }
}
