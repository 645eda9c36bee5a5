package dev.syncular.server.bench;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/**
 * Many tenants on one PostgreSQL (docs/BENCHMARKS.md, "Many partitions"). Not a test: {@code bench/tenants.sh}.
 *
 * <p>For each partition count of {@code bench.partitions} (1, 10, 100, 1000), two phases against packaged pods with
 * the chart's JVM flags sharing one database:
 * <ul>
 * <li><b>(a) rounds</b>: {@code bench.clients} (20) threads; the clients are spread over the partitions (at least
 * one per partition, client {@code i} in partition {@code i mod P}), each thread cycles over its own clients, and
 * every round pushes one upsert and pulls the client's subscription. Rounds/s, p50/p99, and per round: PostgreSQL
 * CPU (the postmaster's children), transactions ({@code pg_stat_database}) and statements
 * ({@code pg_stat_statements}, when that extension is installed in the database).</li>
 * <li><b>(b) commit-to-delta across pods</b>: one realtime socket per partition on pod B, a writer on pod A
 * committing {@code bench.commitsPerSec} (100) commits/s round-robin over the partitions; push-to-delta p50/p99
 * and the deliveries counted.</li>
 * </ul>
 */
public final class TenantsBenchmark {
    private static final String PARTITIONS = System.getProperty("bench.partitions", "1,10,100,1000");
    private static final int THREADS = Integer.getInteger("bench.clients", 20);
    private static final int WARMUP_SEC = Integer.getInteger("bench.warmupSec", 15);
    private static final int MEASURE_SEC = Integer.getInteger("bench.measureSec", 20);
    private static final int RATE = Integer.getInteger("bench.commitsPerSec", 100);
    private static final int FANOUT_SEC = Integer.getInteger("bench.fanoutSec", 20);
    private static final int FANOUT_WARMUP_SEC = Integer.getInteger("bench.fanoutWarmupSec", 5);
    private static final String PHASES = System.getProperty("bench.phases", "ab");
    private static final long POSTMASTER_PID = Long.getLong("bench.pgPid", 0);
    private static final String TABLE = "todos";
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private static CompiledSchema schema;
    private static Pool stats;

    private TenantsBenchmark() {}

    record RoundFigures(
            int partitions,
            int clients,
            double perSec,
            double p50,
            double p99,
            double pgCpuMs,
            double xacts,
            double statements,
            double rows,
            double buffers,
            double walBytes,
            double serverCpuMs,
            double benchCpuMs,
            long errors) {}

    public static void main(String[] args) throws Exception {
        schema = SchemaLoader.parse(Files.readString(ServerProcess.BUNDLED_SCHEMA));
        int[] counts = Arrays.stream(PARTITIONS.split(","))
                .map(String::trim)
                .filter(s -> !s.isEmpty())
                .mapToInt(Integer::parseInt)
                .toArray();
        String pgSchema =
                "bench_tn_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        System.out.printf(
                Locale.ROOT,
                "== tenants benchmark, storage schema %s, server flags %s%n",
                pgSchema,
                String.join(" ", ServerProcess.CHART_JVM_FLAGS));
        Vertx vertx = Vertx.vertx();
        stats = TestPostgres.pool(vertx, 1);
        List<RoundFigures> rounds = new ArrayList<>();
        List<double[]> fanouts = new ArrayList<>();
        try (ServerProcess a = pod("bench-tenants-a", pgSchema);
                ServerProcess b = PHASES.contains("b") ? pod("bench-tenants-b", pgSchema) : null) {
            for (int p : counts) {
                if (PHASES.contains("a")) {
                    rounds.add(rounds(a, p));
                }
                if (b != null) {
                    fanouts.add(fanout(a, b, p));
                }
            }
        } finally {
            stats.close().await().indefinitely();
            vertx.close().await().indefinitely();
        }
        System.out.println("== summary");
        System.out.println("| partitions | clients | rounds/s | p50 ms | p99 ms | PG CPU ms/round | server CPU ms/round"
                + " | xacts/round"
                + " | statements/round | rows/round | buffers/round | WAL bytes/round"
                + " | commit-to-delta p50 / p99 ms (two pods) |");
        for (int i = 0; i < counts.length; i++) {
            RoundFigures r = i < rounds.size() ? rounds.get(i) : null;
            double[] f = i < fanouts.size() ? fanouts.get(i) : new double[] {Double.NaN, Double.NaN};
            System.out.printf(
                    Locale.ROOT,
                    "| %,d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f / %.1f |%n",
                    counts[i],
                    r == null ? "-" : Integer.toString(r.clients()),
                    r == null ? "-" : fmt("%,.0f", r.perSec()),
                    r == null ? "-" : fmt("%.1f", r.p50()),
                    r == null ? "-" : fmt("%.1f", r.p99()),
                    r == null ? "-" : fmt("%.2f", r.pgCpuMs()),
                    r == null ? "-" : fmt("%.2f", r.serverCpuMs()),
                    r == null ? "-" : fmt("%.1f", r.xacts()),
                    r == null || Double.isNaN(r.statements()) ? "n/a" : fmt("%.1f", r.statements()),
                    r == null || Double.isNaN(r.rows()) ? "n/a" : fmt("%.1f", r.rows()),
                    r == null || Double.isNaN(r.buffers()) ? "n/a" : fmt("%.1f", r.buffers()),
                    r == null ? "-" : fmt("%,.0f", r.walBytes()),
                    f[0],
                    f[1]);
        }
    }

    private static String fmt(String f, double v) {
        return String.format(Locale.ROOT, f, v);
    }

    static ServerProcess pod(String name, String pgSchema) throws Exception {
        return podBuilder(name, pgSchema).start();
    }

    /** A pod of these benchmarks not started yet: the chart's JVM flags, room for 20,000 sync sockets (count and socket budget). */
    static ServerProcess.Builder podBuilder(String name, String pgSchema) {
        return ServerProcess.builder(name, pgSchema)
                .jvmFlags(ServerProcess.CHART_JVM_FLAGS)
                .env("SYNCULAR_REALTIME_MAX_CONNECTIONS", "20000")
                .env("SYNCULAR_REALTIME_SOCKET_BUDGET", "384M"); // 20,000 sockets at 16 KiB and 64 MiB in flight
    }

    private static Map<String, Object> todo(String id, String list, long n) {
        return Map.of(
                "id", id, "list_id", list, "title", "t" + n, "done", (n & 1) == 0, "position", n, "updated_at_ms", n);
    }

    // ------------------------------------------------------------------ (a)

    static RoundFigures rounds(ServerProcess pod, int partitions) throws Exception {
        String run = "tn" + partitions + "-" + UUID.randomUUID().toString().substring(0, 6);
        int clientCount = Math.max(THREADS, partitions);
        SyncTestClient[] clients = new SyncTestClient[clientCount];
        for (int i = 0; i < clientCount; i++) {
            String partition = run + "-p" + (i % partitions);
            clients[i] = new SyncTestClient(
                    schema, new BenchHttpTransport(pod.baseUrl(), partition), "actor-" + i, run + "-c" + i);
            clients[i].subscribe("s1", TABLE, Map.of("list_id", List.of("l0")));
            clients[i].syncUntilIdle();
        }
        long start = System.nanoTime() + 50_000_000L;
        long measureFrom = start + WARMUP_SEC * 1_000_000_000L;
        long measureTo = measureFrom + MEASURE_SEC * 1_000_000_000L;
        Histogram[] hist = new Histogram[THREADS];
        LongAdder errors = new LongAdder();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(THREADS);
        AtomicReference<double[]> from = new AtomicReference<>();
        AtomicReference<double[]> to = new AtomicReference<>();
        ScheduledExecutorService probe = Executors.newSingleThreadScheduledExecutor();
        probe.schedule(() -> from.set(counters(pod)), measureFrom - System.nanoTime(), TimeUnit.NANOSECONDS);
        probe.schedule(() -> to.set(counters(pod)), measureTo - System.nanoTime(), TimeUnit.NANOSECONDS);
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            hist[t] = new Histogram(60_000_000L, 3);
            Thread th = new Thread(
                    () -> {
                        long n = 0;
                        try {
                            while (System.nanoTime() < start) {
                                Thread.onSpinWait();
                            }
                            for (int k = thread; ; k += THREADS) {
                                if (k >= clientCount) {
                                    k = thread;
                                }
                                long t0 = System.nanoTime();
                                if (t0 >= measureTo) {
                                    break;
                                }
                                SyncTestClient c = clients[k];
                                String commitId = c.upsert(TABLE, todo("c" + k + "-r" + (n % 50), "l0", n), null);
                                n++;
                                c.sync();
                                long t1 = System.nanoTime();
                                if (!SyncTestClient.applied(c.result(commitId))) {
                                    errors.increment();
                                    c.outbox.clear();
                                }
                                if (t0 >= measureFrom) {
                                    hist[thread].recordValue(Math.max(1, (t1 - t0) / 1000));
                                }
                            }
                        } catch (Throwable e) {
                            failure.compareAndSet(null, e);
                        } finally {
                            done.countDown();
                        }
                    },
                    "tenant-round-" + t);
            th.start();
        }
        done.await();
        probe.shutdown();
        probe.awaitTermination(30, TimeUnit.SECONDS);
        if (failure.get() != null) {
            throw new IllegalStateException("a round client failed", failure.get());
        }
        Histogram all = new Histogram(60_000_000L, 3);
        for (Histogram h : hist) {
            all.add(h);
        }
        long n = Math.max(1, all.getTotalCount());
        double[] d = new double[8];
        for (int i = 0; i < 8; i++) {
            d[i] = to.get()[i] - from.get()[i];
        }
        RoundFigures r = new RoundFigures(
                partitions,
                clientCount,
                all.getTotalCount() / (double) MEASURE_SEC,
                all.getValueAtPercentile(50) / 1000.0,
                all.getValueAtPercentile(99) / 1000.0,
                1000 * d[0] / n,
                d[1] / n,
                d[2] / n,
                d[3] / n,
                d[4] / n,
                d[5] / n,
                1000 * d[6] / n,
                1000 * d[7] / n,
                errors.sum());
        System.out.printf(
                Locale.ROOT,
                "(a) %,d partitions, %,d clients on %d threads: %,.0f rounds/s, p50 %.1f ms,"
                        + " p99 %.1f ms; per round PostgreSQL CPU %.2f ms, %.1f transactions, %s statements, %s rows,"
                        + " %s buffers, %,.0f WAL bytes; server CPU %.2f ms, load generator CPU %.2f ms; %d not applied%n",
                partitions,
                clientCount,
                THREADS,
                r.perSec(),
                r.p50(),
                r.p99(),
                r.pgCpuMs(),
                r.xacts(),
                Double.isNaN(r.statements()) ? "n/a" : fmt("%.1f", r.statements()),
                Double.isNaN(r.rows()) ? "n/a" : fmt("%.1f", r.rows()),
                Double.isNaN(r.buffers()) ? "n/a" : fmt("%.1f", r.buffers()),
                r.walBytes(),
                r.serverCpuMs(),
                r.benchCpuMs(),
                r.errors());
        return r;
    }

    /**
     * {@link #dbCounters()} followed by the CPU seconds of {@code pod}'s process and of this benchmark's own
     * (the load generator's).
     */
    private static double[] counters(ServerProcess pod) {
        double[] db = dbCounters();
        double[] all = Arrays.copyOf(db, db.length + 2);
        all[db.length] = ProcStats.processCpuSeconds(pod.pid());
        all[db.length + 1] = ProcStats.processCpuSeconds(ProcessHandle.current().pid());
        return all;
    }

    /**
     * {PostgreSQL CPU seconds, committed + rolled back transactions, pg_stat_statements calls, rows and shared
     * buffers (hit + read) or NaN, WAL bytes written}.
     */
    private static double[] dbCounters() {
        double cpu = 0;
        Map<Long, String> procs = ProcStats.postgresStats(POSTMASTER_PID);
        if (procs != null) {
            for (String stat : procs.values()) {
                cpu += ProcStats.cpuSeconds(stat);
            }
        }
        Row x = stats.query("SELECT xact_commit + xact_rollback AS x,"
                        + " pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS wal FROM pg_stat_database"
                        + " WHERE datname = current_database()")
                .execute()
                .await()
                .indefinitely()
                .iterator()
                .next();
        double statements = Double.NaN;
        double rows = Double.NaN;
        double buffers = Double.NaN;
        try {
            Row s = stats.query("SELECT coalesce(sum(calls), 0) AS c, coalesce(sum(rows), 0) AS r,"
                            + " coalesce(sum(shared_blks_hit + shared_blks_read), 0) AS b FROM pg_stat_statements"
                            + " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())")
                    .execute()
                    .await()
                    .indefinitely()
                    .iterator()
                    .next();
            statements = s.getLong("c");
            rows = s.getLong("r");
            buffers = s.getLong("b");
        } catch (RuntimeException e) {
            // the extension is not installed in this database: statements are not counted
        }
        return new double[] {cpu, x.getLong("x"), statements, rows, buffers, x.getLong("wal")};
    }

    // ------------------------------------------------------------------ (b)

    static double[] fanout(ServerProcess writerPod, ServerProcess socketPod, int partitions) throws Exception {
        String run = "tf" + partitions + "-" + UUID.randomUUID().toString().substring(0, 6);
        Map<String, Long> sent = new ConcurrentHashMap<>();
        Histogram latency = new Histogram(60_000_000L, 3);
        LongAdder deliveries = new LongAdder();
        LongAdder wakes = new LongAdder();
        Semaphore arrivals = new Semaphore(0);
        List<WebSocket> sockets = new ArrayList<>();
        SyncTestClient[] writers = new SyncTestClient[partitions];
        String ws = socketPod.baseUrl().replaceFirst("^http", "ws") + "/realtime?clientId=";
        for (int p = 0; p < partitions; p++) {
            String partition = run + "-p" + p;
            SyncTestClient reader = new SyncTestClient(
                    schema, new BenchHttpTransport(socketPod.baseUrl(), partition), "reader", run + "-r" + p);
            reader.subscribe("s1", TABLE, Map.of("list_id", List.of("l0")));
            reader.syncUntilIdle(); // the client record exists before its socket connects
            sockets.add(HTTP.newWebSocketBuilder()
                    .header("x-actor-id", reader.actorId)
                    .header("x-syncular-partition", partition)
                    .buildAsync(
                            URI.create(ws + reader.clientId),
                            new RealtimeBenchmark.TimingSocket(sent, latency, deliveries, wakes, arrivals))
                    .get(60, TimeUnit.SECONDS));
            writers[p] = new SyncTestClient(
                    schema, new BenchHttpTransport(writerPod.baseUrl(), partition), "writer", run + "-w" + p);
            writers[p].syncUntilIdle();
        }
        int commits = RATE * FANOUT_SEC;
        int warmups = RATE * FANOUT_WARMUP_SEC;
        long periodNs = 1_000_000_000L / RATE;
        long paceStart = System.nanoTime();
        long start = paceStart;
        for (int k = -warmups; k < commits; k++) {
            long due = paceStart + (k + warmups) * periodNs;
            while (System.nanoTime() < due) {
                Thread.onSpinWait(); // the writer's pace (a benchmark, not a test)
            }
            String row = (k < 0 ? "warm" + -k : "w" + k) + "-" + run;
            if (k == 0) {
                start = System.nanoTime();
            }
            if (k >= 0) {
                sent.put(row, System.nanoTime());
            }
            SyncTestClient w = writers[Math.floorMod(k, partitions)];
            w.upsert(TABLE, todo(row, "l0", Math.abs(k)), null);
            w.sync();
        }
        double writerSec = (System.nanoTime() - start) / 1e9;
        arrivals.tryAcquire(commits, 30, TimeUnit.SECONDS);
        for (WebSocket w : sockets) {
            w.abort();
        }
        synchronized (latency) {
            double p50 = latency.getValueAtPercentile(50) / 1000.0;
            double p99 = latency.getValueAtPercentile(99) / 1000.0;
            System.out.printf(
                    Locale.ROOT,
                    "(b) %,d partitions, writer on A, %,d sockets on B: %d commits at %.0f/s;"
                            + " deltas %d of %d, wake-ups %d; push-to-delta p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms%n",
                    partitions,
                    partitions,
                    commits,
                    commits / writerSec,
                    deliveries.sum(),
                    commits,
                    wakes.sum(),
                    p50,
                    latency.getValueAtPercentile(90) / 1000.0,
                    p99,
                    latency.getMaxValue() / 1000.0);
            return new double[] {p50, p99};
        }
    }
}
