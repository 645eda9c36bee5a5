package dev.syncular.server.bench;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.realtime.ControlMessage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/**
 * The noisy neighbour (issue 45; docs/BENCHMARKS.md, "Noisy neighbour"). Not a test: {@code bench/noisy.sh}.
 *
 * <p>Two packaged pods with the chart's JVM flags and the product's default fairness settings on one database.
 * {@code bench.quiet} (999) quiet partitions, one client each, make {@code bench.quietRate} (100) rounds/s together
 * (open loop: a round's latency counts from its scheduled start), each round an upsert and a pull, the pods in turn.
 * One hostile tenant then runs each attack in turn at full speed for {@code bench.attackSec} (20) s, on both pods:
 * <ul>
 * <li><b>push flood</b>: 16 threads of one actor pushing 200-operation commits, never backing off;</li>
 * <li><b>huge rows</b>: 4 threads pushing rows with a 900 KB value (under the 1 MiB value cap);</li>
 * <li><b>subscription multiplication</b>: 8 threads of fresh clients naming one table and scope in 128
 * subscriptions of one round, over {@code bench.hostileRows} (2,000) rows;</li>
 * <li><b>bootstrap storm</b>: 16 threads of fresh clients bootstrapping the hostile tenant's table;</li>
 * <li><b>presence flood</b>: 4 threads, each a realtime socket of its own actor in one scope, publishing 1 KB presence
 * documents in a loop (their scope-mates are each other);</li>
 * <li><b>watch storm</b> ({@link NoisyWatchStorm}): 22 REMOTE.md §6 watch sockets, 11 per pod, each asking for 101
 * watches of one list of the hostile table (one past the default caps of 100 per socket and 1,000 per partition
 * and pod), while 2 threads commit to that list at full speed so that every commit reruns every watch; the pods
 * register the watched query for the benchmark ({@code SYNCULAR_OPERATIONS_QUERIES_PATH}); in it and in the
 * baseline a quiet tenant's watch on pod A is timed from a commit on pod B to its snapshot.</li>
 * </ul>
 * For the baseline (no attack) and each attack: the quiet rounds' p50/p99 in the measured window (after a 5 s
 * warm-up), their refusals, and the hostile tenant's answered and refused rounds (for the watch storm: the reruns
 * received, and the watches refused, sockets ended and commits refused); and for {@value #OBSERVERS} of the
 * quiet partitions, a realtime socket of a second client on the other pod: commit-to-delta p50/p99, from the start of
 * the writer's round to the delta's arrival on the socket.
 */
public final class NoisyBenchmark {
    private static final int QUIET = Integer.getInteger("bench.quiet", 999);
    private static final int QUIET_RATE = Integer.getInteger("bench.quietRate", 100);
    private static final int ATTACK_SEC = Integer.getInteger("bench.attackSec", 20);
    private static final int WARMUP_SEC = 5;
    private static final int HOSTILE_ROWS = Integer.getInteger("bench.hostileRows", 2000);
    private static final String ATTACKS = System.getProperty(
            "bench.attacks", "baseline,push-flood,huge-rows,subscriptions,bootstrap-storm,presence-flood,watch-storm");
    private static final String TABLE = "todos";
    /** Quiet partitions whose commits are also timed to a realtime socket on the other pod. */
    private static final int OBSERVERS = 20;

    private static RealtimeSocket[] observers;

    private static CompiledSchema schema;
    /** The pods, and the operation id of the watch storm's registered query. */
    private static List<ServerProcess> servers;

    private static String watchOperationId;

    private NoisyBenchmark() {}

    record Figures(
            String attack,
            long rounds,
            double p50,
            double p99,
            long quietRefused,
            long hostileOk,
            long hostileRefused,
            long deltas,
            double deltaP50,
            double deltaP99,
            String detail) {}

    public static void main(String[] args) throws Exception {
        schema = SchemaLoader.parse(Files.readString(ServerProcess.BUNDLED_SCHEMA));
        String pgSchema =
                "bench_noisy_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        System.out.printf(
                Locale.ROOT,
                "== noisy-neighbour benchmark: %d quiet partitions at %d rounds/s, %d s per attack, storage schema %s%n",
                QUIET,
                QUIET_RATE,
                ATTACK_SEC,
                pgSchema);
        List<Figures> results = new ArrayList<>();
        Path queries = NoisyWatchStorm.writeQueries(Path.of("target"));
        watchOperationId = NoisyWatchStorm.operationId(queries);
        try (ServerProcess a = TenantsBenchmark.podBuilder("bench-noisy-a", pgSchema)
                        .env(
                                "SYNCULAR_OPERATIONS_QUERIES_PATH",
                                queries.toAbsolutePath().toString())
                        .start();
                ServerProcess b = TenantsBenchmark.podBuilder("bench-noisy-b", pgSchema)
                        .env(
                                "SYNCULAR_OPERATIONS_QUERIES_PATH",
                                queries.toAbsolutePath().toString())
                        .start()) {
            servers = List.of(a, b);
            List<String> pods = List.of(a.baseUrl(), b.baseUrl());
            String run = UUID.randomUUID().toString().substring(0, 6);
            List<SyncTestClient> quiet = new ArrayList<>();
            for (int i = 0; i < QUIET; i++) {
                SyncTestClient c = client(pods.get(i % 2), "quiet-" + run + "-" + i, "q" + i);
                c.syncUntilIdle();
                quiet.add(c);
            }
            observers = new RealtimeSocket[OBSERVERS];
            for (int i = 0; i < OBSERVERS; i++) {
                SyncTestClient o = client(pods.get((i + 1) % 2), "quiet-" + run + "-" + i, "o" + i);
                o.syncUntilIdle();
                observers[i] = RealtimeSocket.connect(
                        pods.get((i + 1) % 2) + "/", "quiet-" + run + "-" + i, o.actorId, o.clientId);
                if (observers[i]
                        .nextEvent("hello")
                        .get("data")
                        .get("requiresSync")
                        .asBoolean()) {
                    observers[i].ack(o.subscriptions.get("s1").cursor);
                }
            }
            String hostile = "hostile-" + run;
            seed(pods.get(0), hostile);
            System.out.printf(
                    Locale.ROOT,
                    "== %d quiet clients bootstrapped; hostile seeded with %d rows%n",
                    QUIET,
                    HOSTILE_ROWS);
            for (String attack : ATTACKS.split(",")) {
                Figures f = phase(attack.trim(), pods, quiet, hostile);
                results.add(f);
                System.out.printf(
                        Locale.ROOT,
                        "%s: quiet %,d rounds, p50 %.1f ms, p99 %.1f ms, %d refused; commit-to-delta %,d, p50 %.1f ms,"
                                + " p99 %.1f ms; hostile %,d answered, %,d refused%n",
                        f.attack(),
                        f.rounds(),
                        f.p50(),
                        f.p99(),
                        f.quietRefused(),
                        f.deltas(),
                        f.deltaP50(),
                        f.deltaP99(),
                        f.hostileOk(),
                        f.hostileRefused());
                if (f.detail() != null) {
                    System.out.println(f.detail());
                }
            }
        }
        double base = results.stream()
                .filter(f -> f.attack().equals("baseline"))
                .mapToDouble(Figures::p99)
                .findFirst()
                .orElse(Double.NaN);
        System.out.println("== summary");
        double baseDelta = results.stream()
                .filter(f -> f.attack().equals("baseline"))
                .mapToDouble(Figures::deltaP99)
                .findFirst()
                .orElse(Double.NaN);
        System.out.println(
                "| attack | quiet rounds | quiet p50 ms | quiet p99 ms | p99 vs baseline | quiet refused"
                        + " | commit-to-delta p50 / p99 ms | delta p99 vs baseline | hostile answered | hostile refused (429) |");
        for (Figures f : results) {
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %,d | %.1f | %.1f | %s | %d | %.1f / %.1f (%,d) | %s | %,d | %,d |%n",
                    f.attack(),
                    f.rounds(),
                    f.p50(),
                    f.p99(),
                    Double.isNaN(base) ? "-" : String.format(Locale.ROOT, "%+.0f %%", 100 * (f.p99() / base - 1)),
                    f.quietRefused(),
                    f.deltaP50(),
                    f.deltaP99(),
                    f.deltas(),
                    Double.isNaN(baseDelta)
                            ? "-"
                            : String.format(Locale.ROOT, "%+.0f %%", 100 * (f.deltaP99() / baseDelta - 1)),
                    f.hostileOk(),
                    f.hostileRefused());
        }
    }

    private static SyncTestClient client(String pod, String partition, String actor) {
        SyncTestClient c = new SyncTestClient(
                schema, new BenchHttpTransport(pod, partition), actor, actor + "-" + UUID.randomUUID());
        c.subscribe("s1", TABLE, Map.of("list_id", List.of("l0")));
        return c;
    }

    private static Map<String, Object> todo(String id, String title, long n) {
        return Map.of("id", id, "list_id", "l0", "title", title, "done", false, "position", n, "updated_at_ms", n);
    }

    /** The hostile tenant's table: {@link #HOSTILE_ROWS} rows, pushed in commits of 500 (waiting out 429s). */
    private static void seed(String pod, String hostile) throws InterruptedException {
        SyncTestClient w = client(pod, hostile, "seeder");
        w.syncUntilIdle();
        for (int from = 0; from < HOSTILE_ROWS; from += 500) {
            List<PushOperation> ops = new ArrayList<>();
            for (int i = from; i < Math.min(HOSTILE_ROWS, from + 500); i++) {
                ops.add(w.upsertOp(TABLE, todo("seed-" + i, "row " + i, i), null));
            }
            w.commit(ops);
            while (true) {
                try {
                    w.syncUntilIdle();
                    break;
                } catch (HttpFailure f) {
                    Thread.sleep(500); // the push rate's debt: a benchmark's seeder waits it out
                }
            }
        }
    }

    private static Figures phase(String attack, List<String> pods, List<SyncTestClient> quiet, String hostile)
            throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        LongAdder hostileOk = new LongAdder();
        LongAdder hostileRefused = new LongAdder();
        NoisyWatchStorm storm = attack.equals("watch-storm") || attack.equals("baseline")
                ? new NoisyWatchStorm(watchOperationId, servers, schema, hostile, attack.equals("watch-storm"))
                : null;
        int threads = switch (attack) {
            case "baseline", "watch-storm" -> storm.threads();
            case "push-flood", "bootstrap-storm" -> 16;
            case "huge-rows", "presence-flood" -> 4;
            case "subscriptions" -> 8;
            default -> throw new IllegalArgumentException("unknown attack " + attack);
        };
        List<Thread> attackers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int k = t;
            Thread th = new Thread(
                    storm != null
                            ? () -> storm.attack(k, stop, hostileOk, hostileRefused)
                            : () -> attack(attack, k, pods, hostile, stop, hostileOk, hostileRefused),
                    attack + "-" + t);
            th.setDaemon(true);
            th.start();
            attackers.add(th);
        }
        Histogram hist = new Histogram(120_000_000L, 3);
        Histogram deltaHist = new Histogram(120_000_000L, 3);
        long[] sentAt = new long[OBSERVERS]; // the start of the observed writer's round, 0 when none is awaited
        for (RealtimeSocket o : observers) {
            o.binaries.clear();
            o.texts.clear();
        }
        LongAdder refused = new LongAdder();
        long start = System.nanoTime();
        long measureFrom = start + TimeUnit.SECONDS.toNanos(WARMUP_SEC);
        long end = start + TimeUnit.SECONDS.toNanos(ATTACK_SEC);
        long periodNanos = 1_000_000_000L / QUIET_RATE;
        ExecutorService workers = Executors.newFixedThreadPool(16);
        ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor();
        AtomicInteger next = new AtomicInteger();
        AtomicInteger n = new AtomicInteger();
        ticks.scheduleAtFixedRate(
                () -> {
                    long scheduled = System.nanoTime();
                    if (scheduled >= end) {
                        return;
                    }
                    int index = Math.floorMod(next.getAndIncrement(), quiet.size());
                    SyncTestClient c = quiet.get(index);
                    workers.execute(() -> {
                        synchronized (c) {
                            try {
                                if (index < OBSERVERS) {
                                    synchronized (sentAt) {
                                        sentAt[index] = System.nanoTime();
                                    }
                                }
                                c.upsert(TABLE, todo(c.actorId + "-r" + (n.incrementAndGet() % 20), "quiet", 1), null);
                                c.sync();
                            } catch (HttpFailure f) {
                                c.outbox.clear();
                                if (scheduled >= measureFrom) {
                                    refused.increment();
                                }
                                return;
                            }
                        }
                        if (scheduled >= measureFrom) {
                            synchronized (hist) {
                                hist.recordValue(Math.max(1, (System.nanoTime() - scheduled) / 1000));
                            }
                        }
                    });
                },
                0,
                periodNanos,
                TimeUnit.NANOSECONDS);
        while (System.nanoTime() < end) {
            boolean idle = true;
            for (int i = 0; i < OBSERVERS; i++) {
                byte[] b = observers[i].binaries.poll();
                if (b == null || b[0] != 0x00) {
                    continue;
                }
                idle = false;
                long now = System.nanoTime();
                long sent;
                synchronized (sentAt) {
                    sent = sentAt[i];
                    sentAt[i] = 0;
                }
                if (sent > 0 && sent >= measureFrom) {
                    deltaHist.recordValue(Math.max(1, (now - sent) / 1000));
                }
            }
            if (idle) {
                Thread.sleep(1);
            }
            for (RealtimeSocket o : observers) {
                o.texts.clear();
            }
        }
        if (storm != null) {
            storm.sampleGauges(); // the storm's sockets still open
        }
        ticks.shutdown();
        workers.shutdown();
        workers.awaitTermination(120, TimeUnit.SECONDS);
        stop.set(true);
        for (Thread th : attackers) {
            th.join(120_000);
        }
        return new Figures(
                attack,
                hist.getTotalCount(),
                hist.getValueAtPercentile(50) / 1000.0,
                hist.getValueAtPercentile(99) / 1000.0,
                refused.sum(),
                hostileOk.sum(),
                hostileRefused.sum(),
                deltaHist.getTotalCount(),
                deltaHist.getValueAtPercentile(50) / 1000.0,
                deltaHist.getValueAtPercentile(99) / 1000.0,
                storm == null ? null : storm.detail());
    }

    /** One attacker thread of {@code attack} until {@code stop}: never backing off, refusals counted. */
    private static void attack(
            String attack,
            int thread,
            List<String> pods,
            String hostile,
            AtomicBoolean stop,
            LongAdder ok,
            LongAdder refusedCount) {
        SyncTestClient pusher = client(
                pods.get(thread % 2), hostile, attack.equals("presence-flood") ? "hostile-p" + thread : "hostile");
        try {
            pusher.syncUntilIdle();
        } catch (RuntimeException e) {
            refusedCount.increment();
        }
        RealtimeSocket socket = attack.equals("presence-flood")
                ? RealtimeSocket.connect(pods.get(thread % 2) + "/", hostile, pusher.actorId, pusher.clientId)
                : null;
        ObjectNode doc = JsonNodeFactory.instance.objectNode().put("blob", "p".repeat(1000));
        long n = 0;
        while (!stop.get()) {
            n++;
            try {
                switch (attack) {
                    case "push-flood" -> {
                        List<PushOperation> ops = new ArrayList<>();
                        for (int i = 0; i < 200; i++) {
                            ops.add(pusher.upsertOp(
                                    TABLE,
                                    todo("flood-" + thread + "-" + (n % 10) + "-" + i, "x".repeat(200), n),
                                    null));
                        }
                        pusher.outbox.clear();
                        pusher.commit(ops);
                        pusher.sync();
                    }
                    case "huge-rows" -> {
                        pusher.outbox.clear();
                        pusher.upsert(TABLE, todo("huge-" + thread + "-" + (n % 4), "h".repeat(900_000), n), null);
                        pusher.sync();
                    }
                    case "subscriptions" -> {
                        SyncTestClient c = new SyncTestClient(
                                schema,
                                new BenchHttpTransport(pods.get((int) (n % 2)), hostile),
                                "hostile",
                                "mult-" + UUID.randomUUID());
                        for (int s = 0; s < 128; s++) {
                            c.subscribe("s" + s, TABLE, Map.of("list_id", List.of("l0")));
                        }
                        c.sync(); // the log epoch
                        c.sync();
                    }
                    case "bootstrap-storm" -> {
                        SyncTestClient c = client(pods.get((int) (n % 2)), hostile, "hostile-" + thread);
                        c.syncUntilIdle();
                    }
                    case "presence-flood" -> {
                        if (socket.closed.isDone()) {
                            refusedCount.increment(); // closed (4290 or other): a new socket, as a client would
                            socket = RealtimeSocket.connect(
                                    pods.get(thread % 2) + "/", hostile, pusher.actorId, pusher.clientId);
                        }
                        socket.send(new ControlMessage.PresencePublish("list:l0", doc.put("n", n)));
                        socket.texts.clear(); // the mates' documents, not kept
                    }
                    default -> throw new IllegalStateException(attack);
                }
                ok.increment();
            } catch (HttpFailure f) {
                refusedCount.increment();
            } catch (RuntimeException e) {
                refusedCount.increment();
            }
        }
        if (socket != null) {
            socket.ws.abort();
        }
    }
}
