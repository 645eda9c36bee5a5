package dev.syncular.server.scenarios;

import static dev.syncular.server.scenarios.ScenarioServer.assertRejected;
import static dev.syncular.server.scenarios.ScenarioServer.note;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.testsupport.Concurrently;
import dev.syncular.server.testsupport.ScenarioAppProfile;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Op;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.RowCodec;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Appendix B scenario 21, column-granular writes (§2.2 column versions, §2.4 sparse rows, §6.1–§6.3), server side
 * over real HTTP. Notes columns: 0 id, 1 project_id (the scope column), 2 title, 3 body, 4 priority, 5 done. Case (d),
 * a crdt column, needs a schema with one and runs on the conformance host: {@code
 * AppendixB14CrdtFieldsTest#B21d_crdtOnlyPatchWithAStaleBaseAppliesBesideAConcurrentNonCrdtPatch}.
 */
@QuarkusTest
@TestProfile(ScenarioAppProfile.class)
class AppendixB21ColumnGranularWritesTest {
    private final ScenarioServer server = new ScenarioServer();

    private static Map<String, Object> cols(String id, Object... pairs) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        for (int i = 0; i < pairs.length; i += 2) {
            m.put((String) pairs[i], pairs[i + 1]);
        }
        return m;
    }

    /** Two clients of p1 holding row {@code id} at its first version. */
    private List<SyncTestClient> twoHolding(String id, String suffix) {
        server.allow("p1", "alice", "bob");
        SyncTestClient a = server.synced("alice", "a-" + suffix, "p1");
        SyncTestClient b = server.synced("bob", "b-" + suffix, "p1");
        a.upsert("notes", note(id, "p1", "title 0"), null);
        a.syncUntilIdle();
        b.syncUntilIdle();
        return List.of(a, b);
    }

    /** (a) Unversioned patches to different columns, pushed at once, both land (last write wins per column). */
    @Test
    void B21a_disjointUnversionedPatchesBothLand() throws Exception {
        List<SyncTestClient> ab = twoHolding("doc", "21a");
        for (int i = 1; i <= 5; i++) {
            String title = ab.get(0).upsert("notes", cols("doc", "title", "title " + i), null);
            String body = ab.get(1).upsert("notes", cols("doc", "body", "body " + i), null);
            Concurrently.run(2, k -> ab.get(k).sync());
            assertEquals(CommitStatus.APPLIED, ab.get(0).result(title).status());
            assertEquals(CommitStatus.APPLIED, ab.get(1).result(body).status());
            StoredRow row = server.rows("notes").get("doc");
            assertEquals("title " + i, row.values()[2]);
            assertEquals("body " + i, row.values()[3]);
            assertEquals(1 + 2L * i, row.serverVersion());
        }
        ab.forEach(SyncTestClient::syncUntilIdle);
        ab.forEach(c -> server.assertConverged(c, "p1"));
    }

    /**
     * (b) Patches carrying the same {@code baseVersion} to different columns both land, in either order: a column a
     * patch does not present keeps its {@code column_version} (§2.2), so the second patch sees no conflict.
     */
    @Test
    void B21b_disjointPatchesFromOneBaseBothLandAndUntouchedColumnsKeepTheirVersion() throws Exception {
        List<SyncTestClient> ab = twoHolding("doc", "21b");
        for (int i = 1; i <= 5; i++) {
            long base = server.rows("notes").get("doc").serverVersion();
            String title = ab.get(0).upsert("notes", cols("doc", "title", "title " + i), base);
            String body = ab.get(1).upsert("notes", cols("doc", "body", "body " + i), base);
            Concurrently.run(2, k -> ab.get(k).sync());
            PushResult t = ab.get(0).result(title);
            PushResult b = ab.get(1).result(body);
            assertEquals(CommitStatus.APPLIED, t.status(), String.valueOf(t));
            assertEquals(CommitStatus.APPLIED, b.status(), String.valueOf(b));
            StoredRow row = server.rows("notes").get("doc");
            assertEquals(base + 2, row.serverVersion());
            long[] v = row.columnVersions();
            assertEquals(t.commitSeq() < b.commitSeq() ? base + 1 : base + 2, v[2], "title at its own write");
            assertEquals(t.commitSeq() < b.commitSeq() ? base + 2 : base + 1, v[3], "body at its own write");
            assertEquals(1, v[4], "priority never presented");
            assertEquals(1, v[5], "done never presented");
        }
        ab.forEach(SyncTestClient::syncUntilIdle);
        ab.forEach(c -> server.assertConverged(c, "p1"));
    }

    /**
     * (c) Two patches of the same column from one base race: one applies, the other is a {@code rejected} commit
     * with a {@code sync.version_conflict} whose {@code conflictColumns} marks exactly that column — not the other
     * present column the winner did not move (§6.2 step 5, §6.3).
     */
    @Test
    void B21c_sameColumnFromOneBaseConflictsOnExactlyThatColumn() throws Exception {
        List<SyncTestClient> ab = twoHolding("doc", "21c");
        for (int i = 1; i <= 5; i++) {
            long base = server.rows("notes").get("doc").serverVersion();
            String first = ab.get(0).upsert("notes", cols("doc", "title", "alice " + i), base);
            String second = ab.get(1).upsert("notes", cols("doc", "title", "bob " + i, "done", true), base);
            Concurrently.run(2, k -> ab.get(k).sync());
            List<PushResult> results =
                    List.of(ab.get(0).result(first), ab.get(1).result(second));
            assertEquals(
                    1,
                    results.stream()
                            .filter(r -> r.status() == CommitStatus.APPLIED)
                            .count());
            PushResult loser = results.stream()
                    .filter(r -> r.status() == CommitStatus.REJECTED)
                    .findFirst()
                    .orElseThrow();
            assertNull(loser.commitSeq());
            OpResult.Conflict c =
                    assertInstanceOf(OpResult.Conflict.class, loser.results().get(0));
            assertEquals("sync.version_conflict", c.code());
            assertArrayEquals(new byte[] {0b0000_0100}, c.conflictColumns(), "title only");
            StoredRow row = server.rows("notes").get("doc");
            assertEquals(base + 1, row.serverVersion());
            assertEquals(row.serverVersion(), c.serverVersion());
            assertArrayEquals(
                    row.values(),
                    new RowCodec(ScenarioServer.SCHEMA.table("notes").rowLayout()).decode(c.serverRow()));
        }
    }

    /** (e) A partial payload on a row that never existed (no tombstone) is {@code sync.row_missing} (§6.2). */
    @Test
    void B21e_partialPayloadOnAnAbsentRowWithoutATombstoneIsRowMissing() {
        server.allow("p1", "alice");
        SyncTestClient a = server.synced("alice", "a-21e", "p1");
        String sparse = a.upsert("notes", cols("never", "title", "an update of nothing"), null);
        String withScope = a.upsert("notes", cols("never-2", "project_id", "p1", "title", "still partial"), null);
        a.sync();
        assertRejected(a.result(sparse), 0, "sync.row_missing", false);
        assertRejected(a.result(withScope), 0, "sync.row_missing", false);
        assertTrue(server.rows("notes").isEmpty());
        // every column present is an insert
        String full = a.upsert("notes", note("never", "p1", "inserted"), null);
        a.sync();
        assertTrue(SyncTestClient.applied(a.result(full)));
    }

    /**
     * (f) A present scope column with a changed value is {@code sync.invalid_request} (§3.4 rule 5) and rolls the
     * commit back whole; present and equal applies as a no-op on it.
     */
    @Test
    void B21f_changedScopeColumnIsInvalidRequest() {
        server.allow("alice", Map.of("project_id", List.of("p1", "p2")));
        SyncTestClient a = server.synced("alice", "a-21f", "p1", "p2");
        a.upsert("notes", note("homed", "p1", "v1"), null);
        a.syncUntilIdle();
        long before = server.maxCommitSeq();
        String moved = a.commit(List.of(
                a.upsertOp("notes", note("sibling", "p1", "rolled back"), null),
                a.upsertOp("notes", cols("homed", "project_id", "p2", "title", "re-homed"), null)));
        a.sync();
        assertRejected(a.result(moved), 1, "sync.invalid_request", false);
        assertEquals(before, server.maxCommitSeq());
        assertFalse(server.rows("notes").containsKey("sibling"));
        assertEquals("p1", server.rows("notes").get("homed").values()[1]);
        String same = a.upsert("notes", cols("homed", "project_id", "p1", "title", "same scope"), 1L);
        a.syncUntilIdle();
        assertTrue(SyncTestClient.applied(a.result(same)));
        StoredRow row = server.rows("notes").get("homed");
        assertEquals("same scope", row.values()[2]);
        assertEquals("p1", row.values()[1]);
        server.assertConverged(a, "p1");
    }

    /**
     * (g) The optimistic overlay is the client's (§7.1). The server behaviour it relies on: a pending sparse patch
     * writes only its present columns, so a concurrent server change to an untouched column survives it, and the
     * patch's {@code COMMIT} carries the full row with both.
     */
    @Test
    void B21g_aConcurrentChangeToAnUntouchedColumnSurvivesASparsePatch() {
        List<SyncTestClient> ab = twoHolding("doc", "21g");
        SyncTestClient a = ab.get(0);
        SyncTestClient b = ab.get(1);
        long base = a.table("notes").get("doc").version();
        String pending = a.upsert("notes", cols("doc", "title", "alice's title"), base);
        b.upsert("notes", cols("doc", "body", "bob's body"), null);
        b.syncUntilIdle();
        a.sync();
        assertTrue(SyncTestClient.applied(a.result(pending)));
        StoredRow row = server.rows("notes").get("doc");
        assertEquals("alice's title", row.values()[2]);
        assertEquals("bob's body", row.values()[3]);
        CommitFrame own = a.lastResponse.frames().stream()
                .filter(f -> f instanceof CommitFrame c
                        && c.commitSeq() == a.result(pending).commitSeq())
                .map(f -> (CommitFrame) f)
                .findFirst()
                .orElseThrow();
        Object[] delivered = new RowCodec(ScenarioServer.SCHEMA.table("notes").rowLayout())
                .decode(own.changes().get(0).row());
        assertArrayEquals(row.values(), delivered, "a full row, never the sparse payload (§6.2)");
        a.syncUntilIdle();
        b.syncUntilIdle();
        server.assertConverged(a, "p1");
        server.assertConverged(b, "p1");
    }

    /**
     * (h) Byte-identical sparse payloads are a client property, pinned by the codec's golden vectors ({@code
     * wire.GoldenVectorsTest}, {@code push/}). The server side: the reference encoding of a patch — here written out
     * by hand from §2.4 — is what this project's client emits, and the server applies exactly its present columns: a
     * present NULL clears its column, an absent column stays.
     */
    @Test
    void B21h_theReferenceSparseEncodingAppliesExactlyItsPresentColumns() {
        server.allow("p1", "alice");
        SyncTestClient a = server.synced("alice", "a-21h", "p1");
        Map<String, Object> full = note("doc", "p1", "a title");
        full.put("body", "a body");
        full.put("done", true);
        a.upsert("notes", full, null);
        a.syncUntilIdle();
        // {id: "doc", title: NULL, priority: 7}: presence 0b0001_0101, null bitmap over the three present 0b010,
        // then the non-null present values: str id, i64 priority
        ByteArrayOutputStream ref = new ByteArrayOutputStream();
        ref.write(0b0001_0101);
        ref.write(0b0000_0010);
        byte[] id = "doc".getBytes(StandardCharsets.UTF_8);
        ref.writeBytes(ByteBuffer.allocate(4)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putInt(id.length)
                .array());
        ref.writeBytes(id);
        ref.writeBytes(
                ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(7).array());
        Map<String, Object> patch = cols("doc", "title", null, "priority", 7L);
        assertArrayEquals(ref.toByteArray(), a.upsertOp("notes", patch, 1L).payload(), "this client's encoding");
        String pushed = a.commit(List.of(new PushOperation("notes", "doc", Op.UPSERT, 1L, ref.toByteArray())));
        a.syncUntilIdle();
        assertTrue(SyncTestClient.applied(a.result(pushed)));
        StoredRow row = server.rows("notes").get("doc");
        assertEquals(2, row.serverVersion());
        assertArrayEquals(new Object[] {"doc", "p1", null, "a body", 7L, true}, row.values());
        assertArrayEquals(new long[] {1, 1, 2, 1, 2, 1}, row.columnVersions());
        server.assertConverged(a, "p1");
    }
}
