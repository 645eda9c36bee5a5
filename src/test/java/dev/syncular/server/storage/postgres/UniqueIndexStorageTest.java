package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.storage.ChangeToWrite;
import dev.syncular.server.storage.PushOutcome;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.testsupport.HeldTransaction;
import dev.syncular.server.testsupport.ScratchSchemas;
import dev.syncular.server.wire.CommitStatus;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Declared unique indexes on the row tables (schema IR {@code indexes} with {@code unique: true}; §10.2
 * {@code sync.constraint_violation}, §6.4): a key is unique within a partition, NULL never collides, a refused row
 * fails its work alone with {@code sync.storage.unique_violation} (nothing of it written, in a group too), a
 * deleted row holds no key; the start-up builds a missing index concurrently (pushes go on), drops one no longer
 * declared, and refuses a table whose rows already collide, naming them.
 */
class UniqueIndexStorageTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @RegisterExtension
    static final ScratchSchemas scratch = ScratchSchemas.open(8);

    private static final Pool pool = scratch.pool;

    /**
     * Table {@code members} ({@code id}, {@code org_id}, {@code email}, {@code handle}), scope {@code org:{org_id}};
     * {@code indexes} as given (JSON array text).
     */
    private static CompiledSchema schema(int version, String indexes) {
        return SchemaLoader.parse(
                "{\"version\":" + version + ",\"tables\":[{\"name\":\"members\",\"primaryKey\":\"id\","
                        + "\"columns\":[{\"name\":\"id\",\"type\":\"string\",\"nullable\":false},"
                        + "{\"name\":\"org_id\",\"type\":\"string\",\"nullable\":false},"
                        + "{\"name\":\"email\",\"type\":\"string\",\"nullable\":true},"
                        + "{\"name\":\"handle\",\"type\":\"string\",\"nullable\":true}],"
                        + "\"scopes\":[\"org:{org_id}\"],\"indexes\":" + indexes + "}]}");
    }

    private static final String ORG_EMAIL =
            "{\"name\":\"members_org_email\",\"columns\":[\"org_id\",\"email\"],\"unique\":true}";
    private static final String HANDLE = "{\"name\":\"members_handle\",\"columns\":[\"handle\"],\"unique\":false}";
    private static final CompiledSchema UNIQUE = schema(1, "[" + ORG_EMAIL + "," + HANDLE + "]");
    private static final CompiledSchema PLAIN = schema(1, "[" + HANDLE + "]");

    private static <T> T await(Uni<T> u) {
        return u.await().atMost(WAIT);
    }

    private static PostgresSyncStorage storage(String pgSchema) {
        return new PostgresSyncStorage(pool, pgSchema, PostgresSyncStorage.Settings.DEFAULTS);
    }

    private static PostgresSyncStorage ensured(CompiledSchema s) {
        PostgresSyncStorage st = storage(scratch.fresh("sync_uq_test_"));
        await(st.ensureSchema(s));
        return st;
    }

    private static String partition(PostgresSyncStorage st) {
        String p = "p-" + UUID.randomUUID();
        await(st.touchPartition(p, 1_000L));
        return p;
    }

    private static Object[] member(String id, String org, String email) {
        return new Object[] {id, org, email, null};
    }

    /** One commit writing {@code rows} (upserts) in order, its idempotency record last. */
    private static Function<PushTx, Uni<Long>> commitOf(String clientCommitId, Object[]... rows) {
        return tx -> {
            List<ChangeToWrite> changes = new ArrayList<>();
            for (Object[] r : rows) {
                changes.add(ChangeToWrite.upsert("members", (String) r[0], 1, Map.of("org_id", (String) r[1]), r));
            }
            return tx.appendCommit("actor", "client", clientCommitId, 5_000L, changes, StoredCommit.UNTRACED)
                    .call(seq -> {
                        Uni<Void> chain = Uni.createFrom().voidItem();
                        for (Object[] r : rows) {
                            chain = chain.chain(() -> tx.upsertRow(
                                    "members",
                                    new StoredRow((String) r[0], 1, r, new long[4], Map.of("org_id", (String) r[1]))));
                        }
                        return chain;
                    })
                    .call(seq -> tx.savePushResult(
                            "client",
                            clientCommitId,
                            new PushOutcome(CommitStatus.APPLIED, seq, "ok".getBytes(StandardCharsets.UTF_8), 6_000L)));
        };
    }

    private static long write(PostgresSyncStorage st, String p, Object[]... rows) {
        return await(st.inPartitionTransaction(p, commitOf("cc-" + UUID.randomUUID(), rows)));
    }

    private static StorageException refused(Uni<?> u) {
        Throwable t = assertThrows(Throwable.class, () -> await(u));
        while (!(t instanceof StorageException) && t.getCause() != null) {
            t = t.getCause();
        }
        return assertInstanceOf(StorageException.class, t);
    }

    private static Map<String, Object[]> rows(PostgresSyncStorage st, String p) {
        Map<String, Object[]> out = new TreeMap<>();
        for (StoredRow r : await(st.readAllRows(p, "members"))) {
            out.put(r.rowId(), r.values());
        }
        return out;
    }

    private static List<Row> uniqueIndexes(String pgSchema) {
        List<Row> out = new ArrayList<>();
        for (Row r : await(pool.preparedQuery("SELECT c.relname::text, i.indisvalid, pg_get_indexdef(i.indexrelid)"
                        + " FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n"
                        + " ON n.oid = c.relnamespace WHERE n.nspname = $1 AND i.indisunique AND NOT i.indisprimary"
                        + " AND starts_with(c.relname::text, 'sync_uq_') ORDER BY 1")
                .execute(Tuple.of(pgSchema)))) {
            out.add(r);
        }
        return out;
    }

    @Test
    void theIndexIsPerPartitionAndOnlyForUniqueDeclarations() {
        PostgresSyncStorage st = ensured(UNIQUE);
        List<Row> idx = uniqueIndexes(st.pgSchema());
        assertEquals(1, idx.size(), "one unique declaration, one index; the non-unique one creates none");
        assertEquals(
                UniqueIndexes.physicalName(
                        "members", UNIQUE.table("members").indexes().get(0)),
                idx.get(0).getString(0));
        assertEquals(Boolean.TRUE, idx.get(0).getBoolean(1));
        assertTrue(
                idx.get(0).getString(2).endsWith("(_sync_partition, org_id, email)"),
                "unique within a partition: " + idx.get(0).getString(2));
        assertTrue(
                idx.get(0).getString(2).startsWith("CREATE UNIQUE INDEX"),
                idx.get(0).getString(2));
    }

    @Test
    void aTakenKeyRefusesTheRowAndItsWorkWritesNothing() {
        PostgresSyncStorage st = ensured(UNIQUE);
        String p = partition(st);
        assertEquals(1L, write(st, p, member("m1", "o1", "a@x")));
        // a sibling row first, then a distinct primary key on the taken (org_id, email)
        StorageException e = refused(st.inPartitionTransaction(
                p, commitOf("cc-taken", member("m3", "o1", "c@x"), member("m2", "o1", "a@x"))));
        assertEquals(StorageException.UNIQUE_VIOLATION, e.code());
        assertEquals("members", e.details().get("table"));
        assertEquals("m2", e.details().get("rowId"));
        assertEquals("unique_violation", e.details().get("reason"));
        assertEquals("members_org_email", e.details().get("index"));
        assertEquals(List.of("org_id", "email"), e.details().get("columns"));
        assertFalse(e.getMessage().contains("a@x"), "no key value in the message");
        assertEquals(List.of("m1"), List.copyOf(rows(st, p).keySet()), "the sibling rolled back with it");
        assertEquals(1L, await(st.readPartition(p)).maxCommitSeq(), "no commit appended");
        assertNull(await(st.findPushResult(p, "client", "cc-taken")), "no idempotency record");
    }

    /**
     * A key larger than an index entry is refused as well (SQLSTATE 54000: over a B-tree entry, naming the index;
     * over a page, naming none), never left a storage failure.
     */
    @Test
    void aKeyTooLargeForTheIndexIsRefused() {
        PostgresSyncStorage st = ensured(UNIQUE);
        String p = partition(st);
        for (int size : new int[] {4_000, 12_000}) {
            java.util.Random random = new java.util.Random(size);
            StringBuilder big = new StringBuilder();
            while (big.length() < size) {
                big.append(Long.toString(random.nextLong(), 36)); // incompressible enough to stay large
            }
            StorageException e = refused(
                    st.inPartitionTransaction(p, commitOf("cc-big-" + size, member("m1", "o1", big.toString()))));
            assertEquals(StorageException.UNIQUE_VIOLATION, e.code(), "size " + size);
            assertEquals("unique_key_too_large", e.details().get("reason"));
            assertEquals("members_org_email", e.details().get("index"));
        }
        assertTrue(rows(st, p).isEmpty());
        write(st, p, member("m1", "o1", "a@x"));
    }

    @Test
    void nullKeyPartsAndOtherPartitionsNeverCollide() {
        PostgresSyncStorage st = ensured(UNIQUE);
        String p = partition(st);
        String q = partition(st);
        write(st, p, member("m1", "o1", null), member("m2", "o1", null));
        write(st, p, member("m3", "o1", "a@x"), member("m4", "o2", "a@x"));
        write(st, q, member("m1", "o1", "a@x"));
        assertEquals(4, rows(st, p).size());
        assertEquals(1, rows(st, q).size());
    }

    @Test
    void anUpdateOntoATakenKeyIsRefusedAndADeleteFreesTheKey() {
        PostgresSyncStorage st = ensured(UNIQUE);
        String p = partition(st);
        write(st, p, member("m1", "o1", "a@x"), member("m2", "o1", "b@x"));
        StorageException e = refused(st.inPartitionTransaction(p, commitOf("cc-move", member("m2", "o1", "a@x"))));
        assertEquals("m2", e.details().get("rowId"));
        assertEquals("b@x", rows(st, p).get("m2")[2], "the moving row kept its key");
        // the delete removes the row (its tombstone lives elsewhere, §2.2): the key is free within the same commit
        long seq = await(st.inPartitionTransaction(
                p,
                tx -> tx.appendCommit(
                                "actor",
                                "client",
                                "cc-free",
                                5_000L,
                                List.of(
                                        ChangeToWrite.delete("members", "m1", Map.of("org_id", "o1")),
                                        ChangeToWrite.upsert(
                                                "members", "m2", 2, Map.of("org_id", "o1"), member("m2", "o1", "a@x"))),
                                StoredCommit.UNTRACED)
                        .call(s -> tx.deleteRow("members", "m1", s))
                        .call(s -> tx.upsertRow(
                                "members",
                                new StoredRow(
                                        "m2", 2, member("m2", "o1", "a@x"), new long[4], Map.of("org_id", "o1"))))));
        assertEquals(2L, seq);
        assertEquals(List.of("m2"), List.copyOf(rows(st, p).keySet()));
        assertEquals("a@x", rows(st, p).get("m2")[2]);
        // and a new row reuses m2's old key
        write(st, p, member("m5", "o1", "b@x"));
        assertEquals("b@x", rows(st, p).get("m5")[2]);
    }

    /**
     * §6.4 in a group: works queued behind a running one share a transaction, their writes pipelined. The refused
     * work (the second of the group to take one key) fails alone with the unique refusal, writing nothing; the
     * others commit, dense in queue order. Repeated, as where the refusal lands in the pipeline varies.
     */
    @RepeatedTest(10)
    void aRefusedWorkInAGroupFailsAloneTheOthersCommit() throws Exception {
        PostgresSyncStorage st = ensured(UNIQUE);
        String p = partition(st);
        long rerunsBefore = st.pipelinedReruns();
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Long> blocker = st.inPartitionTransaction(
                        p,
                        tx -> Uni.createFrom()
                                .completionStage(release)
                                .chain(() -> commitOf("cc-blocker").apply(tx)))
                .subscribeAsCompletionStage();
        List<CompletableFuture<Long>> group = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            String email = i == 4 ? "k1@x" : "k" + i + "@x"; // w4 takes w1's key
            group.add(st.inPartitionTransaction(p, commitOf("cc-w" + i, member("w" + i, "o1", email)))
                    .subscribeAsCompletionStage());
        }
        release.complete(null);
        assertEquals(1L, blocker.get(30, TimeUnit.SECONDS));
        List<Long> seqs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            CompletableFuture<Long> f = group.get(i);
            if (i == 4) {
                Throwable t = assertThrows(Exception.class, () -> f.get(30, TimeUnit.SECONDS));
                assertEquals(
                        StorageException.UNIQUE_VIOLATION,
                        refused(Uni.createFrom().failure(t.getCause())).code());
                assertNull(await(st.findPushResult(p, "client", "cc-w4")), "w4 left no record");
            } else {
                seqs.add(f.get(30, TimeUnit.SECONDS));
            }
        }
        assertEquals(List.of(2L, 3L, 4L, 5L, 6L), seqs, "dense, in queue order");
        Map<String, Object[]> rows = rows(st, p);
        assertFalse(rows.containsKey("w4"));
        assertEquals(5, rows.size(), String.valueOf(rows.keySet()));
        assertTrue(
                st.pipelinedReruns() > rerunsBefore, "the refusal failed the pipelined attempt; the group ran again");
    }

    /**
     * A start-up that would add a unique index to a table whose rows already collide refuses, with the colliding
     * rows (partition, row ids, key) in its details, and leaves no index behind (a failed concurrent build's invalid
     * index would still refuse writes). Rows colliding only through a NULL part or across partitions do not count.
     * Once the collisions are resolved, the next start builds the index.
     */
    @Test
    void aStartOnRowsThatAlreadyCollideIsRefusedNamingThem() {
        PostgresSyncStorage before = ensured(PLAIN);
        String s = before.pgSchema();
        String p = partition(before);
        String q = partition(before);
        write(before, p, member("a1", "o1", "dup@x"), member("a2", "o1", "dup@x"), member("a3", "o1", "dup@x"));
        write(before, p, member("n1", "o1", null), member("n2", "o1", null), member("c1", "o2", "dup@x"));
        write(before, q, member("a1", "o1", "dup@x"), member("b1", "o1", "other@x"), member("b2", "o1", "other@x"));
        StorageException e = refused(storage(s).ensureSchema(UNIQUE));
        assertEquals(StorageException.UNIQUE_INDEX_DUPLICATES, e.code());
        assertEquals("members", e.details().get("table"));
        assertEquals("members_org_email", e.details().get("index"));
        assertEquals(List.of("org_id", "email"), e.details().get("columns"));
        assertEquals(Boolean.FALSE, e.details().get("more"));
        List<?> collisions = (List<?>) e.details().get("collisions");
        List<String> expected =
                new ArrayList<>(List.of(p + " [a1, a2, a3] 3 [o1, dup@x]", q + " [b1, b2] 2 [o1, other@x]"));
        expected.sort(null);
        List<String> actual = new ArrayList<>();
        for (Object o : collisions) {
            Map<?, ?> c = (Map<?, ?>) o;
            actual.add(c.get("partition") + " " + c.get("rowIds") + " " + c.get("rows") + " " + c.get("key"));
        }
        actual.sort(null);
        assertEquals(expected, actual);
        assertTrue(uniqueIndexes(s).isEmpty(), "the failed build left no index");
        // the earlier build still serves, its duplicates still writable
        write(before, p, member("a4", "o1", "dup@x"));
        // resolved: the next start builds the index
        await(before.inPartitionTransaction(
                p,
                tx -> tx.deleteRow("members", "a2", 9)
                        .chain(() -> tx.deleteRow("members", "a3", 9))
                        .chain(() -> tx.deleteRow("members", "a4", 9))));
        await(before.inPartitionTransaction(q, tx -> tx.deleteRow("members", "b2", 9)));
        PostgresSyncStorage after = storage(s);
        await(after.ensureSchema(UNIQUE));
        assertEquals(1, uniqueIndexes(s).size());
        assertEquals(Boolean.TRUE, uniqueIndexes(s).get(0).getBoolean(1));
        assertEquals(
                StorageException.UNIQUE_VIOLATION,
                refused(after.inPartitionTransaction(p, commitOf("cc-again", member("a5", "o1", "dup@x"))))
                        .code());
    }

    /**
     * A schema upgrade that declares a unique index over rows that collide refuses before it changes anything:
     * the stored version stays, no fence is raised, the old build keeps serving.
     */
    @Test
    void anUpgradeOverCollidingRowsRefusesBeforeItChangesAnything() {
        PostgresSyncStorage before = ensured(PLAIN);
        String s = before.pgSchema();
        String p = partition(before);
        write(before, p, member("a1", "o1", "dup@x"), member("a2", "o1", "dup@x"));
        CompiledSchema v2 = schema(2, "[" + ORG_EMAIL + "," + HANDLE + "]");
        StorageException e = refused(storage(s).ensureSchema(v2));
        assertEquals(StorageException.UNIQUE_INDEX_DUPLICATES, e.code());
        assertEquals(1, await(before.readStoredSchemaVersion()), "the upgrade did not run");
        write(before, p, member("a3", "o1", "new@x"));
    }

    /**
     * A declaration that goes away (or changes its columns) takes its index with it at the next start; a new
     * one is built. Another pod's pushes are not held up by the concurrent build: it waits for the transaction in
     * flight, which a push of the running pod does not.
     */
    @Test
    void aChangedDeclarationIsRebuiltConcurrentlyWhilePushesGoOn() throws Exception {
        PostgresSyncStorage running = ensured(PLAIN);
        String s = running.pgSchema();
        String p = partition(running);
        write(running, p, member("m1", "o1", "a@x"));
        CompletableFuture<Void> starting;
        try (HeldTransaction inFlight = HeldTransaction.begin(
                pool,
                "INSERT INTO \"" + s + "\".sync_rows_members (id, org_id, _sync_partition, _sync_row_id,"
                        + " _sync_server_version, _sync_scopes) VALUES ('h', 'o1', 'p-held', 'h', 1, '{}')")) {
            starting = storage(s).ensureSchema(UNIQUE).subscribeAsCompletionStage();
            inFlight.awaitBlocked(); // the concurrent build waits for the transaction in flight
            assertFalse(starting.isDone());
            // meanwhile the running pod takes pushes
            write(running, p, member("m2", "o1", "b@x"));
        }
        starting.get(60, TimeUnit.SECONDS);
        List<Row> idx = uniqueIndexes(s);
        assertEquals(1, idx.size());
        assertEquals(Boolean.TRUE, idx.get(0).getBoolean(1));
        String first = idx.get(0).getString(0);
        // the same name, other columns: a new index, the old one dropped
        CompiledSchema moved = schema(1, "[{\"name\":\"members_org_email\",\"columns\":[\"email\"],\"unique\":true}]");
        await(storage(s).ensureSchema(moved));
        idx = uniqueIndexes(s);
        assertEquals(1, idx.size());
        assertFalse(first.equals(idx.get(0).getString(0)), "renamed by its definition");
        assertTrue(
                idx.get(0).getString(2).endsWith("(_sync_partition, email)"),
                idx.get(0).getString(2));
        // no longer declared: dropped
        await(storage(s).ensureSchema(PLAIN));
        assertTrue(uniqueIndexes(s).isEmpty());
        assertNotNull(rows(running, p).get("m2"));
    }

    @Test
    void theIndexNameFitsPostgresAndFollowsItsDefinition() {
        var index = new dev.syncular.server.schema.IndexDef("i".repeat(63), List.of("a", "b"), true);
        String name = UniqueIndexes.physicalName("t", index);
        assertTrue(name.getBytes(StandardCharsets.UTF_8).length <= 63, name);
        assertTrue(name.startsWith(UniqueIndexes.PREFIX));
        assertFalse(name.equals(UniqueIndexes.physicalName(
                "t", new dev.syncular.server.schema.IndexDef(index.name(), List.of("b", "a"), true))));
        assertFalse(name.equals(UniqueIndexes.physicalName("u", index)));
        assertEquals(name, UniqueIndexes.physicalName("t", index));
    }
}
