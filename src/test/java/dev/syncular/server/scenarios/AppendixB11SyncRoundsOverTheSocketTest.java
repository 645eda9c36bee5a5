package dev.syncular.server.scenarios;

import static dev.syncular.server.scenarios.ScenarioServer.note;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.ScenarioAppProfile;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Appendix B scenario 11, sync rounds over the socket (§8.7, §8.1, §8.2), server side over a real socket: (a) and
 * (b) here. (c) one round in flight and (d) a commit during a round are in the {@code realtime} test package
 * ({@code B11c_roundBytesWhileStreamingDropTheConnection}, {@code B11d_commitDuringRoundIsAWakeUpNeverADelta}).
 */
@QuarkusTest
@TestProfile(ScenarioAppProfile.class)
class AppendixB11SyncRoundsOverTheSocketTest {
    private final ScenarioServer server = new ScenarioServer();

    private static Map<String, Object> patch(String id, String title) {
        return Map.of("id", id, "title", title);
    }

    /**
     * (a) A client syncing over the socket and a control client syncing over {@code POST /sync} run the same
     * workload (inserts, a versioned edit, a delete, the writer's commits between) and end state-identical: rows,
     * versions, cursors, outboxes drained. The same pull request then answers the same bytes on both bindings.
     */
    @Test
    void B11a_socketAndHttpClientsEndStateIdentical() throws Exception {
        server.allow("p1", "alice", "sam", "hal");
        SyncTestClient writer = server.synced("alice", "w-11a", "p1");
        for (int i = 0; i < 5; i++) {
            writer.upsert("notes", note("w-" + i, "p1", "writer " + i), null);
        }
        writer.syncUntilIdle();
        RealtimeSocket s = server.connect("sam", "s-11a");
        s.nextEvent("hello");
        SyncTestClient overSocket = server.overSocket(s, "sam", "s-11a", "p1");
        SyncTestClient overHttp = server.client("hal", "h-11a", "p1");
        List<SyncTestClient> both = List.of(overSocket, overHttp);
        for (SyncTestClient c : both) {
            c.syncUntilIdle();
            c.upsert("notes", note(c.actorId + "-own", "p1", "own row"), null);
            c.syncUntilIdle();
        }
        for (int round = 0; round < 3; round++) {
            for (SyncTestClient c : both) {
                long base = c.table("notes").get("w-" + round).version();
                c.upsert("notes", patch("w-" + round, c.actorId + " edit " + round), base);
                c.sync();
            }
            writer.upsert("notes", note("w-late-" + round, "p1", "late"), null);
            writer.delete("notes", "w-" + (4 - round));
            writer.syncUntilIdle();
        }
        for (SyncTestClient c : both) {
            c.syncUntilIdle();
        }
        assertTrue(overSocket.outbox.isEmpty() && overHttp.outbox.isEmpty(), "outboxes drained");
        assertEquals(overHttp.subscriptions.get("notes-p1").cursor, overSocket.subscriptions.get("notes-p1").cursor);
        assertEquals(server.maxCommitSeq(), overSocket.subscriptions.get("notes-p1").cursor);
        assertEquals(overHttp.table("notes").keySet(), overSocket.table("notes").keySet());
        overHttp.table("notes").forEach((id, row) -> {
            assertEquals(row.version(), overSocket.table("notes").get(id).version(), id);
            assertArrayEquals(row.values(), overSocket.table("notes").get(id).values(), id);
        });
        server.assertConverged(overSocket, "p1");
        server.assertConverged(overHttp, "p1");
        // one handler, two framings: the same request, the same response bytes
        byte[] request = overSocket.buildRequest().encode();
        byte[] bySocket = s.round(request, 5);
        byte[] byHttp = new HttpTransport(server.base(), server.partition()).roundTrip(overSocket, request);
        assertArrayEquals(byHttp, bySocket);
        assertFalse(s.closed.isDone());
        s.ws.abort();
    }

    /**
     * (b) A client that connects before its first-ever pull has no registration: {@code hello} says
     * {@code requiresSync} and a commit then sends it nothing. Its first round on the socket registers the
     * connection at round end (§8.7); after the post-round ack the next commit is a delta on this very socket, with
     * no reconnect — the §8.1 silent-no-fanout footgun cannot occur.
     */
    @Test
    void B11b_connectBeforeTheFirstPullRegistersAtRoundEnd() throws Exception {
        server.allow("p1", "alice", "carol");
        SyncTestClient writer = server.synced("alice", "w-11b", "p1");
        writer.upsert("notes", note("r0", "p1", "before carol"), null);
        writer.syncUntilIdle();
        RealtimeSocket s = server.connect("carol", "c-11b");
        assertTrue(s.nextEvent("hello").get("data").get("requiresSync").asBoolean());
        assertNull(server.record("c-11b"), "never pulled: nothing registered");
        writer.upsert("notes", note("r1", "p1", "while carol is unregistered"), null);
        writer.syncUntilIdle();
        SyncTestClient c = server.overSocket(s, "carol", "c-11b", "p1");
        c.syncUntilIdle();
        assertTrue(s.deltasBesideRounds.isEmpty(), "nothing was registered before the first round");
        assertTrue(c.table("notes").keySet().containsAll(List.of("r0", "r1")));
        long cursor = c.subscriptions.get("notes-p1").cursor;
        server.ack(s, c, cursor);
        writer.upsert("notes", note("r2", "p1", "a delta"), null);
        writer.syncUntilIdle();
        Message delta = s.nextDelta();
        SubStart start = assertInstanceOf(SubStart.class, delta.frames().get(1));
        assertEquals("notes-p1", start.id());
        CommitFrame commit = assertInstanceOf(CommitFrame.class, delta.frames().get(2));
        assertEquals(cursor + 1, commit.commitSeq());
        assertEquals("r2", commit.changes().get(0).rowId());
        assertEquals(
                commit.commitSeq(),
                assertInstanceOf(SubEnd.class, delta.frames().get(3)).nextCursor());
        assertFalse(s.closed.isDone(), "no reconnect");
        s.ws.abort();
    }
}
