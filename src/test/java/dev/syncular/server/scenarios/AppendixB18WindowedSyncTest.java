package dev.syncular.server.scenarios;

import static dev.syncular.server.scenarios.ScenarioServer.note;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.cli.Subscription;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.ScenarioAppProfile;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.RowsSegment;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRef;
import dev.syncular.server.wire.SegmentRow;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionStatus;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Appendix B scenario 18, windowed sync (§4.8), server side over real HTTP and a real socket. A window is the
 * client's: a family of subscriptions, one per window unit ({@code notes-p1}, {@code notes-p2}, ... here), whose
 * eviction, outbox pins, registry and completeness oracle live on the client. §4.8 adds no server behaviour; these
 * tests pin what the client relies on: a widened unit fresh-bootstraps alone, the units left alone keep their cursor
 * and get no segment, an omitted unit is unregistered (§4.1, on the very socket round, §8.7), a pinned write into an
 * evicted unit pushes normally (§3.4 authorizes the stored row, not a subscription), re-entry is a fresh bootstrap
 * with versions, at any distance past the horizon, and a zero-row unit completes its bootstrap in one round. The
 * server is never told of an eviction: no section is ever {@code revoked}, no row is touched.
 */
@QuarkusTest
@TestProfile(ScenarioAppProfile.class)
class AppendixB18WindowedSyncTest {
    private final ScenarioServer server = new ScenarioServer();

    /** Five notes in each of p1 and p2 (p3 empty); the reader is allowed all three units. */
    private SyncTestClient seeded() {
        server.allow("alice", Map.of("project_id", List.of("p1", "p2", "p3")));
        server.allow("wanda", Map.of("project_id", List.of("p1", "p2", "p3")));
        SyncTestClient writer = server.synced("alice", "w-18");
        for (String p : List.of("p1", "p2")) {
            for (int i = 0; i < 5; i++) {
                writer.upsert("notes", note(p + "-" + i, p, "row " + i), null);
            }
        }
        writer.syncUntilIdle();
        return writer;
    }

    private static void widen(SyncTestClient c, String unit) {
        c.subscribe("notes-" + unit, "notes", Map.of("project_id", List.of(unit)));
    }

    /** Shrink: the client evicts the unit's rows and drops its subscription, cursor and all (E3). */
    private static void shrink(SyncTestClient c, String unit) {
        c.subscriptions.remove("notes-" + unit);
        c.table("notes").values().removeIf(r -> unit.equals(r.values()[1]));
    }

    /** The sections of a response by subscription id, {@code SUB_START} to {@code SUB_END}. */
    private static Map<String, List<Frame>> sections(Message m) {
        Map<String, List<Frame>> out = new LinkedHashMap<>();
        List<Frame> current = null;
        for (Frame f : m.frames()) {
            if (f instanceof SubStart s) {
                current = new ArrayList<>();
                out.put(s.id(), current);
                assertNotEquals(SubscriptionStatus.REVOKED, s.status(), "evicted ≠ revoked");
            }
            if (current != null) {
                current.add(f);
            }
            if (f instanceof SubEnd) {
                current = null;
            }
        }
        return out;
    }

    /** The project of every row a section's segments carry (inline ones decoded, external ones counted). */
    private static List<String> segmentProjects(List<Frame> section, SyncTestClient c) {
        TableSchema notes = ScenarioServer.SCHEMA.table("notes");
        List<String> projects = new ArrayList<>();
        for (Frame f : section) {
            if (f instanceof SegmentInline s) {
                for (List<SegmentRow> block : RowsSegment.decode(s.payload()).blocks()) {
                    for (SegmentRow r : block) {
                        projects.add((String) r.values()[notes.columnIndex("project_id")]);
                    }
                }
            } else if (f instanceof SegmentRef ref) {
                for (long i = 0; i < ref.rowCount(); i++) {
                    projects.add("external");
                }
            }
        }
        return projects;
    }

    private static SubStart start(List<Frame> section) {
        return assertInstanceOf(SubStart.class, section.get(0));
    }

    private static SubEnd end(List<Frame> section) {
        return assertInstanceOf(SubEnd.class, section.get(section.size() - 1));
    }

    /**
     * (a) Widening {p1} to {p1, p2} bootstraps only p2: p1's section is incremental with its cursor unchanged and no
     * segment, p2's segments carry p2's rows only.
     */
    @Test
    void B18a_widenBootstrapsOnlyTheNewUnit() {
        seeded();
        SyncTestClient c = server.synced("wanda", "c-18a", "p1");
        c.accept = PullHeader.ACCEPT_INLINE_ROWS;
        long p1Cursor = c.subscriptions.get("notes-p1").cursor;
        widen(c, "p2");
        Map<String, List<Frame>> s = sections(c.sync());
        assertFalse(start(s.get("notes-p1")).bootstrap());
        assertTrue(segmentProjects(s.get("notes-p1"), c).isEmpty(), "no re-download of p1");
        assertEquals(p1Cursor, end(s.get("notes-p1")).nextCursor());
        assertTrue(start(s.get("notes-p2")).bootstrap());
        assertEquals(List.of("p2", "p2", "p2", "p2", "p2"), segmentProjects(s.get("notes-p2"), c));
        assertEquals(p1Cursor, c.subscriptions.get("notes-p1").cursor);
        server.assertConverged(c, "p1");
        server.assertConverged(c, "p2");
    }

    /**
     * (b) Shrinking {p1, p2} to {p2}: the pull without p1 answers p2 alone, the stored registration forgets p1
     * (§4.1), nothing is revoked and no server row is touched; on a socket round the registration replace takes
     * effect at once (§8.7): a p1 commit sends nothing, the next p2 commit is a delta with p2's section only.
     */
    @Test
    void B18b_shrinkUnregistersExactlyTheDepartedUnit() throws Exception {
        SyncTestClient writer = seeded();
        RealtimeSocket socket = server.connect("wanda", "c-18b");
        socket.nextEvent("hello");
        SyncTestClient c = server.overSocket(socket, "wanda", "c-18b", "p1", "p2");
        c.syncUntilIdle();
        assertTrue(server.record("c-18b").subscriptionsJson().contains("notes-p1"));
        server.ack(socket, c, c.subscriptions.get("notes-p1").cursor);
        writer.upsert("notes", note("p1-live", "p1", "delivered"), null);
        writer.syncUntilIdle();
        assertTrue(sections(socket.nextDelta()).containsKey("notes-p1"), "registered on p1");
        var before = server.rows("notes");
        shrink(c, "p1");
        Map<String, List<Frame>> s = sections(c.sync());
        assertEquals(List.of("notes-p2"), List.copyOf(s.keySet()));
        assertFalse(server.record("c-18b").subscriptionsJson().contains("notes-p1"), "the registration forgot p1");
        assertEquals(before.keySet(), server.rows("notes").keySet(), "the server tombstones nothing");
        server.ack(socket, c, c.subscriptions.get("notes-p2").cursor);
        writer.upsert("notes", note("p1-after", "p1", "not for wanda"), null);
        writer.syncUntilIdle();
        writer.upsert("notes", note("p2-after", "p2", "for wanda"), null);
        writer.syncUntilIdle();
        Message delta = socket.nextDelta();
        Map<String, List<Frame>> ds = sections(delta);
        assertEquals(List.of("notes-p2"), List.copyOf(ds.keySet()), "p1's commit sent nothing");
        CommitFrame commit =
                assertInstanceOf(CommitFrame.class, ds.get("notes-p2").get(1));
        assertEquals("p2-after", commit.changes().get(0).rowId());
        assertTrue(c.table("notes").values().stream().noneMatch(r -> "p1".equals(r.values()[1])));
        socket.ws.abort();
    }

    /**
     * (c) A pending write to a p1 row pins it on the client (E1); the shrink round still carries the commit, and it
     * applies: the server authorizes the stored row against the actor's scopes (§3.4), not against a subscription.
     * A sibling write to p2 applies alongside.
     */
    @Test
    void B18c_aPinnedWriteIntoAnEvictedUnitPushesNormally() {
        seeded();
        SyncTestClient c = server.synced("wanda", "c-18c", "p1", "p2");
        long base = c.table("notes").get("p1-0").version();
        String pinned = c.upsert("notes", Map.of("id", "p1-0", "title", "edited while evicted"), base);
        String sibling = c.upsert("notes", Map.of("id", "p2-0", "title", "p2 edit"), null);
        c.subscriptions.remove("notes-p1");
        Map<String, List<Frame>> s = sections(c.sync());
        assertEquals(List.of("notes-p2"), List.copyOf(s.keySet()));
        assertTrue(SyncTestClient.applied(c.result(pinned)));
        assertTrue(SyncTestClient.applied(c.result(sibling)));
        assertEquals("edited while evicted", server.rows("notes").get("p1-0").values()[2]);
        assertEquals("p2 edit", server.rows("notes").get("p2-0").values()[2]);
    }

    /**
     * (d) Re-entry after an eviction is a fresh bootstrap ({@code cursor = -1}): p1's rows and versions equal the
     * server's, and an immediate {@code baseVersion} write with a segment-seeded version applies (E2).
     */
    @Test
    void B18d_reEntryIsAFreshBootstrapWithWritableVersions() {
        SyncTestClient writer = seeded();
        writer.upsert("notes", Map.of("id", "p1-1", "title", "v2"), null);
        writer.syncUntilIdle();
        SyncTestClient c = server.synced("wanda", "c-18d", "p1", "p2");
        shrink(c, "p1");
        c.syncUntilIdle();
        writer.upsert("notes", Map.of("id", "p1-1", "title", "v3 while evicted"), null);
        writer.syncUntilIdle();
        widen(c, "p1");
        Map<String, List<Frame>> s = sections(c.sync());
        assertTrue(start(s.get("notes-p1")).bootstrap());
        assertFalse(start(s.get("notes-p2")).bootstrap());
        server.assertConverged(c, "p1");
        long seeded = c.table("notes").get("p1-1").version();
        assertEquals(3, seeded);
        String write = c.upsert("notes", Map.of("id", "p1-1", "title", "v4 from the seeded version"), seeded);
        c.sync();
        assertTrue(SyncTestClient.applied(c.result(write)), String.valueOf(c.result(write)));
        assertEquals(4, server.rows("notes").get("p1-1").serverVersion());
    }

    /**
     * (e) Replacing {p1, p2} with {p2, p3} bootstraps p3 and leaves p2 alone: its cursor unchanged, no segment, an
     * incremental section; p1 is simply absent.
     */
    @Test
    void B18e_valueShardedReplaceTouchesOnlyTheDelta() {
        SyncTestClient writer = seeded();
        for (int i = 0; i < 3; i++) {
            writer.upsert("notes", note("p3-" + i, "p3", "row " + i), null);
        }
        writer.syncUntilIdle();
        SyncTestClient c = server.synced("wanda", "c-18e", "p1", "p2");
        c.accept = PullHeader.ACCEPT_INLINE_ROWS;
        long p2Cursor = c.subscriptions.get("notes-p2").cursor;
        shrink(c, "p1");
        widen(c, "p3");
        Map<String, List<Frame>> s = sections(c.sync());
        assertEquals(List.of("notes-p2", "notes-p3"), List.copyOf(s.keySet()));
        assertFalse(start(s.get("notes-p2")).bootstrap());
        assertTrue(segmentProjects(s.get("notes-p2"), c).isEmpty(), "zero segment rows for p2");
        assertEquals(p2Cursor, end(s.get("notes-p2")).nextCursor());
        assertEquals(List.of("p3", "p3", "p3"), segmentProjects(s.get("notes-p3"), c));
        server.assertConverged(c, "p2");
        server.assertConverged(c, "p3");
    }

    /**
     * (f) Re-entry across a pruned horizon: p1 is evicted, the log advances (a p1 row deleted among others) and is
     * pruned past p1's old cursor. Resuming from that parked cursor would be answered {@code reset}
     * ({@code sync.cursor_expired}, §4.6); the re-entry's fresh bootstrap snapshots current state and converges.
     */
    @Test
    void B18f_reEntryAcrossAPrunedHorizonConverges() {
        SyncTestClient writer = seeded();
        SyncTestClient c = server.synced("wanda", "c-18f", "p1", "p2");
        long parked = c.subscriptions.get("notes-p1").cursor;
        shrink(c, "p1");
        c.syncUntilIdle();
        writer.delete("notes", "p1-2");
        writer.upsert("notes", note("p1-new", "p1", "while evicted"), null);
        writer.syncUntilIdle();
        c.syncUntilIdle();
        server.prune(server.maxCommitSeq());
        assertTrue(server.horizonSeq() > parked);
        Subscription resumed = new Subscription("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        resumed.cursor = parked; // what a client MUST NOT do
        c.subscriptions.put("notes-p1", resumed);
        Map<String, List<Frame>> wrong = sections(c.sync());
        assertEquals(SubscriptionStatus.RESET, start(wrong.get("notes-p1")).status());
        assertEquals("sync.cursor_expired", start(wrong.get("notes-p1")).reasonCode());
        c.subscriptions.remove("notes-p1");
        widen(c, "p1");
        c.syncUntilIdle();
        assertFalse(c.table("notes").containsKey("p1-2"));
        assertTrue(c.table("notes").containsKey("p1-new"));
        server.assertConverged(c, "p1");
        server.assertConverged(c, "p2");
    }

    /**
     * (g) Completeness is the client's oracle; what it reads from the server: a newly registered unit is pending
     * while its cursor is {@code -1} or a resume token is held, and complete at the round whose {@code SUB_END}
     * carries the pin without a token — in one round for a unit with zero rows (emptiness ≠ pendency), after its
     * pages for a unit with rows.
     */
    @Test
    void B18g_aZeroRowUnitCompletesAtItsFirstBootstrapRound() {
        seeded();
        SyncTestClient c = server.synced("wanda", "c-18g");
        c.limitSnapshotRows = 2;
        c.maxSnapshotPages = 1;
        widen(c, "p2");
        widen(c, "p3");
        Map<String, List<Frame>> s = sections(c.sync());
        long pin = server.maxCommitSeq();
        assertTrue(start(s.get("notes-p3")).bootstrap());
        assertEquals(pin, end(s.get("notes-p3")).nextCursor());
        assertNull(end(s.get("notes-p3")).bootstrapState(), "zero rows: complete");
        assertNotNull(end(s.get("notes-p2")).bootstrapState(), "paged: still pending");
        assertEquals(pin, end(s.get("notes-p2")).nextCursor());
        int rounds = 1;
        while (c.subscriptions.get("notes-p2").bootstrapState != null) {
            c.sync();
            assertTrue(++rounds < 10);
        }
        assertEquals(3, rounds, "five rows at two a round");
        assertEquals(pin, c.subscriptions.get("notes-p2").cursor);
        server.assertConverged(c, "p2");
        assertTrue(c.table("notes").values().stream().noneMatch(r -> "p3".equals(r.values()[1])));
    }
}
