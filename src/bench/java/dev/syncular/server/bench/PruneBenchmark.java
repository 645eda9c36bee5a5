package dev.syncular.server.bench;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.GeneratedCommits;
import dev.syncular.server.testsupport.HeldTransaction;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.PushLoad;
import dev.syncular.server.testsupport.SyncTestClient;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.pgclient.PgBuilder;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.PoolOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

/**
 * A first prune of a long commit log while clients push to the same partition (not part of the test suite; the
 * suite's proof is {@code PruneUnderLoadIT} at 100,000 commits). Run with {@code bench/prune.sh}, which starts
 * the packaged server with its pruning job every 2 s.
 *
 * <p>Usage: {@code PruneBenchmark <baseUrl> <pgUrl> <pgUser> <pgPassword> <pgSchema> <schemaPath>}. Phases: a
 * partition is registered and {@code bench.writers} (2) clients start pushing one-row commits to it, one round
 * at a time; after a warm-up the baseline latency is measured ({@code bench.baselineSec}, 20 s); then
 * {@code bench.commits} (1,000,000) commits are appended with SQL in one transaction; the server's next pruning
 * pass moves the horizon and deletes them. Reported: the generation time, the prune window (from the append's
 * commit to no commit left at or below the horizon: the job's next pass, at most 2 s later, and the prune
 * itself), and the push rounds that started in that window — count, p50, p99, max — against the baseline.
 */
public final class PruneBenchmark {
    private static final int WRITERS = Integer.getInteger("bench.writers", 2);
    private static final long COMMITS = Long.getLong("bench.commits", 1_000_000);
    private static final int BASELINE_SEC = Integer.getInteger("bench.baselineSec", 20);
    private static final Duration WAIT = Duration.ofMinutes(30);
    /** More than 1: the many-partitions case ({@link #manyPartitions}) instead of one long log. */
    private static final int PARTITIONS = Integer.getInteger("bench.partitions", 1);
    /** Commits generated per partition in the many-partitions case (the server keeps its newest ones). */
    private static final int COMMITS_PER_PARTITION = Integer.getInteger("bench.commitsPerPartition", 120);
    /** More than 0: the many-partitions log is moved to this many hash partitions instead of pruned. */
    private static final int REPARTITION = Integer.getInteger("bench.repartition", 0);
    /** Rows a transaction of that move. */
    private static final int BATCH_ROWS = Integer.getInteger("bench.batchRows", 5000);

    private PruneBenchmark() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 6) {
            System.err.println("usage: PruneBenchmark <baseUrl> <pgUrl> <pgUser> <pgPassword> <pgSchema> <schemaPath>");
            System.exit(2);
        }
        String baseUrl = args[0];
        String pgSchema = args[4];
        CompiledSchema schema = SchemaLoader.load(Path.of(args[5]));
        Vertx vertx = Vertx.vertx();
        Pool pool = PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(2))
                .connectingTo(PgConnectOptions.fromUri(args[1]).setUser(args[2]).setPassword(args[3]))
                .using(vertx)
                .build();
        try {
            if (PARTITIONS > 1) {
                manyPartitions(baseUrl, pool, pgSchema, schema);
                return;
            }
            String partition = "bench-prune-" + UUID.randomUUID();
            new SyncTestClient(schema, new HttpTransport(baseUrl, partition), "bench", "c-register").sync();
            PushLoad load = new PushLoad(schema, partition, List.of(baseUrl)).start(WRITERS);
            load.awaitMore(2_000, WAIT); // warm-up
            long baselineFrom = System.nanoTime();
            load.awaitMore(1, WAIT);
            while (System.nanoTime() - baselineFrom
                    < Duration.ofSeconds(BASELINE_SEC).toNanos()) {
                load.awaitMore(1, WAIT);
            }
            long baselineTo = System.nanoTime();

            long t0 = System.nanoTime();
            long generatedTo = GeneratedCommits.append(pool, pgSchema, partition, "todos", COMMITS);
            long generated = System.nanoTime();
            long generatedMs = (generated - t0) / 1_000_000;

            long started = 0;
            long finished = 0;
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (finished == 0 && System.nanoTime() < deadline) {
                Row r = pool.preparedQuery(
                                "SELECT horizon_seq, (SELECT count(*) FROM \"" + pgSchema + "\".sync_commits c"
                                        + " WHERE c.partition_id = p.partition_id AND c.commit_seq <= p.horizon_seq) FROM \""
                                        + pgSchema
                                        + "\".sync_partitions p WHERE partition_id = $1")
                        .execute(Tuple.of(partition))
                        .await()
                        .atMost(WAIT)
                        .iterator()
                        .next();
                if (started == 0 && r.getLong(0) >= generatedTo - 1000) {
                    started = System.nanoTime();
                }
                if (started != 0 && r.getLong(1) == 0) {
                    finished = System.nanoTime();
                }
            }
            load.stop();
            if (finished == 0) {
                throw new IllegalStateException("the prune did not finish within " + WAIT);
            }
            System.out.printf(
                    "== generated %,d commits (each with one change and one scope-index entry) in %,d ms%n",
                    COMMITS, generatedMs);
            System.out.printf(
                    "== prune window: %,d ms from the append's commit to %,d commits deleted (horizon seen moved"
                            + " %,d ms before the end)%n",
                    (finished - generated) / 1_000_000, COMMITS, (finished - started) / 1_000_000);
            pushRounds(load, "one partition", "in the prune window", baselineFrom, baselineTo, generated, finished);
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1); // the writers' threads would keep the JVM alive
        } finally {
            pool.close().await().atMost(WAIT);
            vertx.close().await().atMost(WAIT);
        }
    }

    /**
     * {@code bench.partitions} partitions (10,000 in docs/BENCHMARKS.md) registered with SQL, each with
     * {@code bench.commitsPerPartition} generated commits, while {@code bench.writers} clients push to one more
     * partition; the server's pruning passes (every 2 s, run with {@code SYNCULAR_PRUNING_KEEP_NEWEST_COMMITS} below
     * the per-partition count) then page through every partition. Reported: the generation time, the prune window
     * (from the generation's commit until no generated partition keeps a commit at or below its horizon and every
     * horizon has moved), and the push rounds in that window against the baseline before it.
     */
    private static void manyPartitions(String baseUrl, Pool pool, String pgSchema, CompiledSchema schema)
            throws InterruptedException {
        String s = "\"" + pgSchema + "\".";
        String prefix = "bench-prune-many-" + UUID.randomUUID() + "-";
        String lit = "'" + prefix + "'";
        String hot = "bench-prune-hot-" + UUID.randomUUID();
        new SyncTestClient(schema, new HttpTransport(baseUrl, hot), "bench", "c-register").sync();
        PushLoad load = new PushLoad(schema, hot, List.of(baseUrl)).start(WRITERS);
        load.awaitMore(2_000, WAIT); // warm-up
        long baselineFrom = System.nanoTime();
        while (System.nanoTime() - baselineFrom
                < Duration.ofSeconds(BASELINE_SEC).toNanos()) {
            load.awaitMore(1, WAIT);
        }
        long baselineTo = System.nanoTime();

        long t0 = System.nanoTime();
        String pairs =
                " FROM generate_series(1, " + PARTITIONS + ") p, generate_series(1, " + COMMITS_PER_PARTITION + ") g";
        String partition = lit + " || p";
        List<String> generate = List.of(
                "INSERT INTO " + s + "sync_partitions (partition_id, log_epoch, max_commit_seq, horizon_seq,"
                        + " created_at_ms, last_seen_at_ms) SELECT " + partition + ", 'bench-epoch', "
                        + COMMITS_PER_PARTITION + ", 0, 1, 1 FROM generate_series(1, " + PARTITIONS + ") p",
                "INSERT INTO " + s + "sync_commits (partition_id, commit_seq, created_at_ms, actor_id, client_id,"
                        + " client_commit_id, change_count, tables, writer_version) SELECT " + partition
                        + ", g, 1, 'gen', 'gen', 'gen-' || g, 1, ARRAY['todos'], 1" + pairs,
                "INSERT INTO " + s + "sync_changes (partition_id, commit_seq, change_index, tbl, row_id, op,"
                        + " row_version, scopes, payload) SELECT " + partition
                        + ", g, 0, 'todos', 'gen-' || g, 1, g, '{}'::jsonb, NULL" + pairs,
                "INSERT INTO " + s + "sync_commit_scopes (partition_id, tbl, scope_key, commit_seq) SELECT " + partition
                        + ", 'todos', 'gen', g" + pairs);
        try (HeldTransaction t = HeldTransaction.begin(pool)) {
            for (String sql : generate) {
                t.execute(sql);
            }
            t.commit();
        }
        long generated = System.nanoTime();
        long total = (long) PARTITIONS * COMMITS_PER_PARTITION;
        // statistics of the generated log, as autovacuum's analyze would give them soon after: planned with the
        // statistics of one hot partition, the progress query below scans the whole log once per partition
        for (String table : List.of("sync_partitions", "sync_commits", "sync_changes", "sync_commit_scopes")) {
            pool.query("ANALYZE " + s + table).execute().await().atMost(WAIT);
        }
        long analyzed = System.nanoTime();
        String sizesBefore = logSizes(pool, pgSchema);
        if (REPARTITION > 0) {
            repartition(pool, pgSchema, load, total, sizesBefore, baselineFrom, baselineTo);
            return;
        }

        // one probe of sync_commits' primary key per partition (its lowest stored commit at or below the horizon);
        // the generated logs are contiguous, so what a partition keeps is max_commit_seq - horizon_seq once pruned
        String progress = "SELECT count(*) FILTER (WHERE p.horizon_seq = 0), count(*) FILTER (WHERE EXISTS (SELECT 1"
                + " FROM " + s
                + "sync_commits c WHERE c.partition_id = p.partition_id AND c.commit_seq <= p.horizon_seq)),"
                + " coalesce(sum(p.max_commit_seq - p.horizon_seq), 0) FROM " + s + "sync_partitions p"
                + " WHERE p.partition_id LIKE " + lit + " || '%'";
        long finished = 0;
        long remaining = total;
        long deadline = System.nanoTime() + WAIT.toNanos();
        // the horizons first (one read of sync_partitions), then the probes: 10,000 probes of a partitioned log
        // take about 0.9 s of the database's CPU a poll, as much as a quarter of the window they measure
        String horizons = "SELECT count(*) FILTER (WHERE p.horizon_seq = 0) FROM " + s + "sync_partitions p"
                + " WHERE p.partition_id LIKE " + lit + " || '%'";
        while (System.nanoTime() < deadline
                && pool.query(horizons)
                                .execute()
                                .await()
                                .atMost(WAIT)
                                .iterator()
                                .next()
                                .getLong(0)
                        > 0) {
            Thread.sleep(100); // a benchmark's poll, not a test
        }
        while (finished == 0 && System.nanoTime() < deadline) {
            Row r = pool.query(progress)
                    .execute()
                    .await()
                    .atMost(WAIT)
                    .iterator()
                    .next();
            remaining = r.getLong(2);
            if (r.getLong(0) == 0 && r.getLong(1) == 0) {
                finished = System.nanoTime();
            } else {
                Thread.sleep(250); // a benchmark's poll, not a test: the count itself reads the whole log
            }
        }
        load.stop();
        if (finished == 0) {
            throw new IllegalStateException("the prune did not finish within " + WAIT);
        }
        String sizesAfter = logSizes(pool, pgSchema);
        long vacuumFrom = System.nanoTime();
        for (String table : LOG_TABLES) {
            pool.query("VACUUM " + s + table).execute().await().atMost(WAIT);
        }
        long vacuumed = System.nanoTime();
        String sizesVacuumed = logSizes(pool, pgSchema);
        System.out.printf(
                "== generated %,d partitions x %,d commits (%,d commits, each with one change and one scope-index"
                        + " entry) in %,d ms, analyzed in %,d ms%n",
                PARTITIONS,
                COMMITS_PER_PARTITION,
                total,
                (generated - t0) / 1_000_000,
                (analyzed - generated) / 1_000_000);
        System.out.printf(
                "== prune window: %,d ms from the generation's commit until every partition's horizon moved and no"
                        + " commit at or below it is left (%,d commits deleted, %,d kept)%n",
                (finished - generated) / 1_000_000, total - remaining, remaining);
        System.out.printf(
                "== commits pruned per second over the window: %,.0f%n",
                (total - remaining) / ((finished - generated) / 1e9));
        System.out.printf("== log tables after the generation: %s%n", sizesBefore);
        System.out.printf("== log tables right after the prune: %s%n", sizesAfter);
        System.out.printf(
                "== log tables after a plain VACUUM (%,d ms; the space stays with the tables for the next commits):"
                        + " %s%n",
                (vacuumed - vacuumFrom) / 1_000_000, sizesVacuumed);
        pushRounds(load, "one more partition", "in the prune window", baselineFrom, baselineTo, generated, finished);
    }

    /**
     * The online move of the generated plain log to {@code bench.repartition} hash partitions (the
     * {@code repartition-log} command's storage side, run here in the benchmark's JVM, {@code bench.batchRows} rows a
     * transaction) while the writers push: the move's time and rows copied a second, the push rounds in its window
     * against the baseline, the tables before and after. Run the server with {@code SYNCULAR_PRUNING_ENABLED=false}
     * and {@code SYNCULAR_STORAGE_LOG_PARTITIONS=0}.
     */
    private static void repartition(
            Pool pool,
            String pgSchema,
            PushLoad load,
            long total,
            String sizesBefore,
            long baselineFrom,
            long baselineTo)
            throws InterruptedException {
        var move = new dev.syncular.server.storage.postgres.PostgresSyncStorage(
                        pool, pgSchema, dev.syncular.server.storage.postgres.PostgresSyncStorage.Settings.DEFAULTS)
                .logRepartitioning();
        long from = System.nanoTime();
        var report = move.repartition(REPARTITION, BATCH_ROWS, m -> {}).await().atMost(WAIT);
        long to = System.nanoTime();
        load.stop();
        double sec = (to - from) / 1e9;
        System.out.printf(
                "== %,d commits in %,d partitions; the move to %d hash partitions (%,d rows a batch): %,.1f s,"
                        + " %,d rows copied, %,.0f rows a second (%d -> %d leaves)%n",
                total,
                PARTITIONS,
                REPARTITION,
                BATCH_ROWS,
                sec,
                report.rowsCopied(),
                report.rowsCopied() / sec,
                report.leavesBefore(),
                report.leavesAfter());
        System.out.printf("== log tables before the move: %s%n", sizesBefore);
        System.out.printf("== log tables after the move: %s%n", logSizes(pool, pgSchema));
        pushRounds(load, "one more partition", "during the move", baselineFrom, baselineTo, from, to);
    }

    /** The push rounds of the baseline and of the window {@code from..to} ({@code during}), and the failures. */
    private static void pushRounds(
            PushLoad load, String where, String during, long baselineFrom, long baselineTo, long from, long to) {
        System.out.printf(
                "== push rounds (%d writers, %s): baseline %,d rounds p50 %d ms p99 %d ms max %d ms;"
                        + " %s %,d rounds p50 %d ms p99 %d ms max %d ms%n",
                WRITERS,
                where,
                load.roundsBetween(baselineFrom, baselineTo),
                load.percentileMs(50, baselineFrom, baselineTo),
                load.percentileMs(99, baselineFrom, baselineTo),
                load.percentileMs(100, baselineFrom, baselineTo),
                during,
                load.roundsBetween(from, to),
                load.percentileMs(50, from, to),
                load.percentileMs(99, from, to),
                load.percentileMs(100, from, to));
        System.out.printf("== push failures during the run: %s%n", load.failures);
    }

    private static final List<String> LOG_TABLES = List.of("sync_commits", "sync_changes", "sync_commit_scopes");

    /** Each log table's size with its indexes, and its live and dead rows as the statistics count them. */
    private static String logSizes(Pool pool, String pgSchema) {
        StringBuilder out = new StringBuilder();
        for (String table : LOG_TABLES) {
            // a hash-partitioned log table (storage.postgres.LogLayout) is the sum of its leaves
            Row r = pool.preparedQuery("WITH r AS (SELECT to_regclass(format('%I.%I', $1::text, $2::text)) AS oid),"
                            + " t AS (SELECT p.relid, p.level FROM r, pg_partition_tree(r.oid) p UNION SELECT oid, 0 FROM r)"
                            + " SELECT sum(pg_total_relation_size(t.relid)), sum(coalesce(st.n_live_tup, 0)),"
                            + " sum(coalesce(st.n_dead_tup, 0)), count(*) FILTER (WHERE t.level > 0)"
                            + " FROM t LEFT JOIN pg_stat_user_tables st ON st.relid = t.relid")
                    .execute(Tuple.of(pgSchema, table))
                    .await()
                    .atMost(WAIT)
                    .iterator()
                    .next();
            out.append(String.format(
                    "%s%s%s %,d MB (statistics: %,d live, %,d dead rows)",
                    out.length() == 0 ? "" : "; ",
                    table,
                    r.getLong(3) == 0 ? "" : " (" + r.getLong(3) + " leaves)",
                    r.getLong(0) / (1024 * 1024),
                    r.getLong(1),
                    r.getLong(2)));
        }
        return out.toString();
    }
}
