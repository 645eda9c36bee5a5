package dev.syncular.server.scenarios;

import static dev.syncular.server.scenarios.ScenarioServer.assertRejected;
import static dev.syncular.server.scenarios.ScenarioServer.note;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.testsupport.Concurrently;
import dev.syncular.server.testsupport.HeldTransaction;
import dev.syncular.server.testsupport.ScenarioAppProfile;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.PushResult;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Appendix B scenario 20, delete precedence (§6.2, §2.2 tombstones, §4.6 their pruning), server side over real
 * HTTP, and §6.2's whole absent-row table at every position of the pruning horizon.
 */
@QuarkusTest
@TestProfile(ScenarioAppProfile.class)
class AppendixB20DeletePrecedenceTest {
    private final ScenarioServer server = new ScenarioServer();

    private static Map<String, Object> patch(String id, String title) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("title", title);
        return m;
    }

    /**
     * (a) A deletes a row B still holds; B's stale unversioned patch is rejected {@code sync.row_deleted}
     * (non-retryable, the commit rolled back whole with its sibling) and the row stays absent on the server and on
     * both clients.
     */
    @Test
    void B20a_staleUnversionedPatchAfterDeleteIsRowDeleted() {
        server.allow("p1", "alice", "bob");
        SyncTestClient a = server.synced("alice", "a-20a", "p1");
        SyncTestClient b = server.synced("bob", "b-20a", "p1");
        a.upsert("notes", note("doomed", "p1", "v1"), null);
        a.syncUntilIdle();
        b.syncUntilIdle();
        assertTrue(b.table("notes").containsKey("doomed"));
        String deleted = a.delete("notes", "doomed");
        a.syncUntilIdle();
        assertTrue(SyncTestClient.applied(a.result(deleted)));
        // B has not pulled the delete: its patch and a sibling insert in one commit
        String stale = b.commit(List.of(
                b.upsertOp("notes", note("sibling", "p1", "rolled back"), null),
                b.upsertOp("notes", patch("doomed", "stale edit"), null)));
        // a full unversioned row (the scope column present) loses to the delete as well
        String full = b.upsert("notes", note("doomed", "p1", "stale full row"), null);
        b.sync();
        assertRejected(b.result(stale), 1, "sync.row_deleted", false);
        assertRejected(b.result(full), 0, "sync.row_deleted", false);
        assertFalse(server.rows("notes").containsKey("doomed"));
        assertFalse(server.rows("notes").containsKey("sibling"), "§6.4: the sibling rolled back");
        b.syncUntilIdle();
        a.syncUntilIdle();
        assertFalse(b.table("notes").containsKey("doomed"), "the delete reached B");
        assertFalse(a.table("notes").containsKey("doomed"));
        server.assertConverged(a, "p1");
        server.assertConverged(b, "p1");
        // the rejection replays as itself (§2.3)
        b.outbox.add(new PushCommit(full, List.of(b.upsertOp("notes", note("doomed", "p1", "again"), null))));
        b.sync();
        assertRejected(b.result(full), 0, "sync.row_deleted", false);
        assertFalse(server.rows("notes").containsKey("doomed"));
    }

    /**
     * (a), the interleaving: A's delete and B's unversioned patch race, ten times. Whichever the partition
     * serializes first, the row ends absent: the patch either applied before the delete (a lower commitSeq) or is
     * rejected {@code sync.row_deleted}.
     */
    @Test
    void B20a_deleteRacingAnUnversionedPatchAlwaysWins() throws Exception {
        server.allow("p1", "alice", "bob");
        SyncTestClient a = server.synced("alice", "a-20r", "p1");
        SyncTestClient b = server.synced("bob", "b-20r", "p1");
        int patchesFirst = 0;
        for (int i = 0; i < 10; i++) {
            String id = "race-" + i;
            a.upsert("notes", note(id, "p1", "v1"), null);
            a.syncUntilIdle();
            b.syncUntilIdle();
            String del = a.delete("notes", id);
            String edit = b.upsert("notes", patch(id, "racing edit"), null);
            List<SyncTestClient> both = List.of(a, b);
            Concurrently.run(2, k -> both.get(k).sync());
            PushResult deleted = a.result(del);
            PushResult edited = b.result(edit);
            assertEquals(CommitStatus.APPLIED, deleted.status());
            if (edited.status() == CommitStatus.APPLIED) {
                assertTrue(edited.commitSeq() < deleted.commitSeq(), "an applied patch came first");
                patchesFirst++;
            } else {
                assertRejected(edited, 0, "sync.row_deleted", false);
            }
            assertFalse(server.rows("notes").containsKey(id), id);
        }
        a.syncUntilIdle();
        b.syncUntilIdle();
        server.assertConverged(a, "p1");
        server.assertConverged(b, "p1");
        assertTrue(patchesFirst <= 10);
    }

    /**
     * (b) An explicit insert ({@code baseVersion = 0}) over a fresh tombstone recreates the row at
     * {@code server_version = 1}; the recreated row clears its tombstone, so a later unversioned patch applies, and
     * both clients converge on it.
     */
    @Test
    void B20b_explicitInsertOverAFreshTombstoneRecreatesAtVersion1() {
        server.allow("p1", "alice", "bob");
        SyncTestClient a = server.synced("alice", "a-20b", "p1");
        SyncTestClient b = server.synced("bob", "b-20b", "p1");
        a.upsert("notes", note("phoenix", "p1", "v1"), null);
        a.syncUntilIdle();
        a.upsert("notes", patch("phoenix", "v2"), null);
        a.delete("notes", "phoenix");
        a.syncUntilIdle();
        b.syncUntilIdle();
        String recreated = b.upsert("notes", note("phoenix", "p1", "reborn"), 0L);
        b.sync();
        assertTrue(SyncTestClient.applied(b.result(recreated)));
        StoredRow row = server.rows("notes").get("phoenix");
        assertEquals(1, row.serverVersion());
        assertEquals("reborn", row.values()[2]);
        for (long v : row.columnVersions()) {
            assertEquals(1, v);
        }
        String after = a.upsert("notes", patch("phoenix", "unversioned after the recreate"), null);
        a.syncUntilIdle();
        assertTrue(SyncTestClient.applied(a.result(after)), "the tombstone is gone");
        assertEquals(2, server.rows("notes").get("phoenix").serverVersion());
        b.syncUntilIdle();
        server.assertConverged(a, "p1");
        server.assertConverged(b, "p1");
    }

    /**
     * (c) Once pruning advances the horizon past the delete (§4.6), the tombstone is gone and the ordinary insert
     * rule is back: an unversioned full row inserts at version 1, an unversioned partial payload is
     * {@code sync.row_missing}.
     */
    @Test
    void B20c_afterPruningPastTheDeleteAnUnversionedFullRowInsertsAgain() {
        server.allow("p1", "alice", "bob");
        SyncTestClient a = server.synced("alice", "a-20c", "p1");
        a.upsert("notes", note("gone", "p1", "v1"), null);
        a.upsert("notes", note("gone-too", "p1", "v1"), null);
        a.syncUntilIdle();
        String del = a.commit(
                List.of(SyncTestClient.deleteOp("notes", "gone"), SyncTestClient.deleteOp("notes", "gone-too")));
        a.syncUntilIdle();
        long deleteSeq = a.result(del).commitSeq();
        // before the prune the delete wins
        String early = a.upsert("notes", note("gone", "p1", "too early"), null);
        a.sync();
        assertRejected(a.result(early), 0, "sync.row_deleted", false);
        server.prune(deleteSeq);
        assertEquals(deleteSeq, server.horizonSeq());
        String again = a.upsert("notes", note("gone", "p1", "inserted again"), null);
        String partial = a.upsert("notes", patch("gone-too", "a patch names an update"), null);
        a.sync();
        assertTrue(SyncTestClient.applied(a.result(again)));
        assertEquals(1, server.rows("notes").get("gone").serverVersion());
        assertRejected(a.result(partial), 0, "sync.row_missing", false);
        assertFalse(server.rows("notes").containsKey("gone-too"));
        SyncTestClient b = server.synced("bob", "b-20c", "p1");
        a.syncUntilIdle();
        server.assertConverged(a, "p1");
        server.assertConverged(b, "p1");
    }

    // ------------------------------------------------------------------------ §6.2 absent-row table × §4.6 horizon

    /** Where the row's tombstone stands against the partition's pruning horizon when the upserts arrive. */
    enum Horizon {
        /** The row never existed: no tombstone. */
        NO_TOMBSTONE,
        /** Deleted at {@code s}, horizon {@code s - 1}: the tombstone is within the horizon. */
        ABOVE,
        /** Horizon {@code s}: pruned with its commit. */
        AT,
        /** Horizon past {@code s}: pruned. */
        BELOW,
        /**
         * Horizon {@code s}, its deletion not done yet (the pruning's deletion transaction held up): still stored,
         * but beyond the horizon, so already gone as far as §6.2 is concerned (§4.6).
         */
        AT_DELETION_PENDING
    }

    /**
     * One upsert of the table against an absent row: the actor (alice holds p1, mallory only p2), its
     * {@code baseVersion}, whether the payload has every column (else {@code {id, title}}: no scope column), and the
     * outcome with a tombstone within the horizon and without one ({@code null}: applied at version 1).
     */
    record Case(String id, String actor, Long base, boolean full, String withinHorizon, String otherwise) {}

    static final List<Case> TABLE = List.of(
            // baseVersion 0: explicit intent inserts over any tombstone; an insert needs every column
            new Case("v0-full", "alice", 0L, true, null, null),
            new Case("v0-partial", "alice", 0L, false, "sync.row_missing", "sync.row_missing"),
            // baseVersion > 0: row_missing after payload authorization (a payload without the scope column fails it)
            new Case("vN-full", "alice", 3L, true, "sync.row_missing", "sync.row_missing"),
            new Case("vN-partial", "alice", 3L, false, "sync.forbidden", "sync.forbidden"),
            // absent baseVersion: a tombstone within the horizon wins, else the insert rule
            new Case("lww-full", "alice", null, true, "sync.row_deleted", null),
            new Case("lww-partial", "alice", null, false, "sync.row_deleted", "sync.row_missing"),
            // §3.4: an insert (every column) is authorized first, so an actor without the scope learns nothing more
            new Case("other-v0-full", "mallory", 0L, true, "sync.forbidden", "sync.forbidden"),
            new Case("other-vN-full", "mallory", 3L, true, "sync.forbidden", "sync.forbidden"),
            new Case("other-lww-full", "mallory", null, true, "sync.forbidden", "sync.forbidden"),
            // a partial payload is no insert and has no authorization row: the table answers it
            new Case("other-lww-partial", "mallory", null, false, "sync.row_deleted", "sync.row_missing"));

    /**
     * Every row of §6.2's absent-row table at every horizon position ({@link Horizon}), each upsert its own commit
     * of one request (§6.4: a rejected commit does not stop the batch). The decisions where §6.2 leaves the order
     * open are in {@link #TABLE}: a payload with every column is an insert whose §3.4 step 2 authorization row is the
     * payload, so it is authorized before the table answers; a partial payload is never an insert and has no
     * authorization row (as a delete of an absent row), so the table answers it without one, except for
     * {@code baseVersion > 0}, which §6.2 answers after payload authorization; {@code baseVersion = 0} with a
     * partial payload is {@code sync.row_missing} (an insert needs every column).
     */
    @ParameterizedTest
    @EnumSource(Horizon.class)
    void absentRowTableAtEveryHorizonPosition(Horizon position) {
        server.allow("p1", "alice");
        server.allow("p2", "mallory");
        SyncTestClient alice = server.synced("alice", "alice-table", "p1");
        SyncTestClient mallory = server.synced("mallory", "mallory-table", "p2");
        List<PushOperation> inserts = new ArrayList<>();
        List<PushOperation> deletes = new ArrayList<>();
        for (Case c : TABLE) {
            inserts.add(alice.upsertOp("notes", note(c.id, "p1", "before"), null));
            deletes.add(SyncTestClient.deleteOp("notes", c.id));
        }
        HeldTransaction held = null;
        CompletableFuture<?> pruning = CompletableFuture.completedFuture(null);
        if (position != Horizon.NO_TOMBSTONE) {
            alice.commit(inserts);
            String deleted = alice.commit(deletes);
            alice.upsert("notes", note("later", "p1", "a commit after the delete"), null);
            alice.syncUntilIdle();
            long s = alice.result(deleted).commitSeq();
            switch (position) {
                case ABOVE -> server.prune(s - 1);
                case AT -> server.prune(s);
                case BELOW -> server.prune(s + 1);
                default -> {
                    // hold one of the pruned commits' scope-index rows: the deletion transaction (scope index,
                    // changes, tombstones, commits) waits on it, after the horizon transaction committed
                    held = HeldTransaction.begin(
                            server.connections(),
                            "SELECT 1 FROM \"" + server.store().pgSchema()
                                    + "\".sync_commit_scopes WHERE partition_id = '" + server.partition()
                                    + "' AND commit_seq = " + s + " FOR UPDATE");
                    String epoch = server.store()
                            .readPartition(server.partition())
                            .await()
                            .atMost(ScenarioServer.WAIT)
                            .logEpoch();
                    pruning = server.store().prune(server.partition(), epoch, s).subscribeAsCompletionStage();
                    held.awaitBlocked();
                    assertEquals(TABLE.size(), tombstones(), "the tombstones are still stored");
                }
            }
            assertEquals(
                    switch (position) {
                        case ABOVE -> s - 1;
                        case BELOW -> s + 1;
                        default -> s;
                    },
                    server.horizonSeq());
        }
        try {
            Map<String, String> commits = new LinkedHashMap<>();
            for (Case c : TABLE) {
                SyncTestClient actor = c.actor.equals("alice") ? alice : mallory;
                Map<String, Object> payload = c.full ? note(c.id, "p1", "after") : patch(c.id, "after");
                commits.put(c.id, actor.upsert("notes", payload, c.base));
            }
            alice.sync();
            mallory.sync();
            Map<String, StoredRow> rows = server.rows("notes");
            for (Case c : TABLE) {
                SyncTestClient actor = c.actor.equals("alice") ? alice : mallory;
                PushResult r = actor.result(commits.get(c.id));
                assertNotNull(r, c.id);
                String expected = position == Horizon.ABOVE ? c.withinHorizon : c.otherwise;
                if (expected == null) {
                    assertEquals(CommitStatus.APPLIED, r.status(), c.id + " at " + position);
                    assertEquals(1, rows.get(c.id).serverVersion(), c.id);
                    assertEquals("after", rows.get(c.id).values()[2]);
                } else {
                    assertRejected(r, 0, expected, false);
                    assertFalse(rows.containsKey(c.id), c.id + " at " + position);
                }
            }
        } finally {
            if (held != null) {
                held.close();
            }
        }
        pruning.join();
        alice.syncUntilIdle();
        server.assertConverged(alice, "p1");
        if (position != Horizon.NO_TOMBSTONE && position != Horizon.ABOVE) {
            assertEquals(0, tombstones(), "pruned, or cleared by the recreate");
        }
    }

    private long tombstones() {
        return server.connections()
                .query("SELECT count(*) FROM \"" + server.store().pgSchema()
                        + "\".sync_tombstones WHERE partition_id = '" + server.partition() + "'")
                .execute()
                .await()
                .atMost(ScenarioServer.WAIT)
                .iterator()
                .next()
                .getLong(0);
    }
}
