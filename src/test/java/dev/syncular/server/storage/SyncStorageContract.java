package dev.syncular.server.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Op;
import io.smallrye.mutiny.Uni;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The {@link SyncStorage} contract. Subclasses supply a storage whose backing store is empty and isolated
 * for the test class; every test works in its own fresh partition so tests never interfere.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class SyncStorageContract {
    protected static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** tasks: every column type, two scope patterns; notes: integer primary key; files: two blob_ref columns. */
    public static final String SCHEMA_JSON = """
            {
              "version": 1,
              "tables": [
                {
                  "name": "tasks",
                  "columns": [
                    { "name": "id", "type": "string", "nullable": false },
                    { "name": "project_id", "type": "string", "nullable": false },
                    { "name": "org_id", "type": "string", "nullable": false },
                    { "name": "title", "type": "string", "nullable": true },
                    { "name": "n", "type": "integer", "nullable": true },
                    { "name": "score", "type": "float", "nullable": true },
                    { "name": "done", "type": "boolean", "nullable": true },
                    { "name": "meta", "type": "json", "nullable": true },
                    { "name": "blob", "type": "bytes", "nullable": true },
                    { "name": "doc", "type": "crdt", "nullable": true, "crdtType": "yjs-doc" }
                  ],
                  "primaryKey": "id",
                  "scopes": ["project:{project_id}", { "pattern": "org:{org_id}", "column": "org_id" }]
                },
                {
                  "name": "notes",
                  "columns": [
                    { "name": "note_id", "type": "integer", "nullable": false },
                    { "name": "project_id", "type": "string", "nullable": false },
                    { "name": "body", "type": "string", "nullable": true }
                  ],
                  "primaryKey": "note_id",
                  "scopes": ["project:{project_id}"]
                },
                {
                  "name": "files",
                  "columns": [
                    { "name": "id", "type": "string", "nullable": false },
                    { "name": "project_id", "type": "string", "nullable": false },
                    { "name": "main", "type": "blob_ref", "nullable": true },
                    { "name": "thumb", "type": "blob_ref", "nullable": true }
                  ],
                  "primaryKey": "id",
                  "scopes": ["project:{project_id}"]
                }
              ]
            }
            """;

    protected CompiledSchema schema;
    protected SyncStorage storage;

    /** A storage over an empty, isolated backing store (called once per test class). */
    protected abstract SyncStorage createStorage();

    /** Row counts of every table the storage owns (for the rollback test), keyed by table name. */
    protected abstract Map<String, Long> countAllTables();

    @BeforeAll
    void setUpStorage() {
        schema = SchemaLoader.parse(SCHEMA_JSON);
        storage = createStorage();
        await(storage.ensureSchema(schema));
    }

    protected static <T> T await(Uni<T> uni) {
        return uni.await().atMost(TIMEOUT);
    }

    protected static StorageException storageFailure(Uni<?> uni) {
        Throwable thrown = assertThrows(Throwable.class, () -> await(uni));
        Throwable t = thrown;
        while (!(t instanceof StorageException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (!(t instanceof StorageException se)) {
            throw new AssertionError("expected StorageException", thrown);
        }
        return se;
    }

    protected String newPartition() {
        String p = "p-" + UUID.randomUUID();
        await(storage.touchPartition(p, 1_000L));
        return p;
    }

    protected static Object[] task(String id, String project, String org, String title) {
        return new Object[] {
            id, project, org, title, 42L, 1.5, true, "{\"a\": [1, 2]}", new byte[] {1, 2, 3}, new byte[] {9}
        };
    }

    protected static Map<String, String> taskScopes(String project, String org) {
        return Map.of("project_id", project, "org_id", org);
    }

    protected static ChangeToWrite taskUpsert(String id, String project, String org, long version) {
        return ChangeToWrite.upsert("tasks", id, version, taskScopes(project, org), task(id, project, org, "t-" + id));
    }

    /** Appends one commit in its own transaction; returns its commitSeq. */
    protected long commit(String partition, List<ChangeToWrite> changes) {
        return await(storage.inPartitionTransaction(
                partition,
                tx -> tx.appendCommit(
                        "actor-1", "client-1", UUID.randomUUID().toString(), 5_000L, changes, StoredCommit.UNTRACED)));
    }

    protected static PushOutcome applied(long seq, String body) {
        return new PushOutcome(CommitStatus.APPLIED, seq, body.getBytes(StandardCharsets.UTF_8), 7_000L);
    }

    // ---- schema ------------------------------------------------------------------------------------

    @Test
    void ensureSchemaIsIdempotent() {
        await(storage.ensureSchema(schema));
        await(storage.ensureSchema(SchemaLoader.parse(SCHEMA_JSON)));
        String p = newPartition();
        assertEquals(1L, commit(p, List.of(taskUpsert("a", "P1", "O1", 1))));
    }

    // ---- partition registry (§2.1) -----------------------------------------------------------------

    @Test
    void partitionCreationAndEpochRotation() {
        String p = "p-" + UUID.randomUUID();
        assertNull(await(storage.readPartition(p)));
        PartitionState created = await(storage.touchPartition(p, 1_000L));
        assertEquals(p, created.partition());
        assertEquals(0L, created.maxCommitSeq());
        assertEquals(0L, created.horizonSeq());
        assertEquals(1_000L, created.createdAtMs());
        assertTrue(created.logEpoch().matches("[A-Za-z0-9_-]{22}"), created.logEpoch());

        PartitionState touched = await(storage.touchPartition(p, 2_000L));
        assertEquals(created.logEpoch(), touched.logEpoch());
        assertEquals(1_000L, touched.createdAtMs());
        assertEquals(2_000L, touched.lastSeenAtMs());
        assertEquals(2_000L, await(storage.touchPartition(p, 1_500L)).lastSeenAtMs(), "last-seen never goes back");

        String other = newPartition();
        assertNotEquals(created.logEpoch(), await(storage.readPartition(other)).logEpoch());
        assertTrue(await(storage.listPartitions()).stream()
                .anyMatch(s -> s.partition().equals(p)));

        await(storage.upsertClient(new ClientRecord(p, "c1", "actor-1", 3, 2_000L, "[{\"id\":\"s1\"}]", 3, 1)));
        await(storage.upsertClient(new ClientRecord(other, "c1", "actor-1", 3, 2_000L, null, null, null)));
        long seq = commit(p, List.of(taskUpsert("a", "P1", "O1", 1)));

        PartitionState rotated = await(storage.rotateLogEpoch(p));
        assertNotEquals(created.logEpoch(), rotated.logEpoch());
        assertEquals(seq, rotated.maxCommitSeq(), "rotation keeps the log");
        assertEquals(rotated.logEpoch(), await(storage.readPartition(p)).logEpoch());
        assertNull(await(storage.readClient(p, "c1")), "rotation deletes cursor records");
        assertNotNull(await(storage.readClient(other, "c1")), "other partitions keep theirs");

        assertEquals(
                StorageException.UNKNOWN_PARTITION,
                storageFailure(storage.rotateLogEpoch("p-missing-" + UUID.randomUUID()))
                        .code());
        assertEquals(
                StorageException.UNKNOWN_PARTITION,
                storageFailure(storage.inPartitionTransaction(
                                "p-missing-" + UUID.randomUUID(),
                                tx -> Uni.createFrom().item(1)))
                        .code());
    }

    @Test
    void partitionsListInPagesByIdInByteOrder() {
        String prefix = "page-" + UUID.randomUUID() + "-";
        List<String> ids = List.of(prefix + "B", prefix + "a", prefix + "b");
        for (String id : ids) {
            await(storage.touchPartition(id, 1_000L));
        }
        List<PartitionState> first = await(storage.listPartitions(prefix, 2));
        assertEquals(
                List.of(prefix + "B", prefix + "a"),
                first.stream().map(PartitionState::partition).toList(),
                "byte order: upper case first");
        List<PartitionState> next = await(storage.listPartitions(prefix + "a", 1));
        assertEquals(prefix + "b", next.get(0).partition());
        assertEquals(await(storage.readPartition(prefix + "b")), next.get(0));
        List<PartitionState> all = await(storage.listPartitions(null, 100_000));
        assertEquals(await(storage.listPartitions()).size(), all.size());
        assertTrue(await(storage.listPartitions(prefix + "c", 10)).stream()
                .noneMatch(s -> s.partition().startsWith(prefix)));
    }

    @Test
    void rowCountsPerTableOfOnePartition() {
        String p = newPartition();
        assertEquals(Map.of("tasks", 0L, "notes", 0L, "files", 0L), await(storage.countRows(p)));
        await(storage.inPartitionTransaction(
                p,
                tx -> tx.upsertRow(
                                "tasks",
                                new StoredRow(
                                        "r1", 1, task("r1", "P1", "O1", "x"), new long[10], taskScopes("P1", "O1")))
                        .chain(() -> tx.upsertRow(
                                "tasks",
                                new StoredRow(
                                        "r2", 1, task("r2", "P2", "O1", "y"), new long[10], taskScopes("P2", "O1"))))));
        String other = newPartition();
        await(storage.inPartitionTransaction(
                other,
                tx -> tx.upsertRow(
                        "tasks",
                        new StoredRow("r1", 1, task("r1", "P1", "O1", "x"), new long[10], taskScopes("P1", "O1")))));
        Map<String, Long> counts = await(storage.countRows(p));
        assertEquals(List.of("tasks", "notes", "files"), List.copyOf(counts.keySet()), "schema table order");
        assertEquals(Map.of("tasks", 2L, "notes", 0L, "files", 0L), counts);
    }

    // ---- commit sequencing (§2.1, §6.4) ------------------------------------------------------------

    @Test
    void concurrentPartitionTransactionsAssignDenseGapFreeSeqs() {
        String p = newPartition();
        List<Uni<Long>> pushes = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String id = "row-" + i;
            pushes.add(storage.inPartitionTransaction(
                    p,
                    tx -> tx.readRows("tasks", List.of(id))
                            .chain(rows -> tx.appendCommit(
                                    "actor-1",
                                    "client-1",
                                    "cc-" + id,
                                    5_000L,
                                    List.of(taskUpsert(id, "P1", "O1", 1)),
                                    StoredCommit.UNTRACED))
                            .call(seq -> tx.upsertRow(
                                    "tasks",
                                    new StoredRow(
                                            id, 1, task(id, "P1", "O1", "x"), new long[10], taskScopes("P1", "O1"))))
                            .call(seq -> tx.savePushResult("client-1", "cc-" + id, applied(seq, "ok")))));
        }
        List<Long> seqs = await(Uni.join().all(pushes).andFailFast());
        assertEquals(LongStream.rangeClosed(1, 20).boxed().collect(Collectors.toSet()), Set.copyOf(seqs));
        assertEquals(20, seqs.size());
        assertEquals(20L, await(storage.readPartition(p)).maxCommitSeq());
        CommitWindow all = await(
                storage.readCommits(p, new CommitQuery("tasks", Map.of("project_id", Set.of("P1")), 0, 20, 1000)));
        assertEquals(
                LongStream.rangeClosed(1, 20).boxed().toList(),
                all.commits().stream().map(StoredCommit::commitSeq).toList());
    }

    // ---- atomicity (§6.4) --------------------------------------------------------------------------

    @Test
    void failedTransactionLeavesStorageExactlyAsItWas() {
        String p = newPartition();
        long seq = commit(p, List.of(taskUpsert("keep", "P1", "O1", 1)));
        await(storage.inPartitionTransaction(
                p,
                tx -> tx.upsertRow(
                        "tasks",
                        new StoredRow(
                                "keep", 1, task("keep", "P1", "O1", "k"), new long[10], taskScopes("P1", "O1")))));
        Map<String, Long> before = countAllTables();
        PartitionState stateBefore = await(storage.readPartition(p));

        RuntimeException boom = new RuntimeException("rejected by the engine");
        Throwable failure = assertThrows(
                Throwable.class,
                () -> await(storage.inPartitionTransaction(
                        p,
                        tx -> tx.appendCommit(
                                        "actor-1",
                                        "client-1",
                                        "cc-fail",
                                        5_000L,
                                        List.of(
                                                taskUpsert("new", "P1", "O1", 1),
                                                ChangeToWrite.delete("tasks", "keep", taskScopes("P1", "O1"))),
                                        StoredCommit.UNTRACED)
                                .call(s -> tx.upsertRow(
                                        "tasks",
                                        new StoredRow(
                                                "new",
                                                1,
                                                task("new", "P1", "O1", "n"),
                                                new long[10],
                                                taskScopes("P1", "O1"))))
                                .call(s -> tx.deleteRow("tasks", "keep", s))
                                .call(s -> tx.savePushResult("client-1", "cc-fail", applied(s, "ok")))
                                .chain(s -> Uni.createFrom().<Long>failure(boom)))));
        assertEquals(boom.getMessage(), failure.getMessage());

        assertEquals(before, countAllTables());
        assertEquals(stateBefore, await(storage.readPartition(p)));
        assertNull(await(storage.findPushResult(p, "client-1", "cc-fail")));
        assertNotNull(await(storage.readRows(p, "tasks", List.of("keep"))).get("keep"));
        assertEquals(seq + 1, commit(p, List.of(taskUpsert("after", "P1", "O1", 1))), "no gap after a rollback");
    }

    @Test
    void missingScopesFailLoudAndRollBack() {
        String p = newPartition();
        Map<String, Long> before = countAllTables();
        StorageException e = storageFailure(storage.inPartitionTransaction(
                p,
                tx -> tx.appendCommit(
                        "actor-1",
                        "client-1",
                        "cc",
                        5_000L,
                        List.of(new ChangeToWrite("tasks", "a", Op.UPSERT, 1L, null, task("a", "P1", "O1", "t"))),
                        StoredCommit.UNTRACED)));
        assertEquals(StorageException.MISSING_SCOPES, e.code());
        assertEquals(before, countAllTables());
    }

    @Test
    void savepointRollsBackOneCommitAndKeepsTheTransaction() {
        String p = newPartition();
        PushOutcome rejected = new PushOutcome(CommitStatus.REJECTED, null, new byte[] {3, 1, 4}, 8_000L);
        String outcome = await(storage.inPartitionTransaction(
                p,
                tx -> tx.savepoint(() -> tx.appendCommit(
                                        "actor-1",
                                        "client-1",
                                        "cc-r",
                                        5_000L,
                                        List.of(taskUpsert("r", "P1", "O1", 1)),
                                        StoredCommit.UNTRACED)
                                .call(s -> tx.upsertRow(
                                        "tasks",
                                        new StoredRow(
                                                "r",
                                                1,
                                                task("r", "P1", "O1", "r"),
                                                new long[10],
                                                taskScopes("P1", "O1"))))
                                .chain(s -> Uni.createFrom().<Long>failure(new IllegalStateException("conflict"))))
                        .onFailure(IllegalStateException.class)
                        .recoverWithItem(-1L)
                        .chain(x -> {
                            assertEquals(0L, tx.state().maxCommitSeq());
                            return tx.savePushResult("client-1", "cc-r", rejected);
                        })
                        .replaceWith("done")));
        assertEquals("done", outcome);
        assertEquals(0L, await(storage.readPartition(p)).maxCommitSeq());
        assertTrue(await(storage.readRows(p, "tasks", List.of("r"))).isEmpty());
        PushOutcome stored = await(storage.findPushResult(p, "client-1", "cc-r"));
        assertEquals(CommitStatus.REJECTED, stored.status());
        assertNull(stored.commitSeq());
        assertArrayEquals(new byte[] {3, 1, 4}, stored.result());
        assertEquals(1L, commit(p, List.of(taskUpsert("s", "P1", "O1", 1))));
    }

    // ---- idempotency (§2.3) ------------------------------------------------------------------------

    @Test
    void idempotencyRecordRoundTrip() {
        String p = newPartition();
        assertNull(await(storage.findPushResult(p, "client-1", "cc-1")));
        byte[] body = {0, 1, 2, (byte) 0xff, 0};
        long seq = await(storage.inPartitionTransaction(
                p,
                tx -> tx.findPushResult("client-1", "cc-1")
                        .chain(none -> {
                            assertNull(none);
                            return tx.appendCommit(
                                    "actor-1",
                                    "client-1",
                                    "cc-1",
                                    5_000L,
                                    List.of(taskUpsert("a", "P1", "O1", 1)),
                                    StoredCommit.UNTRACED);
                        })
                        .call(s -> tx.savePushResult(
                                "client-1", "cc-1", new PushOutcome(CommitStatus.APPLIED, s, body, 9_000L)))));
        PushOutcome found = await(storage.findPushResult(p, "client-1", "cc-1"));
        assertEquals(CommitStatus.APPLIED, found.status());
        assertEquals(seq, found.commitSeq());
        assertArrayEquals(body, found.result());
        assertEquals(9_000L, found.createdAtMs());
        PushOutcome locked = await(storage.inPartitionTransaction(p, tx -> tx.findPushResult("client-1", "cc-1")));
        assertArrayEquals(body, locked.result());
        assertNull(await(storage.findPushResult(p, "client-2", "cc-1")), "the key includes the client id");
        assertNull(await(storage.findPushResult(newPartition(), "client-1", "cc-1")), "the key includes the partition");
        StorageException dup = storageFailure(
                storage.inPartitionTransaction(p, tx -> tx.savePushResult("client-1", "cc-1", applied(99, "other"))));
        assertEquals(StorageException.DUPLICATE_PUSH_RESULT, dup.code());
        assertArrayEquals(
                body, await(storage.findPushResult(p, "client-1", "cc-1")).result());
    }

    // ---- pull: commit windows (§4.5) ---------------------------------------------------------------

    /**
     * §4.5 windows over commits that hold many changes: each of 12 commits writes one task and 40 notes. A window of
     * tasks cut at 5 changes holds 5 commits; one not cut holds all 12 and scans through its upper bound — however the
     * storage bounds what it reads per statement by the commits' sizes.
     */
    @Test
    void windowsOverCommitsWithManyChangesElsewhereAreWhole() {
        String p = newPartition();
        List<Long> seqs = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            List<ChangeToWrite> changes = new ArrayList<>();
            changes.add(taskUpsert("w" + i, "P1", "O1", 1));
            for (int k = 0; k < 40; k++) {
                long id = i * 100L + k;
                changes.add(ChangeToWrite.upsert(
                        "notes", Long.toString(id), 1, Map.of("project_id", "P1"), new Object[] {id, "P1", null}));
            }
            seqs.add(commit(p, changes));
        }
        long last = seqs.get(seqs.size() - 1);
        CommitWindow cut =
                await(storage.readCommits(p, new CommitQuery("tasks", Map.of("project_id", Set.of("P1")), 0, last, 5)));
        assertTrue(cut.truncated());
        assertEquals(
                seqs.subList(0, 5),
                cut.commits().stream().map(StoredCommit::commitSeq).toList());
        assertEquals(seqs.get(4), cut.scannedThroughSeq());
        CommitWindow whole = await(
                storage.readCommits(p, new CommitQuery("tasks", Map.of("project_id", Set.of("P1")), 0, last, 1000)));
        assertFalse(whole.truncated());
        assertEquals(seqs, whole.commits().stream().map(StoredCommit::commitSeq).toList());
        assertEquals(last, whole.scannedThroughSeq());
        CommitWindow notes = await(
                storage.readCommits(p, new CommitQuery("notes", Map.of("project_id", Set.of("P1")), 0, last, 100)));
        assertEquals(
                seqs.subList(0, 2),
                notes.commits().stream().map(StoredCommit::commitSeq).toList());
        assertEquals(
                80, notes.commits().stream().mapToInt(c -> c.changes().size()).sum());
    }

    @Test
    void readCommitsFiltersByScopesAndTable() {
        String p = newPartition();
        long s1 = commit(p, List.of(taskUpsert("a", "P1", "O1", 1), taskUpsert("b", "P2", "O1", 1)));
        long s2 = commit(p, List.of(taskUpsert("c", "P2", "O2", 1)));
        long s3 = commit(p, List.of(ChangeToWrite.upsert("notes", "7", 1, Map.of("project_id", "P1"), new Object[] {
            7L, "P1", null
        })));
        long s4 = commit(
                p, List.of(ChangeToWrite.delete("tasks", "a", taskScopes("P1", "O1")), taskUpsert("d", "P1", "O2", 3)));

        CommitWindow w =
                await(storage.readCommits(p, new CommitQuery("tasks", Map.of("project_id", Set.of("P1")), 0, s4, 100)));
        assertFalse(w.truncated());
        assertEquals(s4, w.scannedThroughSeq());
        assertEquals(
                List.of(s1, s4),
                w.commits().stream().map(StoredCommit::commitSeq).toList());
        StoredCommit first = w.commits().get(0);
        assertEquals("actor-1", first.actorId());
        assertEquals("client-1", first.clientId());
        assertEquals(5_000L, first.createdAtMs());
        assertEquals(1, first.changes().size(), "changes outside the scopes are filtered out");
        StoredChange a = first.changes().get(0);
        assertEquals("tasks", a.table());
        assertEquals("a", a.rowId());
        assertEquals(Op.UPSERT, a.op());
        assertEquals(1L, a.rowVersion());
        assertEquals(taskScopes("P1", "O1"), a.scopes());
        assertRowEquals(task("a", "P1", "O1", "t-a"), a.row());
        StoredChange del = w.commits().get(1).changes().get(0);
        assertEquals(Op.DELETE, del.op());
        assertNull(del.rowVersion());
        assertNull(del.row());
        assertEquals(3L, w.commits().get(1).changes().get(1).rowVersion());

        // §3.2: variables are independent dimensions (AND), values within one are alternatives (OR)
        CommitWindow and = await(storage.readCommits(
                p,
                new CommitQuery(
                        "tasks", Map.of("project_id", Set.of("P1", "P2"), "org_id", Set.of("O2")), 0, s4, 100)));
        assertEquals(
                List.of(s2, s4),
                and.commits().stream().map(StoredCommit::commitSeq).toList());
        assertEquals(
                List.of("d"),
                and.commits().get(1).changes().stream().map(StoredChange::rowId).toList());

        CommitWindow notes =
                await(storage.readCommits(p, new CommitQuery("notes", Map.of("project_id", Set.of("P1")), 0, s4, 100)));
        assertEquals(
                List.of(s3),
                notes.commits().stream().map(StoredCommit::commitSeq).toList());
        assertRowEquals(
                new Object[] {7L, "P1", null},
                notes.commits().get(0).changes().get(0).row());

        CommitWindow window = await(
                storage.readCommits(p, new CommitQuery("tasks", Map.of("project_id", Set.of("P1")), s1, s3, 100)));
        assertTrue(window.commits().isEmpty(), "a quiet window is empty");
        assertEquals(s3, window.scannedThroughSeq(), "the cursor still advances over a quiet window");

        StorageException unknown = storageFailure(
                storage.readCommits(p, new CommitQuery("tasks", Map.of("nope", Set.of("x")), 0, s4, 10)));
        assertEquals(StorageException.INVALID_ARGUMENT, unknown.code());
    }

    @Test
    void readCommitsCutsAtTheChangeLimitWithoutSplittingACommit() {
        String p = newPartition();
        List<Long> seqs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            seqs.add(commit(p, List.of(taskUpsert("x" + i, "P1", "O1", 1), taskUpsert("y" + i, "P1", "O1", 1))));
            commit(p, List.of(taskUpsert("z" + i, "P9", "O1", 1))); // outside the scope
        }
        long max = await(storage.readPartition(p)).maxCommitSeq();
        Map<String, Set<String>> scopes = Map.of("project_id", Set.of("P1"));

        CommitWindow cut = await(storage.readCommits(p, new CommitQuery("tasks", scopes, 0, max, 5)));
        assertTrue(cut.truncated());
        assertEquals(
                seqs.subList(0, 2),
                cut.commits().stream().map(StoredCommit::commitSeq).toList());
        assertEquals(4, cut.changeCount());
        assertEquals(seqs.get(1), cut.scannedThroughSeq());

        CommitWindow exact = await(storage.readCommits(p, new CommitQuery("tasks", scopes, 0, max, 8)));
        assertFalse(exact.truncated());
        assertEquals(8, exact.changeCount());
        assertEquals(max, exact.scannedThroughSeq());

        CommitWindow oversized = await(storage.readCommits(p, new CommitQuery("tasks", scopes, 0, max, 1)));
        assertEquals(
                List.of(seqs.get(0)),
                oversized.commits().stream().map(StoredCommit::commitSeq).toList(),
                "a commit larger than the limit is delivered whole");
        assertEquals(2, oversized.changeCount());

        CommitWindow resumed =
                await(storage.readCommits(p, new CommitQuery("tasks", scopes, cut.scannedThroughSeq(), max, 5)));
        assertEquals(
                seqs.subList(2, 4),
                resumed.commits().stream().map(StoredCommit::commitSeq).toList());
        assertFalse(resumed.truncated());
    }

    /**
     * More index hits than one scan batch (32 seqs for a small change limit) whose changes another variable
     * filters out: the scan continues past them and the cursor still covers the whole window.
     */
    /**
     * {@link RecentCommits#window} answers §4.5 windows from a pod's memory and must answer exactly what
     * {@link SyncStorage#readCommits} answers (issue 44): a seeded random log — two tables, scopes over two variables,
     * deletes of earlier rows, commits of one to four changes — and random windows over it (tables, value sets,
     * bounds, change limits that cut), compared commit by commit and change by change. {@code -Drecent.seed=<n>}
     * replays a run; the seed is in every failure.
     */
    @Test
    void recentCommitWindowsEqualTheLogsOnRandomLogsAndQueries() {
        long seed = Long.getLong("recent.seed", new Random().nextLong());
        Random rnd = new Random(seed);
        String p = newPartition();
        RecentCommits recent = new RecentCommits(64L << 20);
        String[] projects = {"P1", "P2", "P3"};
        String[] orgs = {"O1", "O2"};
        List<ChangeToWrite> live = new ArrayList<>();
        long max = 0;
        int commits = 60 + rnd.nextInt(60);
        for (int i = 0; i < commits; i++) {
            List<ChangeToWrite> changes = new ArrayList<>();
            Set<String> touched = new HashSet<>();
            for (int j = 0, k = 1 + rnd.nextInt(4); j < k; j++) {
                int kind = rnd.nextInt(10);
                if (kind < 2 && !live.isEmpty()) {
                    ChangeToWrite row = live.get(rnd.nextInt(live.size()));
                    if (touched.add(row.rowId())) {
                        live.remove(row);
                        changes.add(ChangeToWrite.delete("tasks", row.rowId(), row.scopes()));
                    }
                } else if (kind < 4) {
                    String project = projects[rnd.nextInt(projects.length)];
                    long id = i * 10L + j;
                    changes.add(ChangeToWrite.upsert(
                            "notes", Long.toString(id), 1, Map.of("project_id", project), new Object[] {
                                id, project, null
                            }));
                } else {
                    ChangeToWrite row = taskUpsert(
                            "t" + i + "-" + j,
                            projects[rnd.nextInt(projects.length)],
                            orgs[rnd.nextInt(orgs.length)],
                            1);
                    live.add(row);
                    touched.add(row.rowId());
                    changes.add(row);
                }
            }
            if (changes.isEmpty()) {
                ChangeToWrite row = taskUpsert("t" + i, "P1", "O1", 1);
                live.add(row);
                changes.add(row);
            }
            max = commit(p, changes);
            recent.offer(p, "epoch", await(storage.readCommit(p, max)));
        }
        for (int q = 0; q < 300; q++) {
            String table = rnd.nextInt(4) == 0 ? "notes" : "tasks";
            Map<String, Set<String>> scopes = new HashMap<>();
            scopes.put("project_id", someOf(rnd, projects));
            if (table.equals("tasks") && rnd.nextBoolean()) {
                scopes.put("org_id", someOf(rnd, orgs));
            }
            long after = rnd.nextInt((int) max + 1);
            long upTo = after + rnd.nextInt((int) (max - after) + 1);
            CommitQuery query = new CommitQuery(table, scopes, after, upTo, 1 + rnd.nextInt(12));
            String where = "seed " + seed + " (-Drecent.seed), " + query;
            CommitWindow fromLog = await(storage.readCommits(p, query));
            CommitWindow fromMemory = recent.window(p, "epoch", query)
                    .orElseThrow(() -> new AssertionError("the run holds the whole log: " + where));
            assertEquals(windowText(fromLog), windowText(fromMemory), where);
        }
    }

    private static Set<String> someOf(Random rnd, String[] values) {
        Set<String> out = new HashSet<>();
        for (String v : values) {
            if (rnd.nextBoolean()) {
                out.add(v);
            }
        }
        if (out.isEmpty()) {
            out.add(values[rnd.nextInt(values.length)]);
        }
        return out;
    }

    private static String windowText(CommitWindow w) {
        StringBuilder b = new StringBuilder()
                .append("through ")
                .append(w.scannedThroughSeq())
                .append(w.truncated() ? " truncated" : "")
                .append('\n');
        for (StoredCommit c : w.commits()) {
            b.append(c.commitSeq())
                    .append(' ')
                    .append(c.actorId())
                    .append(' ')
                    .append(c.clientId())
                    .append(' ')
                    .append(c.clientCommitId())
                    .append(' ')
                    .append(c.createdAtMs())
                    .append('\n');
            for (StoredChange ch : c.changes()) {
                b.append("  ")
                        .append(ch.table())
                        .append(' ')
                        .append(ch.rowId())
                        .append(' ')
                        .append(ch.op())
                        .append(' ')
                        .append(ch.rowVersion())
                        .append(' ')
                        .append(new TreeMap<>(ch.scopes()))
                        .append(' ')
                        .append(Arrays.deepToString(ch.row()))
                        .append('\n');
            }
        }
        return b.toString();
    }

    @Test
    void readCommitsScansPastBatchesOfFilteredCommits() {
        String p = newPartition();
        for (int i = 0; i < 40; i++) {
            commit(p, List.of(taskUpsert("o2-" + i, "P1", "O2", 1)));
        }
        long hit = commit(p, List.of(taskUpsert("o1", "P1", "O1", 1)));
        long tail = commit(p, List.of(taskUpsert("o2-tail", "P1", "O2", 1)));
        Map<String, Set<String>> scopes = Map.of("project_id", Set.of("P1"), "org_id", Set.of("O1"));
        CommitWindow w = await(storage.readCommits(p, new CommitQuery("tasks", scopes, 0, tail, 5)));
        assertEquals(
                List.of(hit), w.commits().stream().map(StoredCommit::commitSeq).toList());
        assertEquals(
                List.of("o1"),
                w.commits().get(0).changes().stream().map(StoredChange::rowId).toList());
        assertFalse(w.truncated());
        assertEquals(tail, w.scannedThroughSeq());
        CommitWindow none = await(storage.readCommits(p, new CommitQuery("tasks", scopes, hit, tail, 5)));
        assertTrue(none.commits().isEmpty());
        assertEquals(tail, none.scannedThroughSeq());
    }

    // ---- pull: rows (§4.7) and tombstones (§2.2) ---------------------------------------------------

    @Test
    void rowPagesOrderedByRowId() {
        String p = newPartition();
        List<String> ids = List.of("b", "a", "e", "c", "d", "B", "é");
        await(storage.inPartitionTransaction(p, tx -> {
            Uni<Void> chain = Uni.createFrom().voidItem();
            for (String id : ids) {
                long[] cv = {1, 1, 1, 7, 1, 3, 1, 1, 1, 200};
                chain = chain.chain(() -> tx.upsertRow(
                        "tasks", new StoredRow(id, 7, task(id, "P1", "O1", "t" + id), cv, taskScopes("P1", "O1"))));
            }
            return chain.chain(() -> tx.upsertRow(
                    "tasks",
                    new StoredRow("other", 1, task("other", "P2", "O1", "o"), new long[10], taskScopes("P2", "O1"))));
        }));
        Map<String, Set<String>> scopes = Map.of("project_id", Set.of("P1"));
        List<StoredRow> page1 = await(storage.readRowsPage(p, "tasks", scopes, null, 3));
        assertEquals(
                List.of("B", "a", "b"), page1.stream().map(StoredRow::rowId).toList(), "byte order");
        List<StoredRow> page2 = await(storage.readRowsPage(p, "tasks", scopes, "b", 3));
        assertEquals(
                List.of("c", "d", "e"), page2.stream().map(StoredRow::rowId).toList());
        List<StoredRow> page3 = await(storage.readRowsPage(p, "tasks", scopes, "e", 3));
        assertEquals(List.of("é"), page3.stream().map(StoredRow::rowId).toList());
        assertTrue(await(storage.readRowsPage(p, "tasks", scopes, "é", 3)).isEmpty());

        StoredRow a = page1.get(1);
        assertEquals(7L, a.serverVersion());
        assertArrayEquals(new long[] {1, 1, 1, 7, 1, 3, 1, 1, 1, 200}, a.columnVersions());
        assertEquals(taskScopes("P1", "O1"), a.scopes());
        assertRowEquals(task("a", "P1", "O1", "ta"), a.values());

        assertEquals(
                List.of("other"),
                await(storage.readRowsPage(
                                p, "tasks", Map.of("project_id", Set.of("P2"), "org_id", Set.of("O1")), null, 10))
                        .stream()
                        .map(StoredRow::rowId)
                        .toList());
        assertTrue(await(storage.readRowsPage(
                        p, "tasks", Map.of("project_id", Set.of("P2"), "org_id", Set.of("O2")), null, 10))
                .isEmpty());
        assertTrue(
                await(storage.readRowsPage(newPartition(), "tasks", scopes, null, 10))
                        .isEmpty(),
                "partition-local");
    }

    /**
     * Snapshot pages (§4.7, §5.2) are bounded in bytes as well as rows: a read ends with the row at which the rows'
     * bytes reach the bound, says it was cut (fewer rows than its limit do not mean the end), and always carries at
     * least one row.
     */
    @Test
    void snapshotPagesAreBoundedInBytes() {
        String p = newPartition();
        String big = "x".repeat(100_000);
        List<String> ids = List.of("r1", "r2", "r3", "r4", "r5", "r6", "r7");
        await(storage.inPartitionTransaction(p, tx -> {
            Uni<Void> chain = Uni.createFrom().voidItem();
            for (String id : ids) {
                chain = chain.chain(() -> tx.upsertRow(
                        "tasks",
                        new StoredRow(id, 3, task(id, "P1", "O1", big), new long[10], taskScopes("P1", "O1"))));
            }
            return chain;
        }));
        Map<String, Set<String>> scopes = Map.of("project_id", Set.of("P1"));
        // each row holds a little over 100,000 bytes: the third reaches 250,000
        SnapshotRows first = await(storage.readSnapshotPage(p, "tasks", scopes, null, 100, 250_000));
        assertEquals(
                List.of("r1", "r2", "r3"),
                first.rows().stream().map(StoredRow::rowId).toList());
        assertTrue(first.cut(), "rows follow the cut");
        assertTrue(first.bytes() >= 300_000 && first.bytes() < 301_000, "bytes " + first.bytes());
        assertEquals(big, first.rows().get(2).values()[3]);
        SnapshotRows second = await(storage.readSnapshotPage(p, "tasks", scopes, first.lastRowId(), 100, 250_000));
        assertEquals(
                List.of("r4", "r5", "r6"),
                second.rows().stream().map(StoredRow::rowId).toList());
        assertTrue(second.cut());
        SnapshotRows last = await(storage.readSnapshotPage(p, "tasks", scopes, second.lastRowId(), 100, 250_000));
        assertEquals(List.of("r7"), last.rows().stream().map(StoredRow::rowId).toList());
        assertFalse(last.cut(), "below the bound: the end");

        // a bound below one row: one row a read, whatever its size
        SnapshotRows one = await(storage.readSnapshotPage(p, "tasks", scopes, "r4", 100, 1));
        assertEquals(List.of("r5"), one.rows().stream().map(StoredRow::rowId).toList());
        assertTrue(one.cut());
        // the row limit first: not cut, the caller's probe row tells the rest
        SnapshotRows limited = await(storage.readSnapshotPage(p, "tasks", scopes, null, 2, 10_000_000));
        assertEquals(
                List.of("r1", "r2"),
                limited.rows().stream().map(StoredRow::rowId).toList());
        assertFalse(limited.cut());
        // the scope's last row reaching the bound: cut all the same, and the next read is empty
        SnapshotRows end = await(storage.readSnapshotPage(p, "tasks", scopes, "r4", 100, 250_000));
        assertEquals(
                List.of("r5", "r6", "r7"),
                end.rows().stream().map(StoredRow::rowId).toList());
        assertTrue(end.cut());
        SnapshotRows none = await(storage.readSnapshotPage(p, "tasks", scopes, "r7", 100, 250_000));
        assertTrue(none.rows().isEmpty());
        assertFalse(none.cut());
    }

    @Test
    void rowsScopeMigrationAndNullValues() {
        String p = newPartition();
        Object[] sparse = {"n1", "P1", "O1", null, null, null, null, null, null, null};
        await(storage.inPartitionTransaction(
                p, tx -> tx.upsertRow("tasks", new StoredRow("n1", 1, sparse, new long[10], taskScopes("P1", "O1")))));
        StoredRow read =
                await(storage.readRows(p, "tasks", List.of("n1", "missing"))).get("n1");
        assertRowEquals(sparse, read.values());
        assertArrayEquals(new long[] {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, read.columnVersions());
        // scope migration: the row moves from P1 to P2; the row→scope index follows
        Object[] moved = {"n1", "P2", "O1", "moved", 5L, -0.25, false, "[]", new byte[0], null};
        await(storage.inPartitionTransaction(
                p,
                tx -> tx.upsertRow(
                        "tasks",
                        new StoredRow(
                                "n1", 2, moved, new long[] {1, 2, 1, 2, 2, 2, 2, 2, 2, 1}, taskScopes("P2", "O1")))));
        assertTrue(await(storage.readRowsPage(p, "tasks", Map.of("project_id", Set.of("P1")), null, 10))
                .isEmpty());
        StoredRow after = await(storage.readRowsPage(p, "tasks", Map.of("project_id", Set.of("P2")), null, 10))
                .get(0);
        assertEquals(2L, after.serverVersion());
        assertRowEquals(moved, after.values());
    }

    @Test
    void tombstonesAreWrittenByDeleteAndClearedByInsert() {
        String p = newPartition();
        await(storage.inPartitionTransaction(
                p,
                tx -> tx.upsertRow(
                        "tasks",
                        new StoredRow("t1", 1, task("t1", "P1", "O1", "x"), new long[10], taskScopes("P1", "O1")))));
        long seq = commit(p, List.of(ChangeToWrite.delete("tasks", "t1", taskScopes("P1", "O1"))));
        await(storage.inPartitionTransaction(p, tx -> tx.deleteRow("tasks", "t1", seq)));
        assertTrue(await(storage.readRows(p, "tasks", List.of("t1"))).isEmpty());
        assertTrue(await(storage.readRowsPage(p, "tasks", Map.of("project_id", Set.of("P1")), null, 10))
                .isEmpty());
        Tombstone ts = await(storage.inPartitionTransaction(p, tx -> tx.readTombstone("tasks", "t1")));
        assertEquals(new Tombstone("tasks", "t1", seq), ts);
        assertNull(await(storage.inPartitionTransaction(p, tx -> tx.readTombstone("notes", "t1"))));

        await(storage.inPartitionTransaction(
                p,
                tx -> tx.upsertRow(
                        "tasks",
                        new StoredRow(
                                "t1", 1, task("t1", "P1", "O1", "again"), new long[10], taskScopes("P1", "O1")))));
        assertNull(await(storage.inPartitionTransaction(p, tx -> tx.readTombstone("tasks", "t1"))));
    }

    /** The upsert over a known stored row has the same effect, scope index included. */
    @Test
    void upsertOverTheStoredRowKeepsTheScopeIndexExact() {
        String p = newPartition();
        StoredRow v1 = new StoredRow("s1", 1, task("s1", "P1", "O1", "one"), new long[10], taskScopes("P1", "O1"));
        await(storage.inPartitionTransaction(p, tx -> tx.upsertRow("tasks", v1)));
        StoredRow stored = await(storage.readRows(p, "tasks", List.of("s1"))).get("s1");
        StoredRow v2 = new StoredRow("s1", 2, task("s1", "P1", "O1", "two"), new long[10], taskScopes("P1", "O1"));
        await(storage.inPartitionTransaction(p, tx -> tx.upsertRow("tasks", v2, stored)));
        List<StoredRow> page = await(storage.readRowsPage(p, "tasks", Map.of("project_id", Set.of("P1")), null, 10));
        assertEquals(List.of("s1"), page.stream().map(StoredRow::rowId).toList());
        assertEquals(2L, page.get(0).serverVersion());
        assertEquals("two", page.get(0).values()[3]);

        StoredRow stored2 = await(storage.readRows(p, "tasks", List.of("s1"))).get("s1");
        StoredRow moved = new StoredRow("s1", 3, task("s1", "P2", "O1", "three"), new long[10], taskScopes("P2", "O1"));
        await(storage.inPartitionTransaction(p, tx -> tx.upsertRow("tasks", moved, stored2)));
        assertTrue(
                await(storage.readRowsPage(p, "tasks", Map.of("project_id", Set.of("P1")), null, 10))
                        .isEmpty(),
                "moved out of P1");
        assertEquals(
                List.of("s1"),
                await(storage.readRowsPage(p, "tasks", Map.of("project_id", Set.of("P2")), null, 10)).stream()
                        .map(StoredRow::rowId)
                        .toList());
        assertEquals(
                List.of("s1"),
                await(storage.readRowsPage(p, "tasks", Map.of("org_id", Set.of("O1")), null, 10)).stream()
                        .map(StoredRow::rowId)
                        .toList());
        assertEquals(
                taskScopes("P2", "O1"),
                await(storage.readRows(p, "tasks", List.of("s1"))).get("s1").scopes());
    }

    // ---- client records (§4.5) ---------------------------------------------------------------------

    @Test
    void clientRecordsRoundTrip() {
        String p = newPartition();
        assertNull(await(storage.readClient(p, "c1")));
        await(storage.upsertClient(new ClientRecord(p, "c1", "actor-1", -1, 10L, null, null, null)));
        await(storage.upsertClient(
                new ClientRecord(p, "c1", "actor-1", 12, 20L, "[{\"id\":\"s1\",\"table\":\"tasks\"}]", 3, 1)));
        await(storage.upsertClient(new ClientRecord(p, "c0", "actor-2", 4, 30L, null, null, null)));
        ClientRecord c1 = await(storage.readClient(p, "c1"));
        assertEquals(12L, c1.cursor());
        assertEquals(20L, c1.updatedAtMs());
        assertEquals(3, c1.wireVersion());
        assertEquals(1, c1.schemaVersion());
        assertNull(await(storage.readClient(p, "c0")).schemaVersion(), "a record that names no schema version");
        assertNotNull(c1.subscriptionsJson());
        assertTrue(c1.subscriptionsJson().contains("\"s1\""));
        assertEquals(
                List.of("c0", "c1"),
                await(storage.listClients(p)).stream()
                        .map(ClientRecord::clientId)
                        .toList());
    }

    /** §8.1 a socket upgrade's read: the client record and the partition state, each absent or as read alone. */
    @Test
    void aSocketEntryIsTheClientRecordAndThePartitionAsReadAlone() {
        String unknown = "never-registered-" + UUID.randomUUID();
        SocketEntry none = await(storage.readSocketEntry(unknown, "c1"));
        assertNull(none.client());
        assertNull(none.partition());
        String p = newPartition();
        SocketEntry noClient = await(storage.readSocketEntry(p, "c1"));
        assertNull(noClient.client());
        assertEquals(await(storage.readPartition(p)), noClient.partition());
        await(storage.upsertClient(
                new ClientRecord(p, "c1", "actor-1", 12, 20L, "[{\"id\":\"s1\",\"table\":\"tasks\"}]", 3, 1)));
        SocketEntry both = await(storage.readSocketEntry(p, "c1"));
        assertEquals(await(storage.readClient(p, "c1")), both.client());
        assertEquals(await(storage.readPartition(p)), both.partition());
    }

    // ---- pruning (§4.6) ----------------------------------------------------------------------------

    @Test
    void pruneDeletesThroughTheHorizonAndNeverLowersIt() {
        String p = newPartition();
        for (int i = 1; i <= 5; i++) {
            String id = "r" + i;
            long seq = await(storage.inPartitionTransaction(
                    p,
                    tx -> tx.appendCommit(
                                    "actor-1",
                                    "client-1",
                                    "cc-" + id,
                                    5_000L,
                                    List.of(taskUpsert(id, "P1", "O1", 1)),
                                    StoredCommit.UNTRACED)
                            .call(s -> tx.upsertRow(
                                    "tasks",
                                    new StoredRow(
                                            id, 1, task(id, "P1", "O1", "t"), new long[10], taskScopes("P1", "O1"))))
                            .call(s -> tx.savePushResult("client-1", "cc-" + id, applied(s, "ok")))));
            assertEquals(i, seq);
        }
        await(storage.inPartitionTransaction(
                p, tx -> tx.deleteRow("tasks", "r1", 2).chain(() -> tx.deleteRow("tasks", "r5", 5))));
        String epoch = await(storage.readPartition(p)).logEpoch();

        PruneResult r = await(storage.prune(p, epoch, 3));
        assertEquals(new PruneResult(0, 3, 3), r);
        assertTrue(r.advanced());
        assertEquals(3L, await(storage.readPartition(p)).horizonSeq());
        CommitWindow w =
                await(storage.readCommits(p, new CommitQuery("tasks", Map.of("project_id", Set.of("P1")), 0, 5, 100)));
        assertEquals(
                List.of(4L, 5L),
                w.commits().stream().map(StoredCommit::commitSeq).toList());
        assertNull(
                await(storage.inPartitionTransaction(p, tx -> tx.readTombstone("tasks", "r1"))),
                "tombstone ≤ horizon pruned");
        assertNotNull(await(storage.inPartitionTransaction(p, tx -> tx.readTombstone("tasks", "r5"))));
        assertNotNull(await(storage.findPushResult(p, "client-1", "cc-r1")), "push results survive pruning");
        assertEquals(
                3,
                await(storage.readRows(p, "tasks", List.of("r2", "r3", "r4"))).size(),
                "rows survive pruning");

        assertEquals(new PruneResult(3, 3, 0), await(storage.prune(p, epoch, 1)), "never lowers the horizon");
        assertEquals(new PruneResult(3, 5, 2), await(storage.prune(p, epoch, 99)), "capped at maxCommitSeq");

        StorageException stale = storageFailure(storage.prune(p, "stale-epoch", 5));
        assertEquals(StorageException.LOG_EPOCH_MISMATCH, stale.code());
        assertEquals(
                StorageException.UNKNOWN_PARTITION,
                storageFailure(storage.prune("p-missing-" + UUID.randomUUID(), epoch, 1))
                        .code());
        assertEquals(6L, commit(p, List.of(taskUpsert("r6", "P1", "O1", 1))), "sequence continues after pruning");
    }

    // ---- backfill checkpoints and serve gate (§2.4, RFC 0007) ---------------------------------------

    protected static final String CP = "tasks-projection";

    protected static StoredCheckpoint cp(
            String partition,
            String name,
            int version,
            CheckpointState state,
            long watermark,
            long ownerEpoch,
            long observedRows,
            long updatedAtMs) {
        return new StoredCheckpoint(partition, name, version, state, watermark, ownerEpoch, observedRows, updatedAtMs);
    }

    @Test
    void declareCheckpointIsIdempotent() {
        String p = newPartition();
        StoredCheckpoint declared = await(storage.declareCheckpoint(p, CP, 1, 100L));
        assertEquals(cp(p, CP, 1, CheckpointState.DECLARED, 0, 0, 0, 100L), declared);
        assertEquals(
                declared,
                await(storage.declareCheckpoint(p, CP, 1, 200L)),
                "an existing checkpoint is returned unchanged");
        assertEquals(List.of(declared), await(storage.readCheckpoints(p)));
        assertTrue(await(storage.readCheckpoints(newPartition())).isEmpty(), "partition-local");
    }

    @Test
    void claimBumpsTheOwnerEpoch() {
        String p = newPartition();
        StorageException missing = storageFailure(storage.claimCheckpoint(p, CP, 1, 100L));
        assertEquals(StorageException.CHECKPOINT_NOT_FOUND, missing.code());
        await(storage.declareCheckpoint(p, CP, 1, 100L));
        assertEquals(
                StorageException.CHECKPOINT_NOT_FOUND,
                storageFailure(storage.claimCheckpoint(p, CP, 2, 150L)).code(),
                "a claim names the declared schema version");
        assertEquals(
                cp(p, CP, 1, CheckpointState.BACKFILLING, 0, 1, 0, 200L),
                await(storage.claimCheckpoint(p, CP, 1, 200L)));
        assertEquals(
                cp(p, CP, 1, CheckpointState.BACKFILLING, 0, 2, 0, 300L),
                await(storage.claimCheckpoint(p, CP, 1, 300L)),
                "a backfilling checkpoint is re-claimed with a new epoch");
        assertEquals(
                List.of(cp(p, CP, 1, CheckpointState.BACKFILLING, 0, 2, 0, 300L)), await(storage.readCheckpoints(p)));
    }

    @Test
    void advanceIsACompareAndSetOnTheOwnerEpoch() {
        String p = newPartition();
        await(storage.declareCheckpoint(p, CP, 1, 100L));
        assertFalse(await(storage.advanceCheckpoint(p, CP, 0, 5, 5, 150L)), "a declared checkpoint has no owner");
        long first = await(storage.claimCheckpoint(p, CP, 1, 200L)).ownerEpoch();
        assertTrue(await(storage.advanceCheckpoint(p, CP, first, 3, 30, 250L)));
        assertTrue(await(storage.advanceCheckpoint(p, CP, first, 3, 30, 250L)), "a retried advance is harmless");
        long second = await(storage.claimCheckpoint(p, CP, 1, 300L)).ownerEpoch();
        assertEquals(first + 1, second);
        assertFalse(await(storage.advanceCheckpoint(p, CP, first, 9, 90, 350L)), "the previous owner lost the claim");
        assertEquals(
                List.of(cp(p, CP, 1, CheckpointState.BACKFILLING, 3, second, 30, 300L)),
                await(storage.readCheckpoints(p)));
        assertTrue(await(storage.advanceCheckpoint(p, CP, second, 4, 40, 400L)));
        assertFalse(await(storage.advanceCheckpoint(p, "other", second, 4, 40, 400L)), "undeclared");
        assertEquals(
                List.of(cp(p, CP, 1, CheckpointState.BACKFILLING, 4, second, 40, 400L)),
                await(storage.readCheckpoints(p)));
    }

    @Test
    void advanceInsideAPushTransactionCommitsAndRollsBackWithIt() {
        String p = newPartition();
        await(storage.declareCheckpoint(p, CP, 1, 100L));
        long epoch = await(storage.claimCheckpoint(p, CP, 1, 200L)).ownerEpoch();
        RuntimeException boom = new RuntimeException("batch failed");
        assertThrows(
                Throwable.class,
                () -> await(storage.inPartitionTransaction(
                        p,
                        tx -> tx.advanceCheckpoint(CP, epoch, 7, 70, 300L).chain(ok -> {
                            assertTrue(ok);
                            return Uni.createFrom().<Boolean>failure(boom);
                        }))));
        assertEquals(
                List.of(cp(p, CP, 1, CheckpointState.BACKFILLING, 0, epoch, 0, 200L)),
                await(storage.readCheckpoints(p)),
                "the watermark rolled back with its batch");
        Boolean advanced = await(storage.inPartitionTransaction(p, tx -> tx.advanceCheckpoint(CP, epoch, 7, 70, 300L)));
        assertTrue(advanced);
        Boolean stale =
                await(storage.inPartitionTransaction(p, tx -> tx.advanceCheckpoint(CP, epoch + 1, 8, 80, 400L)));
        assertFalse(stale);
        assertEquals(
                List.of(cp(p, CP, 1, CheckpointState.BACKFILLING, 7, epoch, 70, 300L)),
                await(storage.readCheckpoints(p)));
    }

    @Test
    void activateWhenTheSourcesAreClean() {
        String p = newPartition();
        long seq = commit(p, List.of(taskUpsert("a", "P1", "O1", 1)));
        await(storage.declareCheckpoint(p, CP, 1, 100L));
        long epoch = await(storage.claimCheckpoint(p, CP, 1, 200L)).ownerEpoch();
        assertTrue(await(storage.advanceCheckpoint(p, CP, epoch, seq, 1, 300L)));
        commit(p, List.of(ChangeToWrite.upsert("notes", "1", 1, Map.of("project_id", "P1"), new Object[] {1L, "P1", null
        })));
        assertEquals(
                ActivationResult.ACTIVATED,
                await(storage.activateCheckpoint(p, CP, epoch, seq, List.of("tasks"), 400L)),
                "a change to a non-source table does not make the backfill stale");
        StoredCheckpoint activated = cp(p, CP, 1, CheckpointState.ACTIVATED, seq, epoch, 1, 400L);
        assertEquals(List.of(activated), await(storage.readCheckpoints(p)));
    }

    @Test
    void activateIsStaleAfterASourceChangeAboveTheWatermark() {
        String p = newPartition();
        await(storage.declareCheckpoint(p, CP, 1, 100L));
        long epoch = await(storage.claimCheckpoint(p, CP, 1, 200L)).ownerEpoch();
        long seq = commit(p, List.of(taskUpsert("a", "P1", "O1", 1)));
        assertEquals(
                ActivationResult.STALE,
                await(storage.activateCheckpoint(p, CP, epoch, seq - 1, List.of("notes", "tasks"), 300L)));
        assertEquals(
                List.of(cp(p, CP, 1, CheckpointState.BACKFILLING, 0, epoch, 0, 200L)),
                await(storage.readCheckpoints(p)),
                "a stale activation changes nothing");
        assertEquals(
                ActivationResult.ACTIVATED,
                await(storage.activateCheckpoint(p, CP, epoch, seq, List.of("notes", "tasks"), 400L)),
                "after catching up to the observed coverage");
        assertEquals(
                List.of(cp(p, CP, 1, CheckpointState.ACTIVATED, seq, epoch, 0, 400L)),
                await(storage.readCheckpoints(p)));
    }

    @Test
    void activateIsUnverifiableOncePrunedPastTheWatermark() {
        String p = newPartition();
        for (int i = 0; i < 3; i++) {
            commit(p, List.of(taskUpsert("r" + i, "P1", "O1", 1)));
        }
        await(storage.declareCheckpoint(p, CP, 1, 100L));
        long epoch = await(storage.claimCheckpoint(p, CP, 1, 200L)).ownerEpoch();
        await(storage.prune(p, await(storage.readPartition(p)).logEpoch(), 3));
        assertEquals(
                ActivationResult.UNVERIFIABLE,
                await(storage.activateCheckpoint(p, CP, epoch, 2, List.of("tasks"), 300L)),
                "the history that would prove the sources clean is gone");
        assertEquals(
                List.of(cp(p, CP, 1, CheckpointState.BACKFILLING, 0, epoch, 0, 200L)),
                await(storage.readCheckpoints(p)));
        assertEquals(
                ActivationResult.ACTIVATED, await(storage.activateCheckpoint(p, CP, epoch, 3, List.of("tasks"), 400L)));
    }

    @Test
    void activateRefusesAnotherOwner() {
        String p = newPartition();
        assertEquals(
                StorageException.CHECKPOINT_NOT_FOUND,
                storageFailure(storage.activateCheckpoint(p, CP, 1, 0, List.of("tasks"), 100L))
                        .code());
        await(storage.declareCheckpoint(p, CP, 1, 100L));
        assertEquals(
                StorageException.CHECKPOINT_OWNER_CHANGED,
                storageFailure(storage.activateCheckpoint(p, CP, 0, 0, List.of("tasks"), 150L))
                        .code(),
                "never claimed");
        long first = await(storage.claimCheckpoint(p, CP, 1, 200L)).ownerEpoch();
        long second = await(storage.claimCheckpoint(p, CP, 1, 300L)).ownerEpoch();
        StorageException e = storageFailure(storage.activateCheckpoint(p, CP, first, 0, List.of("tasks"), 400L));
        assertEquals(StorageException.CHECKPOINT_OWNER_CHANGED, e.code());
        assertFalse(e.getMessage().contains(CP), "the message never names the checkpoint");
        assertEquals(
                List.of(cp(p, CP, 1, CheckpointState.BACKFILLING, 0, second, 0, 300L)),
                await(storage.readCheckpoints(p)));
        assertEquals(
                StorageException.UNKNOWN_PARTITION,
                storageFailure(storage.activateCheckpoint(
                                "p-missing-" + UUID.randomUUID(), CP, 1, 0, List.of("tasks"), 400L))
                        .code());
    }

    @Test
    void retriesAfterACrashBetweenStepsLeaveTheCheckpointConsistent() {
        String p = newPartition();
        long seq = commit(p, List.of(taskUpsert("a", "P1", "O1", 1)));
        await(storage.declareCheckpoint(p, CP, 1, 100L));
        await(storage.declareCheckpoint(p, CP, 1, 110L)); // the declaring process restarted
        await(storage.claimCheckpoint(p, CP, 1, 200L)); // worker 1 crashed after claiming
        long epoch = await(storage.claimCheckpoint(p, CP, 1, 210L)).ownerEpoch(); // worker 2 re-claims
        assertEquals(2L, epoch);
        assertFalse(await(storage.advanceCheckpoint(p, CP, 1, seq, 99, 220L)), "worker 1's late advance is refused");
        assertTrue(await(storage.advanceCheckpoint(p, CP, epoch, seq, 1, 230L)));
        assertTrue(await(storage.advanceCheckpoint(p, CP, epoch, seq, 1, 230L)), "worker 2 retried its advance");
        assertEquals(
                List.of(cp(p, CP, 1, CheckpointState.BACKFILLING, seq, epoch, 1, 230L)),
                await(storage.readCheckpoints(p)));

        assertEquals(
                ActivationResult.ACTIVATED,
                await(storage.activateCheckpoint(p, CP, epoch, seq, List.of("tasks"), 300L)));
        List<StoredCheckpoint> activated = List.of(cp(p, CP, 1, CheckpointState.ACTIVATED, seq, epoch, 1, 300L));
        assertEquals(activated, await(storage.readCheckpoints(p)));
        // the activation reply was lost: every retry and late step leaves the row exactly as it is
        assertEquals(
                ActivationResult.ACTIVATED,
                await(storage.activateCheckpoint(p, CP, epoch, seq, List.of("tasks"), 310L)));
        commit(p, List.of(taskUpsert("b", "P1", "O1", 1)));
        assertEquals(
                ActivationResult.ACTIVATED,
                await(storage.activateCheckpoint(p, CP, epoch, seq, List.of("tasks"), 320L)),
                "activation is final: later source writes belong to the activated projection");
        assertFalse(await(storage.advanceCheckpoint(p, CP, epoch, seq + 1, 2, 330L)));
        assertEquals(
                activated.get(0),
                await(storage.claimCheckpoint(p, CP, 1, 340L)),
                "an activated checkpoint is not re-claimed");
        assertEquals(activated.get(0), await(storage.declareCheckpoint(p, CP, 1, 350L)));
        await(storage.ensureSchema(schema, List.of(new CheckpointDeclaration(p, CP, 1))));
        assertEquals(
                StorageException.CHECKPOINT_OWNER_CHANGED,
                storageFailure(storage.activateCheckpoint(p, CP, epoch - 1, seq, List.of("tasks"), 360L))
                        .code());
        assertEquals(activated, await(storage.readCheckpoints(p)));
    }

    @Test
    void serveGateShowsPendingCheckpointsUntilActivation() {
        int running = schema.version();
        String p = newPartition();
        String epoch = await(storage.readPartition(p)).logEpoch();
        assertEquals(new ServeGate(running, epoch, List.of()), await(storage.readServeGate(p, running)));
        assertEquals(running, await(storage.readStoredSchemaVersion()));

        StoredCheckpoint declared = await(storage.declareCheckpoint(p, CP, running, 100L));
        await(storage.declareCheckpoint(p, "b-" + CP, running, 100L));
        ServeGate gate = await(storage.readServeGate(p, running));
        assertEquals(
                new ServeGate(
                        running,
                        epoch,
                        List.of(cp(p, "b-" + CP, running, CheckpointState.DECLARED, 0, 0, 0, 100L), declared)),
                gate);
        assertTrue(
                await(storage.readServeGate(p, running + 1)).pending().isEmpty(),
                "only checkpoints at the running version");
        assertTrue(
                await(storage.readServeGate(newPartition(), running)).pending().isEmpty(), "partition-local");
        assertTrue(await(storage.readPendingCheckpoints(running)).containsAll(gate.pending()));
        ServeGate locked = await(storage.inPartitionTransaction(p, tx -> tx.readServeGate(running)));
        assertEquals(gate, locked);
        assertFalse(gate.tokenChanged(locked));

        for (String name : List.of(CP, "b-" + CP)) {
            long owner = await(storage.claimCheckpoint(p, name, running, 200L)).ownerEpoch();
            assertEquals(
                    CheckpointState.BACKFILLING,
                    await(storage.readServeGate(p, running)).pending().stream()
                            .filter(c -> c.name().equals(name))
                            .findFirst()
                            .orElseThrow()
                            .state());
            assertEquals(
                    ActivationResult.ACTIVATED,
                    await(storage.activateCheckpoint(p, name, owner, 0, List.of("tasks"), 300L)));
        }
        assertEquals(new ServeGate(running, epoch, List.of()), await(storage.readServeGate(p, running)));
        assertEquals(
                new ServeGate(running, epoch, List.of()),
                await(storage.inPartitionTransaction(p, tx -> tx.readServeGate(running))));
        assertTrue(await(storage.readPendingCheckpoints(running)).stream()
                .noneMatch(c -> c.partition().equals(p)));

        PartitionState rotated = await(storage.rotateLogEpoch(p));
        assertTrue(
                gate.tokenChanged(await(storage.readServeGate(p, running))), "a rotated log epoch changes the token");
        assertEquals(
                rotated.logEpoch(), await(storage.readServeGate(p, running)).logEpoch());
        assertNull(await(storage.readServeGate("p-missing-" + UUID.randomUUID(), running))
                .logEpoch());
    }

    // ---- request entry and exit (§2.1, §2.4, §4.5, §4.6) --------------------------------------------

    @Test
    void enterRequestTouchesThePartitionAndReadsGateAndClientRecord() {
        int running = schema.version();
        String p = "p-" + UUID.randomUUID();
        RequestEntry fresh = await(storage.enterRequest(p, "c1", running, 1_000L));
        PartitionState created = fresh.partition();
        assertEquals(p, created.partition());
        assertEquals(0L, created.maxCommitSeq());
        assertEquals(0L, created.horizonSeq());
        assertEquals(1_000L, created.createdAtMs());
        assertEquals(1_000L, created.lastSeenAtMs());
        assertTrue(created.logEpoch().matches("[A-Za-z0-9_-]{22}"), created.logEpoch());
        assertEquals(created, await(storage.readPartition(p)), "an unknown partition is registered");
        assertEquals(new ServeGate(running, created.logEpoch(), List.of()), fresh.gate());
        assertNull(fresh.client());

        await(storage.upsertClient(new ClientRecord(p, "c1", "actor-1", 7, 900L, "[{\"id\":\"s1\"}]", 3, 1)));
        long seq = commit(p, List.of(taskUpsert("a", "P1", "O1", 1)));
        StoredCheckpoint declared = await(storage.declareCheckpoint(p, CP, running, 100L));
        RequestEntry entry = await(storage.enterRequest(p, "c1", running, 2_000L));
        assertEquals(new PartitionState(p, created.logEpoch(), seq, 0L, 1_000L, 2_000L), entry.partition());
        assertEquals(new ServeGate(running, created.logEpoch(), List.of(declared)), entry.gate());
        assertEquals(await(storage.readServeGate(p, running)), entry.gate());
        ClientRecord client = entry.client();
        assertEquals(p, client.partition());
        assertEquals("c1", client.clientId());
        assertEquals("actor-1", client.actorId());
        assertEquals(7L, client.cursor());
        assertEquals(900L, client.updatedAtMs());
        assertEquals(3, client.wireVersion());
        assertEquals(1, client.schemaVersion());
        assertTrue(client.subscriptionsJson().contains("\"s1\""));
        assertEquals(await(storage.readClient(p, "c1")), client);
        assertNull(await(storage.enterRequest(p, "c2", running, 2_000L)).client(), "another client id");
        assertTrue(
                await(storage.enterRequest(p, "c1", running + 1, 2_000L))
                        .gate()
                        .pending()
                        .isEmpty(),
                "only checkpoints at the running version");

        assertEquals(
                2_000L,
                await(storage.enterRequest(p, "c1", running, 1_500L))
                        .partition()
                        .lastSeenAtMs(),
                "last-seen never goes back");
        assertEquals(
                3_000L,
                await(storage.enterRequest(p, "c1", running, 3_000L))
                        .partition()
                        .lastSeenAtMs());
        assertEquals(3_000L, await(storage.touchPartition(p, 2_500L)).lastSeenAtMs(), "one touch, either way");
        assertEquals(3_000L, await(storage.readPartition(p)).lastSeenAtMs());

        PartitionState rotated = await(storage.rotateLogEpoch(p));
        RequestEntry afterRotation = await(storage.enterRequest(p, "c1", running, 4_000L));
        assertEquals(rotated.logEpoch(), afterRotation.partition().logEpoch());
        assertEquals(rotated.logEpoch(), afterRotation.gate().logEpoch());
        assertTrue(entry.gate().tokenChanged(afterRotation.gate()));
        assertNull(afterRotation.client(), "rotation deletes cursor records");
    }

    @Test
    void gateCheckCarriesTheHorizon() {
        int running = schema.version();
        String p = newPartition();
        String epoch = await(storage.readPartition(p)).logEpoch();
        assertEquals(
                new GateCheck(new ServeGate(running, epoch, List.of()), 0L), await(storage.readGateCheck(p, running)));
        for (int i = 1; i <= 4; i++) {
            commit(p, List.of(taskUpsert("h" + i, "P1", "O1", i)));
        }
        await(storage.prune(p, epoch, 3));
        GateCheck check = await(storage.readGateCheck(p, running));
        assertEquals(3L, check.horizonSeq());
        assertEquals(await(storage.readServeGate(p, running)), check.gate());
        StoredCheckpoint declared = await(storage.declareCheckpoint(p, CP, running, 100L));
        assertEquals(
                List.of(declared),
                await(storage.readGateCheck(p, running)).gate().pending());
        GateCheck missing = await(storage.readGateCheck("p-missing-" + UUID.randomUUID(), running));
        assertNull(missing.gate().logEpoch());
        assertEquals(0L, missing.horizonSeq());
    }

    @Test
    void finishRequestSavesTheClientRecordThenReadsTheGate() {
        int running = schema.version();
        String p = newPartition();
        String epoch = await(storage.readPartition(p)).logEpoch();
        GateCheck noSave = await(storage.finishRequest(p, running, null));
        assertEquals(new GateCheck(new ServeGate(running, epoch, List.of()), 0L), noSave);
        assertNull(await(storage.readClient(p, "c1")), "nothing saved");

        ClientRecord record =
                new ClientRecord(p, "c1", "actor-1", 5, 1_000L, "[{\"id\":\"s1\",\"table\":\"tasks\"}]", 3, 1);
        assertEquals(noSave, await(storage.finishRequest(p, running, record)));
        ClientRecord saved = await(storage.readClient(p, "c1"));
        assertEquals(5L, saved.cursor());
        assertEquals(1_000L, saved.updatedAtMs());
        assertEquals(3, saved.wireVersion());
        assertTrue(saved.subscriptionsJson().contains("\"s1\""));
        assertEquals(
                saved, await(storage.enterRequest(p, "c1", running, 2_000L)).client());

        await(storage.finishRequest(p, running, new ClientRecord(p, "c1", "actor-1", 9, 2_000L, null, null, null)));
        ClientRecord replaced = await(storage.readClient(p, "c1"));
        assertEquals(9L, replaced.cursor());
        assertEquals(2_000L, replaced.updatedAtMs());
        assertNull(replaced.subscriptionsJson());
        assertNull(replaced.wireVersion());

        PartitionState rotated = await(storage.rotateLogEpoch(p));
        assertEquals(
                rotated.logEpoch(),
                await(storage.finishRequest(p, running, null)).gate().logEpoch(),
                "the gate is read, not remembered");
    }

    @Test
    void ensureSchemaInstallsDeclaredCheckpointsIdempotently() {
        String p = newPartition();
        String q = newPartition();
        List<CheckpointDeclaration> declarations = List.of(
                new CheckpointDeclaration(p, CP, schema.version()), new CheckpointDeclaration(q, CP, schema.version()));
        await(storage.ensureSchema(schema, declarations));
        assertEquals(1, await(storage.readCheckpoints(p)).size());
        StoredCheckpoint claimed = await(storage.claimCheckpoint(p, CP, schema.version(), 200L));
        await(storage.ensureSchema(schema, declarations)); // a restart keeps the claimed state
        assertEquals(List.of(claimed), await(storage.readCheckpoints(p)));
        assertEquals(
                CheckpointState.DECLARED,
                await(storage.readCheckpoints(q)).get(0).state());
        assertEquals(
                Set.of(p, q),
                await(storage.readPendingCheckpoints(schema.version())).stream()
                        .map(StoredCheckpoint::partition)
                        .filter(x -> x.equals(p) || x.equals(q))
                        .collect(Collectors.toSet()));
        assertEquals(1L, commit(p, List.of(taskUpsert("a", "P1", "O1", 1))), "this build still appends");
    }

    // ---- blob reference index (§5.9.4) -----------------------------------------------------------------

    protected static String blobId(String seed) {
        return "sha256:" + CanonicalJson.sha256Hex(seed.getBytes(StandardCharsets.UTF_8));
    }

    protected static String blobRef(String seed) {
        return "{\"blobId\":\"" + blobId(seed) + "\",\"byteLength\":3,\"mediaType\":\"image/png\"}";
    }

    /** Writes a files row (upsert) in its own push transaction, with a commit so the partition log stays dense. */
    protected void writeFile(String p, String id, String project, String main, String thumb) {
        Object[] row = {id, project, main == null ? null : blobRef(main), thumb == null ? null : blobRef(thumb)};
        await(storage.inPartitionTransaction(
                p,
                tx -> tx.appendCommit(
                                "a",
                                "c",
                                UUID.randomUUID().toString(),
                                1L,
                                List.of(ChangeToWrite.upsert("files", id, 1, Map.of("project_id", project), row)),
                                StoredCommit.UNTRACED)
                        .call(seq -> tx.upsertRow(
                                "files", new StoredRow(id, 1, row, new long[4], Map.of("project_id", project))))));
    }

    protected List<String> referencing(String p, String seed) {
        return await(storage.readBlobReferences(p, blobId(seed), null, 100)).stream()
                .map(r -> r.table() + "/" + r.rowId())
                .toList();
    }

    @Test
    void blobReferenceIndexFollowsUpsertsAndDeletes() {
        String p = newPartition();
        writeFile(p, "f1", "P1", "a", "b");
        writeFile(p, "f2", "P2", "a", null);
        writeFile(p, "f3", "P1", "c", "c");
        assertEquals(List.of("files/f1", "files/f2"), referencing(p, "a"));
        assertEquals(
                List.of(
                        new BlobReference("files", "f1", Map.of("project_id", "P1")),
                        new BlobReference("files", "f2", Map.of("project_id", "P2"))),
                await(storage.readBlobReferences(p, blobId("a"), null, 10)),
                "stored scopes ride along");
        assertEquals(List.of("files/f3"), referencing(p, "c"), "one entry for a blob in two columns");
        assertEquals(
                Set.of(blobId("a"), blobId("b"), blobId("c")),
                await(storage.readReferencedBlobIds(
                        p, List.of(blobId("a"), blobId("b"), blobId("c"), blobId("never")))));

        // an update moves f1 from a to d and drops its thumb: the old entries go, in the same transaction
        writeFile(p, "f1", "P1", "d", null);
        assertEquals(List.of("files/f2"), referencing(p, "a"));
        assertEquals(List.of(), referencing(p, "b"));
        assertEquals(List.of("files/f1"), referencing(p, "d"));

        long seq = await(storage.readPartition(p)).maxCommitSeq() + 1;
        await(storage.inPartitionTransaction(
                p,
                tx -> tx.appendCommit(
                                "a",
                                "c",
                                "del",
                                1L,
                                List.of(ChangeToWrite.delete("files", "f2", Map.of("project_id", "P2"))),
                                StoredCommit.UNTRACED)
                        .call(s -> tx.deleteRow("files", "f2", seq))));
        assertEquals(List.of(), referencing(p, "a"));
        assertEquals(
                Set.of(blobId("c"), blobId("d")),
                await(storage.readReferencedBlobIds(p, List.of(blobId("a"), blobId("b"), blobId("c"), blobId("d")))));

        // partition-scoped
        String q = newPartition();
        assertEquals(List.of(), referencing(q, "d"));
        assertEquals(Set.of(), await(storage.readReferencedBlobIds(q, List.of(blobId("d")))));
    }

    @Test
    void blobReferencesPageInTableAndRowOrder() {
        String p = newPartition();
        for (int i = 0; i < 7; i++) {
            writeFile(p, "r" + i, "P1", "shared", null);
        }
        List<String> seen = new ArrayList<>();
        BlobReference after = null;
        while (true) {
            List<BlobReference> page = await(storage.readBlobReferences(p, blobId("shared"), after, 3));
            page.forEach(r -> seen.add(r.rowId()));
            if (page.size() < 3) {
                break;
            }
            after = page.get(page.size() - 1);
        }
        assertEquals(List.of("r0", "r1", "r2", "r3", "r4", "r5", "r6"), seen);
    }

    @Test
    void aRolledBackPushLeavesTheBlobIndexUnchanged() {
        String p = newPartition();
        writeFile(p, "f1", "P1", "a", null);
        Object[] row = {"f1", "P1", blobRef("z"), null};
        storageFailure(storage.inPartitionTransaction(
                p,
                tx -> tx.upsertRow("files", new StoredRow("f1", 2, row, new long[4], Map.of("project_id", "P1")))
                        .chain(() -> Uni.createFrom()
                                .failure(new StorageException(StorageException.INVALID_ARGUMENT, "boom", Map.of())))));
        assertEquals(List.of("files/f1"), referencing(p, "a"));
        assertEquals(List.of(), referencing(p, "z"));
    }

    @Test
    void blobSweepMarksAreRecordedUnderTheLock() {
        String p = newPartition();
        writeFile(p, "f1", "P1", "kept", null);
        assertEquals(0L, await(storage.readBlobSweepMark(p)));
        List<String> candidates = List.of(blobId("kept"), blobId("orphan-1"), blobId("orphan-2"));
        long[] recorded = {0};
        Set<String> referenced = await(storage.inPartitionTransaction(
                p,
                tx -> tx.referencedBlobIds(candidates)
                        .call(r -> tx.recordBlobSweep(List.of(blobId("orphan-1"), blobId("orphan-2")), 10_000L)
                                .invoke(m -> recorded[0] = m))));
        assertEquals(Set.of(blobId("kept")), referenced);
        long mark = await(storage.readBlobSweepMark(p));
        assertTrue(mark > 0);
        assertEquals(mark, recorded[0], "the transaction yields the mark it recorded");
        assertEquals(
                Set.of(blobId("orphan-1")),
                await(storage.inPartitionTransaction(
                        p, tx -> tx.blobsSweptSince(List.of(blobId("orphan-1"), blobId("kept")), 0L))));
        assertEquals(
                Set.of(blobId("orphan-1")),
                await(storage.inPartitionTransaction(p, tx -> tx.blobsSweptSince(List.of(blobId("orphan-1")), mark))),
                "§5.9.6: a mark whose deletion is pending counts even for a lookup after it");
        await(storage.settleBlobSweep(p, mark, List.of(blobId("orphan-1"))));
        assertEquals(
                Set.of(),
                await(storage.inPartitionTransaction(p, tx -> tx.blobsSweptSince(List.of(blobId("orphan-1")), mark))),
                "settled, nothing swept after the mark");
        assertEquals(
                Set.of(blobId("orphan-2")),
                await(storage.inPartitionTransaction(p, tx -> tx.blobsSweptSince(List.of(blobId("orphan-2")), mark))),
                "still pending: its delete did not happen");
        assertEquals(0L, await(storage.readBlobSweepMark(newPartition())), "marks are per partition");

        // a later sweep gets a higher mark; settling under an older mark leaves the newer one pending
        await(storage.inPartitionTransaction(
                p, tx -> tx.recordBlobSweep(List.of(blobId("orphan-2"), blobId("orphan-3")), 20_000L)));
        long later = await(storage.readBlobSweepMark(p));
        assertTrue(later > mark);
        await(storage.settleBlobSweep(p, mark, List.of(blobId("orphan-2"))));
        assertEquals(
                Set.of(blobId("orphan-2"), blobId("orphan-3")),
                await(storage.inPartitionTransaction(
                        p,
                        tx -> tx.blobsSweptSince(
                                List.of(blobId("orphan-1"), blobId("orphan-2"), blobId("orphan-3")), mark))));
        // marks older than the retention are forgotten, pending or not
        assertTrue(await(storage.forgetBlobSweeps(15_000L)) >= 1);
        assertEquals(
                Set.of(blobId("orphan-2"), blobId("orphan-3")),
                await(storage.inPartitionTransaction(
                        p,
                        tx -> tx.blobsSweptSince(
                                List.of(blobId("orphan-1"), blobId("orphan-2"), blobId("orphan-3")), 0L))));
    }

    protected static void assertRowEquals(Object[] expected, Object[] actual) {
        assertEquals(expected.length, actual.length);
        for (int i = 0; i < expected.length; i++) {
            if (expected[i] instanceof byte[] b) {
                assertArrayEquals(b, (byte[]) actual[i], "column " + i);
            } else {
                assertEquals(expected[i], actual[i], "column " + i);
            }
        }
    }
}
