package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.storage.ChangeToWrite;
import dev.syncular.server.storage.CheckpointDeclaration;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.CommitQuery;
import dev.syncular.server.storage.CommitWindow;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.PushReadHint;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.ServeGate;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredCheckpoint;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.storage.SyncStorageContract;
import dev.syncular.server.testsupport.ReferenceMaterial;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.wire.Op;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.pgclient.PgBuilder;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.PoolOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * Runs the {@link SyncStorageContract} against a real PostgreSQL ({@code SYNCULAR_TEST_PG_URL},
 * {@code SYNCULAR_TEST_PG_USER}, {@code SYNCULAR_TEST_PG_PASSWORD} as {@code .ci/run} exports them, else
 * the embedded PostgreSQL of {@link TestPostgres}), plus the PostgreSQL-specific §2.4 readiness and upgrade checks. Every storage lives in its
 * own fresh PostgreSQL schema, dropped after the class.
 */
class PostgresSyncStorageTest extends SyncStorageContract {
    private static Vertx vertx;
    private static Pool pool;
    private final List<String> createdSchemas = new ArrayList<>();
    private String mainSchema;

    private static synchronized Pool pool() {
        if (pool == null) {
            vertx = Vertx.vertx();
            pool = TestPostgres.pool(vertx, 8);
        }
        return pool;
    }

    private String freshSchemaName() {
        String name =
                "sync_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        createdSchemas.add(name);
        return name;
    }

    private PostgresSyncStorage newStorage() {
        return new PostgresSyncStorage(pool(), freshSchemaName(), contractSettings());
    }

    /** The settings of the storages the contract runs against: the defaults (a plain log). */
    protected PostgresSyncStorage.Settings contractSettings() {
        return PostgresSyncStorage.Settings.DEFAULTS;
    }

    @Override
    protected SyncStorage createStorage() {
        PostgresSyncStorage s = newStorage();
        mainSchema = s.pgSchema();
        return s;
    }

    @Override
    protected Map<String, Long> countAllTables() {
        return countTables(mainSchema);
    }

    private Map<String, Long> countTables(String pgSchema) {
        List<String> names = new ArrayList<>();
        for (Row r : await(
                pool().preparedQuery("SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1")
                        .execute(Tuple.of(pgSchema)))) {
            names.add(r.getString(0));
        }
        assertTrue(names.size() >= 11, "every storage table exists: " + names);
        Map<String, Long> counts = new TreeMap<>();
        for (String n : names) {
            counts.put(
                    n,
                    await(pool().query("SELECT count(*) FROM \"" + pgSchema + "\".\"" + n + "\"")
                                    .execute())
                            .iterator()
                            .next()
                            .getLong(0));
        }
        return counts;
    }

    /**
     * The recent-commit cache answers a §4.5 window exactly as the log read does, for every window it holds whole:
     * windows over tables, scopes (§3.2 AND/OR), change limits (§4.5 cut) and bounds; a commit rolled back to its
     * savepoint is never held; a commit of another pod (a second storage over the same schema) breaks the run, so
     * every window across it reads the log, and the run restarts after it; another epoch is never answered.
     */
    @Test
    void recentCommitsAnswerEveryHeldWindowExactlyAsTheLog() {
        PostgresSyncStorage local = (PostgresSyncStorage) storage;
        PostgresSyncStorage otherPod =
                new PostgresSyncStorage(pool(), mainSchema, PostgresSyncStorage.Settings.DEFAULTS);
        await(otherPod.ensureSchema(schema));
        String p = newPartition();
        String[] projects = {"P1", "P2", "P3"};
        String[] orgs = {"O1", "O2"};
        java.util.Random random = new java.util.Random(29);
        long otherSeq = -1;
        long rolledBackSeq = -1;
        for (int i = 0; i < 90; i++) {
            List<ChangeToWrite> changes = new ArrayList<>();
            int n = 1 + random.nextInt(4);
            for (int k = 0; k < n; k++) {
                String project = projects[random.nextInt(projects.length)];
                String org = orgs[random.nextInt(orgs.length)];
                int kind = random.nextInt(5);
                if (kind == 0) {
                    changes.add(ChangeToWrite.upsert(
                            "notes", Integer.toString(i * 10 + k), 1, Map.of("project_id", project), new Object[] {
                                (long) (i * 10 + k), project, k % 2 == 0 ? null : "body " + i
                            }));
                } else if (kind == 1) {
                    changes.add(ChangeToWrite.delete("tasks", "t" + random.nextInt(20), taskScopes(project, org)));
                } else {
                    changes.add(taskUpsert("t" + random.nextInt(20) + "-" + i + "-" + k, project, org, i + 1));
                }
            }
            String id = Integer.toString(i);
            if (i == 40) {
                otherSeq = await(otherPod.inPartitionTransaction(
                        p,
                        tx -> tx.appendCommit(
                                "actor-2", "client-2", "other-" + id, 6_000L, changes, StoredCommit.UNTRACED)));
            } else if (i == 20) {
                // one transaction: a commit rolled back to its savepoint, then the one that stays
                rolledBackSeq = await(storage.inPartitionTransaction(
                        p,
                        tx -> tx.savepoint(() -> tx.appendCommit(
                                                "actor-1",
                                                "client-1",
                                                "gone",
                                                5_000L,
                                                List.of(taskUpsert("gone", "P1", "O1", 1)),
                                                StoredCommit.UNTRACED)
                                        .chain(seq -> Uni.createFrom()
                                                .<Long>failure(new IllegalStateException("rolled back"))))
                                .onFailure(IllegalStateException.class)
                                .recoverWithItem(-1L)
                                .chain(x -> tx.appendCommit(
                                        "actor-1", "client-1", "kept-" + id, 5_000L, changes, StoredCommit.UNTRACED))));
            } else {
                commit(p, changes);
            }
        }
        PartitionState state = await(storage.readPartition(p));
        long max = state.maxCommitSeq();
        assertEquals(90, max, "the rolled-back commit's sequence was reused");
        assertEquals(21, rolledBackSeq);
        List<Map<String, Set<String>>> scopeSets = List.of(
                Map.of("project_id", Set.of("P1")),
                Map.of("project_id", Set.of("P1", "P2")),
                Map.of("project_id", Set.of("P2"), "org_id", Set.of("O2")),
                Map.of("project_id", Set.of("P1", "P2", "P3"), "org_id", Set.of("O1", "O2")));
        long hitsBefore = local.recentCommits().hits();
        int held = 0;
        int compared = 0;
        for (long after = 0; after < max; after += 1 + random.nextInt(4)) {
            long upTo = after + 1 + random.nextInt((int) (max - after));
            for (String table : List.of("tasks", "notes")) {
                for (Map<String, Set<String>> scopes : scopeSets) {
                    if (table.equals("notes") && scopes.containsKey("org_id")) {
                        continue;
                    }
                    for (int limit : new int[] {1, 3, 7, 1000}) {
                        CommitQuery q = new CommitQuery(table, scopes, after, upTo, limit);
                        var fromMemory = local.recentCommits().window(p, state.logEpoch(), q);
                        boolean acrossOtherPod = after < otherSeq;
                        assertEquals(
                                !acrossOtherPod,
                                fromMemory.isPresent(),
                                "held exactly when the window is all this pod's: " + q);
                        assertTrue(
                                local.recentCommits()
                                        .window(p, "another-epoch", q)
                                        .isEmpty(),
                                "another epoch is never answered");
                        compared++;
                        if (fromMemory.isPresent()) {
                            held++;
                            assertEquals(
                                    describe(await(storage.readCommits(p, q))),
                                    describe(fromMemory.get()),
                                    "the same window as the log: " + q);
                        }
                    }
                }
            }
        }
        assertTrue(held > 100, "windows answered from memory: " + held + " of " + compared);
        assertEquals(hitsBefore + held, local.recentCommits().hits());
        assertTrue(local.recentCommits().bytes() > 0);
    }

    /** Everything a window carries, arrays by content. */
    private static String describe(CommitWindow w) {
        StringBuilder b = new StringBuilder();
        b.append("through=").append(w.scannedThroughSeq()).append(" truncated=").append(w.truncated());
        for (var c : w.commits()) {
            b.append("\n")
                    .append(c.commitSeq())
                    .append(' ')
                    .append(c.createdAtMs())
                    .append(' ');
            b.append(c.actorId()).append(' ').append(c.clientId()).append(' ').append(c.clientCommitId());
            for (var ch : c.changes()) {
                b.append("\n  ")
                        .append(ch.table())
                        .append(' ')
                        .append(ch.rowId())
                        .append(' ')
                        .append(ch.op());
                b.append(' ').append(ch.rowVersion()).append(' ').append(new TreeMap<>(ch.scopes()));
                b.append(' ').append(ch.row() == null ? "null" : Arrays.deepToString(ch.row()));
            }
        }
        return b.toString();
    }

    @AfterAll
    void dropSchemas() {
        try {
            for (String s : createdSchemas) {
                await(pool().query("DROP SCHEMA IF EXISTS \"" + s + "\" CASCADE")
                        .execute());
            }
        } finally {
            if (pool != null) {
                await(pool.close());
                await(vertx.close());
                pool = null;
                vertx = null;
            }
        }
    }

    /**
     * The commit notifications of {@code partition} heard on {@code channel} from now on, in arrival order, on a
     * LISTEN connection of their own (closed with the class's vertx).
     */
    private java.util.concurrent.BlockingQueue<String> listen(String channel, String partition) {
        java.util.concurrent.BlockingQueue<String> heard = new java.util.concurrent.LinkedBlockingQueue<>();
        PgConnectOptions options = PgConnectOptions.fromUri(TestPostgres.url())
                .setUser(TestPostgres.user())
                .setPassword(TestPostgres.password());
        pool();
        io.vertx.mutiny.pgclient.PgConnection conn =
                await(io.vertx.mutiny.pgclient.PgConnection.connect(vertx, options));
        conn.notificationHandler(n -> {
            if (n.getPayload().startsWith(partition + ":")) {
                heard.add(n.getPayload());
            }
        });
        await(conn.query("LISTEN \"" + channel + "\"").execute());
        return heard;
    }

    private void sql(String pgSchema, String statement) {
        await(pool().query(statement.replace("$S", "\"" + pgSchema + "\"")).execute());
    }

    private List<String> catalog(String pgSchema) {
        List<String> out = new ArrayList<>();
        for (Row r : await(
                pool().preparedQuery("SELECT table_name || '.' || column_name || ':' || data_type || ':' || is_nullable"
                                + " FROM information_schema.columns WHERE table_schema = $1 ORDER BY 1")
                        .execute(Tuple.of(pgSchema)))) {
            out.add(r.getString(0));
        }
        return out;
    }

    private String marker(String pgSchema) {
        Row r = await(pool().query("SELECT schema_version || '|' || layouts FROM \"" + pgSchema + "\".sync_schema")
                        .execute())
                .iterator()
                .next();
        return r.getString(0);
    }

    /** Opens a fresh storage, applies {@code schema}, tampers with it, and expects the same-version refusal. */
    private StorageException refusal(Consumer<String> tamper, CompiledSchema reopenWith) {
        PostgresSyncStorage first = newStorage();
        await(first.ensureSchema(schema));
        tamper.accept(first.pgSchema());
        List<String> catalogBefore = catalog(first.pgSchema());
        String markerBefore = marker(first.pgSchema());
        StorageException e =
                storageFailure(new PostgresSyncStorage(pool(), first.pgSchema(), PostgresSyncStorage.Settings.DEFAULTS)
                        .ensureSchema(reopenWith));
        assertEquals(catalogBefore, catalog(first.pgSchema()), "a refused open writes no DDL");
        assertEquals(markerBefore, marker(first.pgSchema()), "a refused open writes no rows");
        assertFalse(
                e.getMessage().contains("tasks") || e.getMessage().contains("_sync_"),
                "the message never names tables or columns");
        return e;
    }

    private static Map<String, Object> details(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    // ---- §8.2 realtime acks ----------------------------------------------------------------------------------

    /**
     * One commit fanned out to many sockets of one scope brings an ack from each within milliseconds: the pod writes
     * them in batches on one connection at a time ({@link CursorAcks}). Here 600 acks at once through a pool of one
     * connection whose wait queue holds 4 requests (one statement per ack overflowed it) are all stored; acks of one
     * client coalesce to the newest cursor; an ack of another actor or an old log epoch changes nothing.
     */
    @Test
    void acksOfManySocketsAtOnceAreWrittenInBatchesOnOneConnection() throws Exception {
        PostgresSyncStorage main = (PostgresSyncStorage) storage;
        String p = newPartition();
        commit(p, List.of(taskUpsert("t1", "P1", "O1", 1)));
        commit(p, List.of(taskUpsert("t2", "P1", "O1", 1)));
        String epoch = await(main.readPartition(p)).logEpoch();
        int clients = 600;
        for (int i = 0; i < clients; i++) {
            await(main.upsertClient(new ClientRecord(p, "c" + i, "actor", 0L, 1_000L, "[]", 1, schema.version())));
        }
        Vertx own = Vertx.vertx();
        Pool narrow = PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(1).setMaxWaitQueueSize(4))
                .connectingTo(PgConnectOptions.fromUri(TestPostgres.url())
                        .setUser(TestPostgres.user())
                        .setPassword(TestPostgres.password())
                        .setCachePreparedStatements(true))
                .using(own)
                .build();
        try {
            PostgresSyncStorage pod =
                    new PostgresSyncStorage(narrow, main.pgSchema(), PostgresSyncStorage.Settings.DEFAULTS);
            await(pod.ensureSchema(schema));
            List<CompletableFuture<Boolean>> answers = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                answers.add(pod.advanceClientCursor(p, "c" + i, "actor", epoch, i % 2 == 0 ? 2L : 1L, 2_000L + i)
                        .subscribeAsCompletionStage());
            }
            // one client acks twice more at once: the newest cursor wins, both are answered
            answers.add(
                    pod.advanceClientCursor(p, "c1", "actor", epoch, 2L, 5_000L).subscribeAsCompletionStage());
            answers.add(
                    pod.advanceClientCursor(p, "c1", "actor", epoch, 1L, 4_000L).subscribeAsCompletionStage());
            CompletableFuture<Boolean> otherActor = pod.advanceClientCursor(p, "c3", "intruder", epoch, 2L, 9_000L)
                    .subscribeAsCompletionStage();
            CompletableFuture<Boolean> oldEpoch = pod.advanceClientCursor(p, "c5", "actor", "old-epoch", 2L, 9_000L)
                    .subscribeAsCompletionStage();
            for (CompletableFuture<Boolean> a : answers) {
                assertTrue(a.get(30, TimeUnit.SECONDS), "every ack stored");
            }
            assertFalse(otherActor.get(30, TimeUnit.SECONDS), "bound to the record's actor");
            assertFalse(oldEpoch.get(30, TimeUnit.SECONDS), "bound to the live log epoch");
            for (int i = 0; i < clients; i++) {
                ClientRecord c = await(main.readClient(p, "c" + i));
                long expected = i % 2 == 0 || i == 1 ? 2L : 1L;
                assertEquals(expected, c.cursor(), "c" + i);
            }
            assertEquals(5_000L, await(main.readClient(p, "c1")).updatedAtMs(), "the newest time of c1's acks");
            assertEquals(2_003L, await(main.readClient(p, "c3")).updatedAtMs(), "the intruder's ack changed nothing");
        } finally {
            narrow.close().await().atMost(Duration.ofSeconds(10));
            own.close().await().atMost(Duration.ofSeconds(10));
        }
    }

    // ---- request entry / exit ---------------------------------------------------------------------------

    /** The entry read's touch writes last-seen like touchPartition: in memory, then at most every refresh interval. */
    @Test
    void enterRequestWritesLastSeenOnlyAfterTheRefreshInterval() {
        PostgresSyncStorage main = (PostgresSyncStorage) storage;
        PostgresSyncStorage other =
                new PostgresSyncStorage(pool(), main.pgSchema(), PostgresSyncStorage.Settings.DEFAULTS);
        await(other.ensureSchema(schema));
        String p = "p-" + UUID.randomUUID();
        int running = schema.version();
        await(main.enterRequest(p, "c", running, 1_000L));
        await(main.enterRequest(p, "c", running, 2_000L));
        assertEquals(2_000L, await(main.readPartition(p)).lastSeenAtMs(), "this instance sees its touches");
        assertEquals(1_000L, await(other.readPartition(p)).lastSeenAtMs(), "not written yet");
        long later = 1_000L + PartitionRegistry.LAST_SEEN_REFRESH_MS;
        assertEquals(
                later,
                await(main.enterRequest(p, "c", running, later)).partition().lastSeenAtMs());
        assertEquals(later, await(other.readPartition(p)).lastSeenAtMs(), "written once stale");
        assertEquals(
                later,
                await(other.enterRequest(p, "c", running, later - 1))
                        .partition()
                        .lastSeenAtMs());
    }

    /** A failing upsert fails the exit (nothing is read past it) and leaves the pooled connection usable. */
    @Test
    void finishRequestFailsWithTheUpsertFailure() {
        String p = newPartition();
        int running = schema.version();
        assertThrows(
                Throwable.class,
                () -> await(storage.finishRequest(p, running, new ClientRecord(p, "c", "a", 1, 1L, "not json", 3, 1))));
        for (int i = 0; i < 10; i++) {
            assertEquals(0L, await(storage.finishRequest(p, running, null)).horizonSeq());
        }
        assertEquals(null, await(storage.readClient(p, "c")));
    }

    // ---- the push transaction: lock, serve gate, groups (§2.4, §6.3) ----------------------------------------

    /**
     * The gate is read after the lock is granted: a transaction that held the partition lock and activated a
     * checkpoint while the push waited is seen (a gate read from the waiting statement's snapshot would still
     * list the checkpoint as pending).
     */
    @Test
    void theLockedGateSeesWhatTheLockHolderCommitted() throws Exception {
        String p = newPartition();
        int running = schema.version();
        String s = ((PostgresSyncStorage) storage).pgSchema();
        await(storage.declareCheckpoint(p, CP, running, 100L));
        SqlConnection holder = await(pool().getConnection());
        CompletableFuture<ServeGate> pushGate;
        try {
            await(holder.query("BEGIN").execute());
            await(holder.preparedQuery("SELECT 1 FROM \"" + s + "\".sync_partitions WHERE partition_id = $1 FOR UPDATE")
                    .execute(Tuple.of(p)));
            await(holder.preparedQuery("UPDATE \"" + s + "\".sync_backfill_checkpoints SET state = 'activated'"
                            + " WHERE partition_id = $1")
                    .execute(Tuple.of(p)));
            pushGate = storage.inPartitionTransaction(p, tx -> tx.readServeGate(running))
                    .subscribeAsCompletionStage();
            assertEquals(
                    1L,
                    countOnceAny(
                            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1",
                            Tuple.of("%" + s + "%sync_partitions%FOR UPDATE%")),
                    "the push waits for the partition lock");
            assertFalse(pushGate.isDone());
        } finally {
            await(holder.query("COMMIT").execute());
            await(holder.close());
        }
        assertEquals(
                List.of(),
                pushGate.get(30, TimeUnit.SECONDS).pending(),
                "the activation committed before the lock was granted");
        assertEquals(
                Boolean.TRUE,
                await(storage.inPartitionTransaction(
                        newPartition(), tx -> Uni.createFrom().item(Boolean.TRUE))));
        assertEquals(
                StorageException.UNKNOWN_PARTITION,
                storageFailure(storage.inPartitionTransaction(
                                "p-missing-" + UUID.randomUUID(),
                                tx -> Uni.createFrom().item(true)))
                        .code());
    }

    /** A work that holds {@code p}'s queue until {@code release}, then appends one commit: what queues behind it forms one group. */
    private CompletableFuture<Long> blocker(String p, CompletableFuture<Void> release) {
        return storage.inPartitionTransaction(
                        p,
                        tx -> Uni.createFrom()
                                .completionStage(release)
                                .chain(() -> tx.appendCommit(
                                        "actor-1",
                                        "client-1",
                                        "cc-blocker",
                                        5_000L,
                                        List.of(taskUpsert("blocker", "P1", "O1", 1)),
                                        StoredCommit.UNTRACED)))
                .subscribeAsCompletionStage();
    }

    /**
     * Works queued behind a running one share a transaction, each in a savepoint (nested, never released): a
     * failing work — after its writes, or on a duplicate idempotency record — rolls back alone, the others
     * commit with dense sequence numbers.
     */
    @Test
    void aFailingWorkInAGroupRollsBackAlone() throws Exception {
        String p = newPartition();
        java.util.concurrent.BlockingQueue<String> announced =
                listen(((PostgresSyncStorage) storage).notificationChannel(), p);
        long rerunsBefore = ((PostgresSyncStorage) storage).pipelinedReruns();
        await(push((PostgresSyncStorage) storage, p, "taken"));
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Long> blocker = blocker(p, release);
        List<CompletableFuture<Long>> group = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            String id = "g" + i;
            String key = i == 4 ? "cc-taken" : "cc-" + id;
            boolean fails = i % 2 == 1;
            group.add(storage.inPartitionTransaction(
                            p,
                            tx -> tx.readServeGate(schema.version())
                                    .chain(gate -> tx.appendCommit(
                                            "actor-1",
                                            "client-1",
                                            key,
                                            5_000L,
                                            List.of(taskUpsert(id, "P1", "O1", 1)),
                                            StoredCommit.UNTRACED))
                                    .call(seq -> tx.upsertRow(
                                            "tasks",
                                            new StoredRow(
                                                    id,
                                                    1,
                                                    task(id, "P1", "O1", "x"),
                                                    new long[10],
                                                    taskScopes("P1", "O1"))))
                                    .call(seq -> tx.savePushResult("client-1", key, applied(seq, "ok")))
                                    .call(seq -> fails
                                            ? Uni.createFrom()
                                                    .failure(new IllegalStateException("work " + id + " fails"))
                                            : Uni.createFrom().voidItem()))
                    .subscribeAsCompletionStage());
        }
        release.complete(null);
        assertEquals(2L, blocker.get(30, TimeUnit.SECONDS));
        List<Long> seqs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            String id = "g" + i;
            if (i % 2 == 1 || i == 4) {
                CompletableFuture<Long> f = group.get(i);
                Throwable e = assertThrows(Exception.class, () -> f.get(30, TimeUnit.SECONDS));
                if (i == 4) {
                    assertEquals(
                            StorageException.DUPLICATE_PUSH_RESULT,
                            storageFailure(Uni.createFrom().failure(e.getCause()))
                                    .code());
                }
                assertTrue(await(storage.readRows(p, "tasks", List.of(id))).isEmpty(), id + " rolled back");
            } else {
                seqs.add(group.get(i).get(30, TimeUnit.SECONDS));
                assertEquals(1, await(storage.readRows(p, "tasks", List.of(id))).size(), id + " committed");
            }
        }
        assertEquals(List.of(3L, 4L, 5L), seqs, "dense, in queue order");
        assertTrue(
                ((PostgresSyncStorage) storage).pipelinedReruns() > rerunsBefore,
                "the duplicate record failed the pipelined attempt; the group ran again, each work's writes awaited");
        assertEquals(5L, await(storage.readPartition(p)).maxCommitSeq());
        // §8.2: each transaction announced its commits once, the group's surviving commits as one range
        List<String> heard = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            heard.add(announced.poll(30, TimeUnit.SECONDS));
        }
        assertEquals(List.of(p + ":1", p + ":2", p + ":3-5"), heard);
        CommitWindow all =
                await(storage.readCommits(p, new CommitQuery("tasks", Map.of("project_id", Set.of("P1")), 0, 5, 1000)));
        assertEquals(
                List.of(1L, 2L, 3L, 4L, 5L),
                all.commits().stream().map(c -> c.commitSeq()).toList());
        assertEquals(
                1L,
                await(storage.findPushResult(p, "client-1", "cc-taken")).commitSeq(),
                "the duplicate kept the first record");
    }

    /**
     * §6.4 (each commit atomic). A group's works are pipelined, the {@code COMMIT} right behind their writes. A write
     * PostgreSQL refuses (here a NOT NULL column) aborts the transaction, so that {@code COMMIT} rolls back; the
     * group runs again with each work's writes awaited in its savepoint: the refused work fails alone and writes
     * nothing — no row, no commit, no idempotency record — and the others commit, dense in queue order. Repeated,
     * as where the refusal lands in the pipeline varies.
     */
    @RepeatedTest(20)
    void aWriteRefusedInThePipelineFailsItsWorkAlone() throws Exception {
        PostgresSyncStorage pg = (PostgresSyncStorage) storage;
        String p = newPartition();
        long rerunsBefore = pg.pipelinedReruns();
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Long> blocker = blocker(p, release);
        int refused = 3;
        List<CompletableFuture<Long>> group = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String id = "w" + i;
            Object[] values = task(id, "P1", "O1", "x");
            if (i == refused) {
                values[1] = null; // project_id is NOT NULL in the projection table
            }
            StoredRow row = new StoredRow(id, 1, values, new long[10], taskScopes("P1", "O1"));
            group.add(storage.inPartitionTransaction(
                            p,
                            tx -> tx.appendCommit(
                                            "actor-1",
                                            "client-1",
                                            "cc-" + id,
                                            5_000L,
                                            List.of(taskUpsert(id, "P1", "O1", 1)),
                                            StoredCommit.UNTRACED)
                                    .call(seq -> tx.upsertRow("tasks", row))
                                    .call(seq -> tx.savePushResult("client-1", "cc-" + id, applied(seq, "ok"))))
                    .subscribeAsCompletionStage());
        }
        release.complete(null);
        assertEquals(1L, blocker.get(30, TimeUnit.SECONDS));
        List<Long> seqs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String id = "w" + i;
            CompletableFuture<Long> f = group.get(i);
            if (i == refused) {
                assertThrows(Exception.class, () -> f.get(30, TimeUnit.SECONDS), id + " fails");
                assertTrue(await(storage.readRows(p, "tasks", List.of(id))).isEmpty(), id + " wrote no row");
                assertNull(await(storage.findPushResult(p, "client-1", "cc-" + id)), id + " left no record");
            } else {
                seqs.add(f.get(30, TimeUnit.SECONDS));
                assertEquals(1, await(storage.readRows(p, "tasks", List.of(id))).size(), id + " committed");
                assertNotNull(await(storage.findPushResult(p, "client-1", "cc-" + id)), id + " kept its record");
            }
        }
        assertEquals(List.of(2L, 3L, 4L, 5L, 6L), seqs, "dense, in queue order");
        assertEquals(6L, await(storage.readPartition(p)).maxCommitSeq());
        assertTrue(pg.pipelinedReruns() > rerunsBefore, "the refused statement failed the pipelined attempt");
    }

    /**
     * §6.4 with the transaction on the connection ({@code BEGIN} and the pipelined {@code COMMIT} sent by the
     * queue): a partition keeps its connection while its groups follow each other and gives it back when its queue
     * is empty or a group failed, never inside a transaction. 240 pushes race over three partitions; every fifth
     * work fails after its writes, every seventh hits a duplicate idempotency record. Each outcome is the work's own,
     * each partition's sequences stay dense, and then every connection of the pool can be taken at once, each
     * outside any transaction. Repeated, as how the pushes fall into groups varies.
     */
    @RepeatedTest(10)
    void groupsThatFollowEachOtherGiveTheirConnectionBack() throws Exception {
        PostgresSyncStorage pg = (PostgresSyncStorage) storage;
        List<String> partitions = List.of(newPartition(), newPartition(), newPartition());
        for (String p : partitions) {
            await(push(pg, p, "taken"));
        }
        List<CompletableFuture<Long>> pushes = new ArrayList<>();
        for (int i = 0; i < 240; i++) {
            String p = partitions.get(i % 3);
            String id = "r" + i;
            String key = i % 7 == 0 ? "cc-taken" : "cc-" + id;
            boolean fails = i % 5 == 0;
            pushes.add(storage.inPartitionTransaction(
                            p,
                            tx -> tx.appendCommit(
                                            "actor-1",
                                            "client-1",
                                            key,
                                            5_000L,
                                            List.of(taskUpsert(id, "P1", "O1", 1)),
                                            StoredCommit.UNTRACED)
                                    .call(seq -> tx.savePushResult("client-1", key, applied(seq, "ok")))
                                    .call(seq -> fails
                                            ? Uni.createFrom().failure(new IllegalStateException(id + " fails"))
                                            : Uni.createFrom().voidItem()))
                    .subscribeAsCompletionStage());
        }
        long[] committed = new long[3];
        for (int i = 0; i < 240; i++) {
            CompletableFuture<Long> f = pushes.get(i);
            if (i % 7 == 0 || i % 5 == 0) {
                int n = i;
                assertThrows(Exception.class, () -> f.get(30, TimeUnit.SECONDS), "r" + n + " fails");
            } else {
                assertTrue(f.get(30, TimeUnit.SECONDS) > 1L);
                committed[i % 3]++;
            }
        }
        for (int k = 0; k < 3; k++) {
            assertEquals(
                    1 + committed[k],
                    await(storage.readPartition(partitions.get(k))).maxCommitSeq(),
                    "dense: one commit per applied push");
        }
        List<SqlConnection> all = new ArrayList<>();
        try {
            for (int i = 0; i < 8; i++) {
                all.add(pool().getConnection().await().atMost(Duration.ofSeconds(10)));
            }
            for (SqlConnection c : all) {
                // in a transaction left open, now() is the transaction's start, not this statement's
                Row r = await(c.query("SELECT now() = statement_timestamp()").execute())
                        .iterator()
                        .next();
                assertTrue(r.getBoolean(0), "a pooled connection outside any transaction");
            }
        } finally {
            for (SqlConnection c : all) {
                await(c.close());
            }
        }
    }

    // ---- the group read-ahead (hinted works' idempotency lookups and row reads in the first round trip) -----

    private static PushReadHint hint(String key, String... rowIds) {
        return new PushReadHint("client-1", key, Map.of("tasks", List.of(rowIds)));
    }

    private static StoredRow taskRow(String id, long version, String title) {
        return new StoredRow(id, version, task(id, "P1", "O1", title), new long[10], taskScopes("P1", "O1"));
    }

    private static String render(Map<String, StoredRow> rows) {
        StringBuilder b = new StringBuilder("{");
        rows.forEach((id, r) -> b.append(id)
                .append('=')
                .append(r.serverVersion())
                .append('/')
                .append(r.values()[3])
                .append(Arrays.toString(r.columnVersions()))
                .append(new TreeMap<>(r.scopes()))
                .append(';'));
        return b.append('}').toString();
    }

    private String renderAll(String partition) {
        StringBuilder b = new StringBuilder();
        for (StoredRow r : await(storage.readAllRows(partition, "tasks"))) {
            b.append(render(Map.of(r.rowId(), r)));
        }
        return b.toString();
    }

    /** Holds the partition's queue: works queued meanwhile run as the next group, in queue order. */
    /**
     * Issue 44, hole 4: the works of one group each complete on the Vert.x context they were queued on (a request's
     * duplicated context, which holds its request id for the log lines), never on the context of the request whose
     * connection ran the group.
     */
    @Test
    void eachGroupedWorkCompletesOnItsCallersContext() throws Exception {
        String partition = newPartition();
        List<CompletableFuture<?>> blockers = new ArrayList<>();
        CompletableFuture<Void> release = holdQueue(partition, blockers);
        io.vertx.core.Vertx core = vertx.getDelegate();
        List<CompletableFuture<Object>> seen = new ArrayList<>();
        java.util.concurrent.CountDownLatch queued = new java.util.concurrent.CountDownLatch(6);
        for (int i = 0; i < 6; i++) {
            io.vertx.core.impl.ContextInternal caller =
                    ((io.vertx.core.impl.ContextInternal) core.getOrCreateContext()).duplicate();
            caller.putLocal("caller", "caller-" + i);
            CompletableFuture<Object> done = new CompletableFuture<>();
            seen.add(done);
            caller.runOnContext(v -> {
                storage.inPartitionTransaction(partition, tx -> Uni.createFrom().item("work"))
                        .subscribe()
                        .with(
                                item -> {
                                    io.vertx.core.Context now = io.vertx.core.Vertx.currentContext();
                                    done.complete(now == null ? "no context" : now.getLocal("caller"));
                                },
                                done::completeExceptionally);
                queued.countDown();
            });
        }
        assertTrue(queued.await(30, TimeUnit.SECONDS), "the six works were queued behind the blocker");
        release.complete(null);
        for (int i = 0; i < 6; i++) {
            assertEquals("caller-" + i, seen.get(i).get(30, TimeUnit.SECONDS), "work " + i);
        }
        for (CompletableFuture<?> b : blockers) {
            b.get(30, TimeUnit.SECONDS);
        }
    }

    private CompletableFuture<Void> holdQueue(String partition, List<CompletableFuture<?>> blockers) {
        return holdQueue(storage, partition, blockers);
    }

    private static CompletableFuture<Void> holdQueue(
            SyncStorage storage, String partition, List<CompletableFuture<?>> blockers) {
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> holding = new CompletableFuture<>();
        blockers.add(storage.inPartitionTransaction(partition, tx -> {
                    holding.complete(null);
                    return Uni.createFrom().completionStage(release);
                })
                .subscribeAsCompletionStage());
        // Its group is formed once it runs: a work queued before that could join the blocker's group (the queue
        // of the partition's previous push may still be draining), and the works queued next would be split
        // over two groups instead of forming one.
        try {
            holding.get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("the blocking work never ran", e);
        }
        return release;
    }

    /**
     * One push-like work: the locked idempotency lookup and the row read the hint announces, then (for a new
     * commit) an append, row writes and the record. Yields what it read and the commit seq.
     */
    private static Function<PushTx, Uni<String>> readThenPush(
            int running, String key, String existing, String fresh, String title) {
        return tx -> tx.readServeGate(running)
                .chain(g -> tx.findPushResult("client-1", key))
                .chain(found -> tx.readRows("tasks", fresh == null ? List.of(existing) : List.of(existing, fresh))
                        .chain(read -> {
                            String seen = (found == null ? "new" : "found@" + found.commitSeq()) + " " + render(read);
                            if (found != null) {
                                return Uni.createFrom().item(seen);
                            }
                            StoredRow stored = read.get(existing);
                            long version = stored == null ? 1 : stored.serverVersion() + 1;
                            return tx.appendCommit(
                                            "actor-1",
                                            "client-1",
                                            key,
                                            5_000L,
                                            List.of(taskUpsert(existing, "P1", "O1", version)),
                                            StoredCommit.UNTRACED)
                                    .call(seq -> tx.upsertRow("tasks", taskRow(existing, version, title), stored))
                                    .call(seq -> fresh == null
                                            ? Uni.createFrom().voidItem()
                                            : tx.upsertRow("tasks", taskRow(fresh, 1, title)))
                                    .call(seq -> tx.savePushResult("client-1", key, applied(seq, title)))
                                    .map(seq -> seen + " -> " + seq);
                        }));
    }

    /**
     * Disjoint hinted works of one group answer their idempotency lookup and row reads from the group's
     * read-ahead, and see and produce exactly what the same works run one by one without hints do.
     */
    @Test
    void disjointWorksOfAGroupReadAheadAndMatchSequentialWorks() throws Exception {
        PostgresSyncStorage pg = (PostgresSyncStorage) storage;
        int running = schema.version();
        String grouped = newPartition();
        String sequential = newPartition();
        for (String p : List.of(grouped, sequential)) {
            for (int i = 0; i < 4; i++) {
                await(push(pg, p, "s" + i));
            }
        }
        List<CompletableFuture<?>> blockers = new ArrayList<>();
        CompletableFuture<Void> release = holdQueue(grouped, blockers);
        long answersBefore = pg.readAheadAnswers();
        List<CompletableFuture<String>> group = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            // work 4 replays an existing record; work 5 reads rows no one stores
            String key = i == 4 ? "cc-s0" : "cc-w" + i;
            String ex = i == 4 ? "x4" : i == 5 ? "absent5" : "s" + i;
            String fresh = i == 4 ? null : "new" + i;
            group.add(storage.inPartitionTransaction(
                            grouped,
                            fresh == null ? hint(key, ex) : hint(key, ex, fresh),
                            readThenPush(running, key, ex, fresh, "t" + i))
                    .subscribeAsCompletionStage());
        }
        release.complete(null);
        blockers.get(0).get(30, TimeUnit.SECONDS);
        List<String> seenGrouped = new ArrayList<>();
        for (CompletableFuture<String> f : group) {
            seenGrouped.add(f.get(30, TimeUnit.SECONDS));
        }
        assertEquals(
                12L, pg.readAheadAnswers() - answersBefore, "every lookup and row read of the six works read ahead");
        List<String> seenSequential = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String key = i == 4 ? "cc-s0" : "cc-w" + i;
            String ex = i == 4 ? "x4" : i == 5 ? "absent5" : "s" + i;
            String fresh = i == 4 ? null : "new" + i;
            long before = pg.readAheadAnswers();
            seenSequential.add(
                    await(storage.inPartitionTransaction(sequential, readThenPush(running, key, ex, fresh, "t" + i))));
            assertEquals(before, pg.readAheadAnswers(), "no hint, no read-ahead");
        }
        assertEquals(seenSequential, seenGrouped);
        assertTrue(
                seenGrouped.get(0).startsWith("new {s0=1/t[")
                        && seenGrouped.get(0).endsWith("-> 5"),
                seenGrouped.get(0));
        assertEquals("found@1 {}", seenGrouped.get(4));
        assertEquals("new {} -> 9", seenGrouped.get(5));
        assertEquals(renderAll(sequential), renderAll(grouped));
        assertEquals(9L, await(storage.readPartition(grouped)).maxCommitSeq());
        for (String key : List.of("cc-w0", "cc-w1", "cc-w2", "cc-w3", "cc-w5", "cc-s0")) {
            assertEquals(
                    await(storage.findPushResult(sequential, "client-1", key)).commitSeq(),
                    await(storage.findPushResult(grouped, "client-1", key)).commitSeq(),
                    key);
        }
    }

    /**
     * Works whose hints share a row or an idempotency key read as without a hint; a read-ahead of a row that
     * an earlier work of the group wrote anyway — an unhinted work, or a hinted one writing beyond its hint (a
     * §6.11 cascade) — or that the work itself wrote, is not used: every read sees the group's earlier writes.
     */
    @Test
    void overlappingOrOverwrittenReadAheadFallsBackToReads() throws Exception {
        PostgresSyncStorage pg = (PostgresSyncStorage) storage;
        int running = schema.version();
        String p = newPartition();
        await(push(pg, p, "x"));
        List<CompletableFuture<?>> blockers = new ArrayList<>();
        CompletableFuture<Void> release = holdQueue(pg, p, blockers);
        long answersBefore = pg.readAheadAnswers();
        Map<String, CompletableFuture<String>> works = new LinkedHashMap<>();
        // A and B share row x; C shares A's key: none of them reads ahead
        works.put(
                "A",
                pg.inPartitionTransaction(p, hint("cc-A", "x"), readThenPush(running, "cc-A", "x", null, "A"))
                        .subscribeAsCompletionStage());
        works.put(
                "B",
                pg.inPartitionTransaction(p, hint("cc-B", "x"), readThenPush(running, "cc-B", "x", null, "B"))
                        .subscribeAsCompletionStage());
        works.put(
                "C",
                pg.inPartitionTransaction(p, hint("cc-A", "c"), readThenPush(running, "cc-A", "c", null, "C"))
                        .subscribeAsCompletionStage());
        // D (unhinted) writes y, which E read ahead
        works.put(
                "D",
                pg.inPartitionTransaction(
                                p,
                                tx -> tx.upsertRow("tasks", taskRow("y", 7, "D"))
                                        .replaceWith("D"))
                        .subscribeAsCompletionStage());
        works.put(
                "E",
                pg.inPartitionTransaction(p, hint("cc-E", "y"), readThenPush(running, "cc-E", "y", null, "E"))
                        .subscribeAsCompletionStage());
        // F writes g beyond its hint, which G read ahead
        works.put(
                "F",
                pg.inPartitionTransaction(
                                p,
                                hint("cc-F", "f"),
                                tx -> tx.readServeGate(running)
                                        .chain(g -> tx.findPushResult("client-1", "cc-F"))
                                        .chain(found -> tx.readRows("tasks", List.of("f")))
                                        .chain(read -> tx.appendCommit(
                                                        "actor-1",
                                                        "client-1",
                                                        "cc-F",
                                                        5_000L,
                                                        List.of(
                                                                taskUpsert("f", "P1", "O1", 1),
                                                                taskUpsert("g", "P1", "O1", 1)),
                                                        StoredCommit.UNTRACED)
                                                .call(seq -> tx.upsertRow("tasks", taskRow("f", 1, "F")))
                                                .call(seq -> tx.upsertRow("tasks", taskRow("g", 1, "F")))
                                                .call(seq -> tx.savePushResult("client-1", "cc-F", applied(seq, "F")))
                                                .map(seq -> render(read) + " -> " + seq)))
                        .subscribeAsCompletionStage());
        works.put(
                "G",
                pg.inPartitionTransaction(p, hint("cc-G", "g"), readThenPush(running, "cc-G", "g", null, "G"))
                        .subscribeAsCompletionStage());
        // H reads its row again after writing it
        works.put(
                "H",
                pg.inPartitionTransaction(
                                p,
                                hint("cc-H", "h"),
                                tx -> readThenPush(running, "cc-H", "h", null, "H")
                                        .apply(tx)
                                        .chain(seen -> tx.readRows("tasks", List.of("h"))
                                                .map(again -> seen + " again " + render(again))))
                        .subscribeAsCompletionStage());
        release.complete(null);
        blockers.get(0).get(30, TimeUnit.SECONDS);
        Map<String, String> seen = new LinkedHashMap<>();
        for (Map.Entry<String, CompletableFuture<String>> e : works.entrySet()) {
            seen.put(e.getKey(), e.getValue().get(30, TimeUnit.SECONDS));
        }
        assertTrue(seen.get("A").startsWith("new {x=1/t[") && seen.get("A").endsWith("-> 2"), seen.get("A"));
        assertTrue(seen.get("B").startsWith("new {x=2/A[") && seen.get("B").endsWith("-> 3"), seen.get("B"));
        assertEquals("found@2 {}", seen.get("C"), "C sees the record A saved");
        assertTrue(seen.get("E").startsWith("new {y=7/D[") && seen.get("E").endsWith("-> 4"), seen.get("E"));
        assertEquals("{} -> 5", seen.get("F"));
        assertTrue(seen.get("G").startsWith("new {g=1/F[") && seen.get("G").endsWith("-> 6"), seen.get("G"));
        assertTrue(seen.get("H").startsWith("new {} -> 7 again {h=1/H["), seen.get("H"));
        // read ahead: E's key (its row was overwritten), F's key and rows, G's key, H's key and row
        assertEquals(6L, pg.readAheadAnswers() - answersBefore);
        assertEquals(7L, await(pg.readPartition(p)).maxCommitSeq());
    }

    /** A failing work of a read-ahead group rolls back alone; the others commit with dense sequence numbers. */
    @Test
    void aFailingWorkOfAReadAheadGroupRollsBackAlone() throws Exception {
        PostgresSyncStorage pg = (PostgresSyncStorage) storage;
        int running = schema.version();
        String p = newPartition();
        await(push(pg, p, "s"));
        List<CompletableFuture<?>> blockers = new ArrayList<>();
        CompletableFuture<Void> release = holdQueue(p, blockers);
        long answersBefore = pg.readAheadAnswers();
        List<CompletableFuture<String>> group = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String id = "g" + i;
            boolean fails = i % 2 == 1;
            group.add(storage.inPartitionTransaction(
                            p,
                            hint("cc-" + id, id),
                            tx -> readThenPush(running, "cc-" + id, id, null, id)
                                    .apply(tx)
                                    .call(seen -> fails
                                            ? Uni.createFrom()
                                                    .failure(new IllegalStateException("work " + id + " fails"))
                                            : Uni.createFrom().voidItem()))
                    .subscribeAsCompletionStage());
        }
        release.complete(null);
        blockers.get(0).get(30, TimeUnit.SECONDS);
        List<String> seqs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String id = "g" + i;
            CompletableFuture<String> f = group.get(i);
            if (i % 2 == 1) {
                assertThrows(Exception.class, () -> f.get(30, TimeUnit.SECONDS));
                assertTrue(await(storage.readRows(p, "tasks", List.of(id))).isEmpty(), id + " rolled back");
                assertEquals(null, await(storage.findPushResult(p, "client-1", "cc-" + id)), id + " kept no record");
            } else {
                String seen = f.get(30, TimeUnit.SECONDS);
                seqs.add(seen.substring(seen.lastIndexOf(' ') + 1));
                assertEquals(1, await(storage.readRows(p, "tasks", List.of(id))).size(), id + " committed");
            }
        }
        assertEquals(List.of("2", "3", "4"), seqs, "dense, in queue order");
        assertEquals(12L, pg.readAheadAnswers() - answersBefore);
        assertEquals(4L, await(storage.readPartition(p)).maxCommitSeq());
        CommitWindow all =
                await(storage.readCommits(p, new CommitQuery("tasks", Map.of("project_id", Set.of("P1")), 0, 4, 1000)));
        assertEquals(
                List.of(1L, 2L, 3L, 4L),
                all.commits().stream().map(c -> c.commitSeq()).toList());
    }

    // ---- the commit append statement (append, row writes, idempotency record) ------------------------------

    /** The record joins the held append's statement; a key that already holds a result rolls the whole commit back. */
    @Test
    void aDuplicateRecordJoinedToTheAppendRollsTheCommitBack() {
        String p = newPartition();
        long first = await(push((PostgresSyncStorage) storage, p, "dup"));
        Map<String, Long> before = countAllTables();
        PartitionState stateBefore = await(storage.readPartition(p));
        StorageException e = storageFailure(push((PostgresSyncStorage) storage, p, "dup"));
        assertEquals(StorageException.DUPLICATE_PUSH_RESULT, e.code());
        assertEquals(before, countAllTables(), "the duplicate wrote nothing");
        assertEquals(stateBefore, await(storage.readPartition(p)));
        assertEquals(
                first, await(storage.findPushResult(p, "client-1", "cc-dup")).commitSeq());
        assertEquals(first + 1, await(push((PostgresSyncStorage) storage, p, "next")), "no gap after the rollback");
    }

    /** Writes issued behind a held append keep their order; a read in between sends them all first. */
    @Test
    void writesBehindAHeldAppendKeepTheirOrderAndAReadSeesThem() {
        String p = newPartition();
        StoredRow row = new StoredRow("w", 1, task("w", "P1", "O1", "t"), new long[10], taskScopes("P1", "O1"));
        Map<String, StoredRow> seen = await(storage.inPartitionTransaction(
                p,
                tx -> tx.appendCommit(
                                "actor-1",
                                "client-1",
                                "cc-w1",
                                5_000L,
                                List.of(taskUpsert("w", "P1", "O1", 1)),
                                StoredCommit.UNTRACED)
                        .call(seq -> tx.upsertRow("tasks", row))
                        // a second append releases the first (held) one
                        .chain(seq -> tx.appendCommit(
                                "actor-1",
                                "client-1",
                                "cc-w2",
                                5_000L,
                                List.of(ChangeToWrite.delete("tasks", "w", taskScopes("P1", "O1"))),
                                StoredCommit.UNTRACED))
                        .call(seq -> tx.deleteRow("tasks", "w", seq))
                        .call(seq -> tx.upsertRow("tasks", row))
                        .chain(seq -> tx.readRows("tasks", List.of("w")))
                        // not held any more: the record goes out on its own
                        .call(rows -> tx.savePushResult("client-1", "cc-w2", applied(2, "ok")))));
        assertEquals(1L, seen.get("w").serverVersion(), "the read ran after the delete and the upsert behind it");
        assertEquals(2L, await(storage.readPartition(p)).maxCommitSeq());
        CommitWindow w =
                await(storage.readCommits(p, new CommitQuery("tasks", Map.of("project_id", Set.of("P1")), 0, 2, 100)));
        assertEquals(
                List.of(1L, 2L), w.commits().stream().map(c -> c.commitSeq()).toList());
        assertEquals(Op.DELETE, w.commits().get(1).changes().get(0).op());
        assertEquals(null, w.commits().get(1).changes().get(0).rowVersion());
        assertEquals(2L, await(storage.findPushResult(p, "client-1", "cc-w2")).commitSeq());
        assertEquals(null, await(storage.findPushResult(p, "client-1", "cc-w1")));
    }

    /**
     * An upsert told the stored row is a plain update; told a row that is not stored after all, it still inserts.
     * A commit whose changes share a (table, scope key) indexes it once, and the partition's {@code max_commit_seq}
     * is written once by the group, in its transaction.
     */
    @Test
    void anUpsertOfAStoredRowUpdatesItAndAStaleStoredRowStillInserts() {
        String p = newPartition();
        StoredRow v1 = new StoredRow("u", 1, task("u", "P1", "O1", "one"), new long[10], taskScopes("P1", "O1"));
        StoredRow v2 = new StoredRow("u", 2, task("u", "P1", "O1", "two"), new long[10], taskScopes("P1", "O1"));
        StoredRow ghost = new StoredRow("g", 1, task("g", "P1", "O1", "g"), new long[10], taskScopes("P1", "O1"));
        await(storage.inPartitionTransaction(
                p,
                tx -> tx.appendCommit(
                                "actor-1",
                                "client-1",
                                "cc-u1",
                                5_000L,
                                List.of(taskUpsert("u", "P1", "O1", 1), taskUpsert("g", "P1", "O1", 1)),
                                StoredCommit.UNTRACED)
                        .call(seq -> tx.upsertRow("tasks", v1))
                        // "g" is not stored: an upsert told otherwise must still write it
                        .call(seq -> tx.upsertRow("tasks", ghost, ghost))));
        await(storage.inPartitionTransaction(
                p,
                tx -> tx.appendCommit(
                                "actor-1",
                                "client-1",
                                "cc-u2",
                                6_000L,
                                List.of(taskUpsert("u", "P1", "O1", 2)),
                                StoredCommit.UNTRACED)
                        .call(seq -> tx.upsertRow("tasks", v2, v1))));
        Map<String, StoredRow> rows =
                await(storage.inPartitionTransaction(p, tx -> tx.readRows("tasks", List.of("u", "g"))));
        assertEquals(2L, rows.get("u").serverVersion(), "the stored row was updated");
        assertEquals("two", rows.get("u").values()[3]);
        assertEquals(1L, rows.get("g").serverVersion(), "the row told stored but absent was inserted");
        assertEquals(2L, await(storage.readPartition(p)).maxCommitSeq());
        String entries = "SELECT count(*) FROM \"" + mainSchema
                + "\".sync_commit_scopes WHERE partition_id = $1 AND commit_seq = $2";
        long ofTwoChanges = await(pool().preparedQuery(entries).execute(Tuple.of(p, 1L)))
                .iterator()
                .next()
                .getLong(0);
        long ofOneChange = await(pool().preparedQuery(entries).execute(Tuple.of(p, 2L)))
                .iterator()
                .next()
                .getLong(0);
        assertTrue(ofOneChange > 0);
        assertEquals(ofOneChange, ofTwoChanges, "two changes with the same scopes: their keys indexed once");
    }

    // ---- §2.4 same-version storage readiness --------------------------------------------------------

    @Test
    void storedLayoutMismatchWhenPersistedLayoutDiffers() {
        StorageException e = refusal(
                s -> sql(
                        s,
                        "UPDATE $S.sync_schema SET layouts = replace(layouts,"
                                + " '{\"name\":\"title\",\"type\":\"string\",\"nullable\":true}', '{\"name\":\"title\",\"type\":\"json\",\"nullable\":true}')"),
                schema);
        assertEquals(StorageException.STORED_LAYOUT_MISMATCH, e.code());
        assertEquals(details("table", "tasks", "column", "title"), e.details());
    }

    @Test
    void storedLayoutMismatchWhenRunningSchemaChangesWithoutAVersionBump() {
        CompiledSchema changed = SchemaLoader.parse(SCHEMA_JSON.replace(
                "{ \"name\": \"body\", \"type\": \"string\", \"nullable\": true }",
                "{ \"name\": \"body\", \"type\": \"string\", \"nullable\": false }"));
        StorageException e = refusal(s -> {}, changed);
        assertEquals(StorageException.STORED_LAYOUT_MISMATCH, e.code());
        assertEquals(details("table", "notes", "column", "body"), e.details());
    }

    @Test
    void physicalMismatchOnInternalColumnType() {
        String table = PostgresSyncStorage.rowTableName("tasks");
        StorageException e = refusal(
                s -> sql(s, "ALTER TABLE $S." + table + " ALTER COLUMN _sync_server_version TYPE integer"), schema);
        assertEquals(StorageException.PHYSICAL_LAYOUT_MISMATCH, e.code());
        assertEquals(
                details(
                        "table",
                        "tasks",
                        "column",
                        "_sync_server_version",
                        "reason",
                        "type",
                        "expected",
                        "bigint",
                        "actual",
                        "integer"),
                e.details());
    }

    @Test
    void physicalMismatchOnInternalColumnNullability() {
        String table = PostgresSyncStorage.rowTableName("notes");
        StorageException e =
                refusal(s -> sql(s, "ALTER TABLE $S." + table + " ALTER COLUMN _sync_payload SET NOT NULL"), schema);
        assertEquals(
                details(
                        "table",
                        "notes",
                        "column",
                        "_sync_payload",
                        "reason",
                        "nullability",
                        "expected",
                        "nullable",
                        "actual",
                        "not_null"),
                e.details());
    }

    @Test
    void physicalMismatchOnDroppedAppColumn() {
        String table = PostgresSyncStorage.rowTableName("tasks");
        StorageException e = refusal(s -> sql(s, "ALTER TABLE $S." + table + " DROP COLUMN score"), schema);
        assertEquals(StorageException.PHYSICAL_LAYOUT_MISMATCH, e.code());
        assertEquals(details("table", "tasks", "column", "score", "reason", "missing_column"), e.details());
    }

    @Test
    void physicalMismatchOnMissingColumnVersions() {
        String table = PostgresSyncStorage.rowTableName("tasks");
        StorageException e =
                refusal(s -> sql(s, "ALTER TABLE $S." + table + " DROP COLUMN _sync_column_versions"), schema);
        assertEquals(
                details("table", "tasks", "column", "_sync_column_versions", "reason", "missing_column"), e.details());
    }

    @Test
    void physicalMismatchOnMissingTable() {
        String table = PostgresSyncStorage.rowTableName("notes");
        StorageException e = refusal(s -> sql(s, "DROP TABLE $S." + table), schema);
        assertEquals(details("table", "notes", "reason", "missing_table"), e.details());
    }

    @Test
    void physicalMismatchOnPrimaryKey() {
        String table = PostgresSyncStorage.rowTableName("tasks");
        StorageException e = refusal(
                s -> {
                    sql(s, "ALTER TABLE $S." + table + " DROP CONSTRAINT " + table + "_pkey");
                    sql(s, "ALTER TABLE $S." + table + " ADD PRIMARY KEY (_sync_row_id)");
                },
                schema);
        assertEquals(details("table", "tasks", "reason", "primary_key"), e.details());
    }

    @Test
    void appColumnTypesAreAnsweredByThePersistedLayouts() {
        PostgresSyncStorage first = newStorage();
        await(first.ensureSchema(schema));
        sql(
                first.pgSchema(),
                "ALTER TABLE $S." + PostgresSyncStorage.rowTableName("tasks") + " ALTER COLUMN title DROP NOT NULL");
        await(new PostgresSyncStorage(pool(), first.pgSchema(), PostgresSyncStorage.Settings.DEFAULTS)
                .ensureSchema(schema));
    }

    // ---- schema versions ---------------------------------------------------------------------------

    @Test
    void newerStoredVersionIsNotReady() {
        PostgresSyncStorage first = newStorage();
        await(first.ensureSchema(SchemaLoader.parse(SCHEMA_JSON.replace("\"version\": 1", "\"version\": 2"))));
        StorageException e =
                storageFailure(new PostgresSyncStorage(pool(), first.pgSchema(), PostgresSyncStorage.Settings.DEFAULTS)
                        .ensureSchema(schema));
        assertEquals(StorageException.SCHEMA_NOT_READY, e.code());
    }

    @Test
    void additiveUpgradeAddsColumnsAndKeepsOldPayloadsReadable() {
        PostgresSyncStorage v1 = newStorage();
        await(v1.ensureSchema(schema));
        String p = "p-upgrade";
        await(v1.touchPartition(p, 1L));
        Object[] note = {1L, "P1", "hello"};
        await(v1.inPartitionTransaction(
                p,
                tx -> tx.appendCommit(
                                "a",
                                "c",
                                "cc",
                                1L,
                                List.of(ChangeToWrite.upsert("notes", "1", 1, Map.of("project_id", "P1"), note)),
                                StoredCommit.UNTRACED)
                        .call(s -> tx.upsertRow(
                                "notes", new StoredRow("1", 1, note, new long[3], Map.of("project_id", "P1"))))));

        String v2Json = SCHEMA_JSON
                .replace("\"version\": 1", "\"version\": 2")
                .replace(
                        "{ \"name\": \"body\", \"type\": \"string\", \"nullable\": true }",
                        "{ \"name\": \"body\", \"type\": \"string\", \"nullable\": true },\n"
                                + "{ \"name\": \"pinned\", \"type\": \"boolean\", \"nullable\": true }");
        v2Json = v2Json.replace(
                "  ]\n}",
                "  ,{ \"name\": \"tags\", \"columns\": [ { \"name\": \"id\", \"type\": \"string\", \"nullable\": false },"
                        + " { \"name\": \"project_id\", \"type\": \"string\", \"nullable\": false } ], \"primaryKey\": \"id\","
                        + " \"scopes\": [\"project:{project_id}\"] } ]\n}");
        CompiledSchema v2schema = SchemaLoader.parse(v2Json);
        PostgresSyncStorage v2 = new PostgresSyncStorage(pool(), v1.pgSchema(), PostgresSyncStorage.Settings.DEFAULTS);
        await(v2.ensureSchema(v2schema));
        assertTrue(marker(v1.pgSchema()).startsWith("2|"));
        assertTrue(catalog(v1.pgSchema()).contains(PostgresSyncStorage.rowTableName("notes") + ".pinned:boolean:YES"));
        assertTrue(catalog(v1.pgSchema()).contains(PostgresSyncStorage.rowTableName("tags") + ".id:text:NO"));
        await(new PostgresSyncStorage(pool(), v1.pgSchema(), PostgresSyncStorage.Settings.DEFAULTS)
                .ensureSchema(v2schema)); // same version now verifies

        CommitWindow w =
                await(v2.readCommits(p, new CommitQuery("notes", Map.of("project_id", Set.of("P1")), 0, 1, 10)));
        assertRowEquals(
                new Object[] {1L, "P1", "hello", null},
                w.commits().get(0).changes().get(0).row());
        StoredRow row = await(v2.readRows(p, "notes", List.of("1"))).get("1");
        assertRowEquals(new Object[] {1L, "P1", "hello", null}, row.values());

        CompiledSchema incompatible = SchemaLoader.parse(v2Json.replace("\"version\": 2", "\"version\": 3")
                .replace(
                        "{ \"name\": \"body\", \"type\": \"string\", \"nullable\": true },",
                        "{ \"name\": \"body\", \"type\": \"integer\", \"nullable\": true },"));
        StorageException e =
                storageFailure(new PostgresSyncStorage(pool(), v1.pgSchema(), PostgresSyncStorage.Settings.DEFAULTS)
                        .ensureSchema(incompatible));
        assertEquals(StorageException.UNSUPPORTED_MIGRATION, e.code());
        assertTrue(marker(v1.pgSchema()).startsWith("2|"), "a failed upgrade changes nothing");
    }

    @Test
    void referenceQuickstartFixtureInstalls() {
        Path fixture = ReferenceMaterial.file("fixtures", "schema-ir", "quickstart.syncular.ir.json");
        CompiledSchema quickstart = SchemaLoader.load(fixture);
        PostgresSyncStorage s = newStorage();
        await(s.ensureSchema(quickstart));
        await(new PostgresSyncStorage(pool(), s.pgSchema(), PostgresSyncStorage.Settings.DEFAULTS)
                .ensureSchema(quickstart));
        assertTrue(catalog(s.pgSchema()).contains(PostgresSyncStorage.rowTableName("todos") + ".done:boolean:NO"));
    }

    @Test
    void longTableNamesStayWithinTheIdentifierLimit() {
        String a = PostgresSyncStorage.rowTableName("x".repeat(63));
        String b = PostgresSyncStorage.rowTableName("x".repeat(62) + "y");
        assertTrue(a.length() <= 63 && b.length() <= 63);
        assertFalse(a.equals(b));
        assertEquals("sync_rows_tasks", PostgresSyncStorage.rowTableName("tasks"));
    }

    // ---- §2.4 schema upgrade writer fence -------------------------------------------------------------

    /** The contract schema at version 2: {@code notes} gains one trailing nullable column. */
    private static final String V2_JSON = SCHEMA_JSON
            .replace("\"version\": 1", "\"version\": 2")
            .replace(
                    "{ \"name\": \"body\", \"type\": \"string\", \"nullable\": true }",
                    "{ \"name\": \"body\", \"type\": \"string\", \"nullable\": true },\n"
                            + "{ \"name\": \"pinned\", \"type\": \"boolean\", \"nullable\": true }");

    private Map<String, Integer> fences(String pgSchema) {
        Map<String, Integer> out = new TreeMap<>();
        for (Row r : await(
                pool().query("SELECT partition_id, required_writer_version FROM \"" + pgSchema + "\".sync_writer_fence")
                        .execute())) {
            out.put(r.getString(0), r.getInteger(1));
        }
        return out;
    }

    private Long writerVersion(String pgSchema, String partition, long seq) {
        return await(pool().preparedQuery("SELECT writer_version FROM \"" + pgSchema
                                + "\".sync_commits WHERE partition_id = $1 AND commit_seq = $2")
                        .execute(Tuple.of(partition, seq)))
                .iterator()
                .next()
                .getLong(0);
    }

    /** One push: row write, commit append and push result, in that order (so the append fails mid-transaction). */
    /**
     * Polls a {@code count(*)} statement until it counts something or 30 s passed (no sleeps: a wait observed in
     * the catalog), and returns its last count.
     */
    private static long countOnceAny(String countSql, Tuple args) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long count = 0;
        while (count == 0 && System.nanoTime() < deadline) {
            count = await(pool().preparedQuery(countSql).execute(args))
                    .iterator()
                    .next()
                    .getLong(0);
        }
        return count;
    }

    private static Uni<Long> push(PostgresSyncStorage s, String partition, String id) {
        return s.inPartitionTransaction(
                partition,
                tx -> tx.upsertRow(
                                "tasks",
                                new StoredRow(id, 1, task(id, "P1", "O1", "t"), new long[10], taskScopes("P1", "O1")))
                        .chain(() -> tx.appendCommit(
                                "actor-1",
                                "client-1",
                                "cc-" + id,
                                5_000L,
                                List.of(taskUpsert(id, "P1", "O1", 1)),
                                StoredCommit.UNTRACED))
                        .call(seq -> tx.savePushResult("client-1", "cc-" + id, applied(seq, "ok"))));
    }

    @Test
    void schemaMigrationFencesTheOldBuild() {
        PostgresSyncStorage oldBuild = newStorage();
        String s = oldBuild.pgSchema();
        await(oldBuild.ensureSchema(schema));
        await(oldBuild.touchPartition("p-1", 1L));
        await(oldBuild.touchPartition("p-2", 1L));
        assertEquals(1L, await(push(oldBuild, "p-1", "a")));
        assertEquals(1L, writerVersion(s, "p-1", 1));
        assertEquals(Map.of(), fences(s), "no fence before a migration");

        PostgresSyncStorage newBuild = new PostgresSyncStorage(pool(), s, PostgresSyncStorage.Settings.DEFAULTS);
        await(newBuild.ensureSchema(
                SchemaLoader.parse(V2_JSON), List.of(new CheckpointDeclaration("p-1", "notes-pinned", 2))));
        assertEquals(Map.of("p-1", 2, "p-2", 2), fences(s), "the migration raised every registered partition's fence");
        assertEquals(
                List.of("notes-pinned"),
                await(newBuild.readServeGate("p-1", 2)).pending().stream()
                        .map(StoredCheckpoint::name)
                        .toList(),
                "the migration installed the declaration");
        ServeGate oldGate = await(oldBuild.readServeGate("p-1", 1));
        assertEquals(2, oldGate.storedSchemaVersion(), "the old build's gate sees a newer stored schema");
        assertTrue(oldGate.pending().isEmpty());
        assertEquals(2, await(oldBuild.readStoredSchemaVersion()));

        for (String p : List.of("p-1", "p-2")) {
            Map<String, Long> before = countTables(s);
            PartitionState stateBefore = await(oldBuild.readPartition(p));
            StorageException e = storageFailure(push(oldBuild, p, "old-" + p));
            assertEquals(StorageException.WRITER_FENCE_REJECTED, e.code());
            assertEquals(details("writerVersion", 1, "requiredWriterVersion", 2), e.details());
            assertEquals(before, countTables(s), "the rejected push wrote nothing");
            assertEquals(stateBefore, await(oldBuild.readPartition(p)));
        }
        assertEquals(2L, await(push(newBuild, "p-1", "b")), "the new build appends");
        assertEquals(2L, writerVersion(s, "p-1", 2));
        assertEquals(1L, await(push(newBuild, "p-2", "b")));

        // the database enforces the fence on its own: a raw append omitting writer_version is rejected
        Throwable raw = assertThrows(
                Throwable.class,
                () -> sql(
                        s,
                        "INSERT INTO $S.sync_commits (partition_id, commit_seq, created_at_ms,"
                                + " actor_id, client_id, client_commit_id, change_count, tables) VALUES ('p-1', 99, 1, 'a', 'c', 'raw', 0, '{}')"));
        assertTrue(raw instanceof PgException pe && "SY001".equals(pe.getSqlState()), String.valueOf(raw));

        // a partition created after the migration has no fence
        await(newBuild.touchPartition("p-3", 2L));
        assertFalse(fences(s).containsKey("p-3"));
        assertEquals(
                1L,
                await(push(oldBuild, "p-3", "c")),
                "an unfenced partition accepts any writer (the serve gate guards it)");

        // fences are never lowered, and a re-run of the same version changes none
        sql(s, "UPDATE $S.sync_writer_fence SET required_writer_version = 7 WHERE partition_id = 'p-2'");
        await(new PostgresSyncStorage(pool(), s, PostgresSyncStorage.Settings.DEFAULTS)
                .ensureSchema(SchemaLoader.parse(V2_JSON)));
        assertEquals(Map.of("p-1", 2, "p-2", 7), fences(s));
        await(new PostgresSyncStorage(pool(), s, PostgresSyncStorage.Settings.DEFAULTS)
                .ensureSchema(SchemaLoader.parse(V2_JSON.replace("\"version\": 2", "\"version\": 3"))));
        assertEquals(Map.of("p-1", 3, "p-2", 7, "p-3", 3), fences(s));
        assertEquals(
                StorageException.WRITER_FENCE_REJECTED,
                storageFailure(push(newBuild, "p-1", "v2-late")).code(),
                "the v2 build is fenced by the v3 migration");
    }

    @Test
    void declaringACheckpointRaisesThePartitionFence() {
        PostgresSyncStorage s1 = newStorage();
        await(s1.ensureSchema(schema));
        await(s1.touchPartition("p", 1L));
        await(s1.declareCheckpoint("p", "current", 1, 10L));
        assertEquals(Map.of("p", 1), fences(s1.pgSchema()));
        assertEquals(1L, await(push(s1, "p", "a")), "a checkpoint at the running version does not fence this build");
        await(s1.declareCheckpoint("p", "next", 2, 10L));
        await(s1.declareCheckpoint("p", "current", 1, 20L));
        assertEquals(Map.of("p", 2), fences(s1.pgSchema()), "never lowered by a later declaration");
        assertEquals(
                StorageException.WRITER_FENCE_REJECTED,
                storageFailure(push(s1, "p", "b")).code());
    }

    @Test
    void migrationTransactionWaitsForAnInFlightPushOfTheOldBuild() throws Exception {
        PostgresSyncStorage oldBuild = newStorage();
        String s = oldBuild.pgSchema();
        await(oldBuild.ensureSchema(schema));
        await(oldBuild.touchPartition("p", 1L));

        CompletableFuture<Void> locked = new CompletableFuture<>();
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Long> inFlight = oldBuild.inPartitionTransaction("p", tx -> {
                    locked.complete(null);
                    return Uni.createFrom()
                            .completionStage(release)
                            .chain(() -> tx.appendCommit(
                                    "actor-1",
                                    "client-1",
                                    "in-flight",
                                    5_000L,
                                    List.of(taskUpsert("a", "P1", "O1", 1)),
                                    StoredCommit.UNTRACED));
                })
                .subscribeAsCompletionStage();
        locked.get(30, TimeUnit.SECONDS); // the push holds the partition row lock

        PostgresSyncStorage newBuild = new PostgresSyncStorage(pool(), s, PostgresSyncStorage.Settings.DEFAULTS);
        CompletableFuture<Void> migration;
        try {
            migration = newBuild.ensureSchema(
                            SchemaLoader.parse(V2_JSON), List.of(new CheckpointDeclaration("p", "notes-pinned", 2)))
                    .subscribeAsCompletionStage();
            // observe the wait in the catalog (no sleeps): the LOCK TABLE of the migration is not granted
            assertEquals(
                    1L,
                    countOnceAny(
                            "SELECT count(*) FROM pg_locks WHERE relation = to_regclass($1) AND NOT granted",
                            Tuple.of("\"" + s + "\".sync_partitions")),
                    "the migration waits for the table lock on sync_partitions");
            assertFalse(migration.isDone());
            assertEquals(1, await(oldBuild.readStoredSchemaVersion()), "nothing of the migration is visible yet");
            assertEquals(Map.of(), fences(s));
        } finally {
            release.complete(null); // never leave the push transaction open
        }
        assertEquals(1L, inFlight.get(30, TimeUnit.SECONDS), "the push holding the lock commits first, unfenced");
        migration.get(30, TimeUnit.SECONDS);
        assertEquals(1L, writerVersion(s, "p", 1));
        assertEquals(2, await(oldBuild.readStoredSchemaVersion()));
        assertEquals(Map.of("p", 2), fences(s));
        assertEquals(
                StorageException.WRITER_FENCE_REJECTED,
                storageFailure(push(oldBuild, "p", "after")).code(),
                "the next push of the old build is fenced");
        assertEquals(2L, await(push(newBuild, "p", "after")));
    }
}
