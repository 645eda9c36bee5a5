package dev.syncular.server.scenarios;

import static dev.syncular.server.scenarios.ScenarioServer.note;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.ScenarioAppProfile;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRef;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionStatus;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import org.junit.jupiter.api.Test;

/**
 * Appendix B scenario 7, reconnect catch-up (§8.1–§8.4, §4.5, §4.6), server side over a real socket and HTTP.
 *
 * <p>Decision (§8.4 "catch-up prefers segments" is a SHOULD under a server heuristic): this server answers a
 * far-behind recovery pull with the log window, paged by the client's {@code limitCommits} (§4.5), never with
 * bootstrap segments. §5.6 defines a fresh bootstrap, whose first page clears the subscription's rows, as one whose
 * request carried {@code cursor < 0}; a bootstrap answered to a cursor at or above 0 would leave the client the rows
 * deleted while it was away. Only a cursor behind the horizon gets a fresh pin, through {@code reset} (B.8). So B.7's
 * "recovery pull delivers bootstrap segments" is answered by contiguous log pages here; everything else of the
 * scenario holds as written.
 */
@QuarkusTest
@TestProfile(ScenarioAppProfile.class)
class AppendixB07ReconnectCatchUpTest {
    private final ScenarioServer server = new ScenarioServer();

    /**
     * B disconnects while the writer advances the log 40 commits past B's {@code limitCommits} of 5 (pruned up to,
     * never past, B's cursor). On reconnect {@code hello} says {@code requiresSync} with B's stored cursor and the
     * latest; a commit meanwhile is a {@code catchup-required} wake-up, never a delta past B's cursor; the recovery
     * pulls are contiguous log windows of at most 5 changes, the rows converge, and after the ack deltas resume
     * cursor-contiguous.
     */
    @Test
    void B7_reconnectFarBehindCatchesUpAndDeltasResume() throws Exception {
        server.allow("p1", "alice", "bob");
        SyncTestClient writer = server.synced("alice", "w-7", "p1");
        writer.upsert("notes", note("doomed", "p1", "deleted while bob is away"), null);
        writer.syncUntilIdle();
        SyncTestClient b = server.synced("bob", "b-7", "p1");
        b.limitCommits = 5;
        long cursor = b.subscriptions.get("notes-p1").cursor;
        RealtimeSocket first = server.connect("bob", b.clientId);
        assertFalse(first.nextEvent("hello").get("data").get("requiresSync").asBoolean(), "up to date at connect");
        first.ws.abort();

        for (int i = 0; i < 40; i++) {
            writer.upsert("notes", note("r-" + i, "p1", "row " + i), null);
        }
        writer.delete("notes", "doomed");
        writer.syncUntilIdle();
        server.prune(cursor); // the horizon reaches B's cursor, never past it (§4.6 retention floor)
        long latest = server.maxCommitSeq();
        assertTrue(latest - cursor > b.limitCommits);

        RealtimeSocket again = server.connect("bob", b.clientId);
        JsonNode hello = again.nextEvent("hello").get("data");
        assertTrue(hello.get("requiresSync").asBoolean());
        assertEquals(cursor, hello.get("cursor").asLong());
        assertEquals(latest, hello.get("latestCursor").asLong());
        writer.upsert("notes", note("meanwhile", "p1", "while bob is behind"), null);
        writer.syncUntilIdle();
        JsonNode wake = again.nextEvent("sync").get("data");
        assertEquals("catchup-required", wake.get("reason").asText());
        assertTrue(wake.get("requiresPull").asBoolean());
        assertTrue(again.binaries.isEmpty(), "no delta past B's cursor (§8.2)");

        long before = cursor;
        int rounds = 0;
        while (true) {
            Message m = b.sync();
            rounds++;
            SubStart start = (SubStart) m.frames().stream()
                    .filter(f -> f instanceof SubStart)
                    .findFirst()
                    .orElseThrow();
            assertEquals(SubscriptionStatus.ACTIVE, start.status());
            assertFalse(start.bootstrap(), "the log window, never a bootstrap (the decision above)");
            int changes = 0;
            long expectedNext = before;
            for (Frame f : m.frames()) {
                assertFalse(f instanceof SegmentRef || f instanceof SegmentInline);
                if (f instanceof CommitFrame c) {
                    assertTrue(c.commitSeq() > expectedNext, "ascending, after the cursor");
                    expectedNext = c.commitSeq();
                    changes += c.changes().size();
                }
            }
            assertTrue(changes <= 5, "limitCommits bounds a page: " + changes);
            long next = ((SubEnd) m.frames().stream()
                            .filter(f -> f instanceof SubEnd)
                            .findFirst()
                            .orElseThrow())
                    .nextCursor();
            assertTrue(next >= expectedNext);
            assertTrue(next > before, "every page advances");
            assertTrue(rounds < 100);
            before = next;
            if (next == server.maxCommitSeq()) {
                break;
            }
        }
        assertTrue(rounds >= 8, "paged: " + rounds);
        assertFalse(b.table("notes").containsKey("doomed"), "the delete arrived");
        server.assertConverged(b, "p1");

        server.ack(again, b, b.subscriptions.get("notes-p1").cursor);
        writer.upsert("notes", note("after", "p1", "a delta again"), null);
        writer.syncUntilIdle();
        Message delta = again.nextDelta();
        CommitFrame c = assertInstanceOf(CommitFrame.class, delta.frames().get(2));
        assertEquals(before + 1, c.commitSeq(), "cursor-contiguous");
        assertEquals("after", c.changes().get(0).rowId());
        assertEquals(
                c.commitSeq(),
                assertInstanceOf(SubEnd.class, delta.frames().get(3)).nextCursor());
        again.ws.abort();
    }
}
