package dev.syncular.server.scenarios;

import static dev.syncular.server.scenarios.ScenarioServer.note;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.ScenarioAppProfile;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.PushResult;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Appendix B scenario 22, a local mutation during a captured round (§7.1, §8.4). The scenario is the client's: it
 * captures a request, keeps accepting local commits while the reply is pending, and applies the reply over its
 * optimistic rows; the Tauri owner and web worker mailboxes are client hosts. The server behaviour it relies on,
 * tested here over HTTP and over the socket: a round answers exactly the commits its request carried, in order, and
 * nothing of a commit written after the capture; that later commit applies in the next round on top of the first.
 */
@QuarkusTest
@TestProfile(ScenarioAppProfile.class)
class AppendixB22MutationDuringACapturedRoundTest {
    private final ScenarioServer server = new ScenarioServer();

    private void capturedRound(SyncTestClient a, SyncTestClient bob) {
        String first = a.upsert("notes", note("doc", "p1", "first intent"), null);
        Message captured = a.buildRequest();
        // authored while the reply is pending: outside the captured request
        String later = a.upsert("notes", Map.of("id", "doc", "title", "later intent"), null);
        bob.upsert("notes", note("bobs", "p1", "another client's commit"), null);
        bob.syncUntilIdle();
        Message reply = a.exchange(captured);
        List<String> answered = reply.frames().stream()
                .filter(f -> f instanceof PushResult)
                .map(f -> ((PushResult) f).clientCommitId())
                .toList();
        assertEquals(List.of(first), answered, "only the captured commit is acknowledged");
        assertEquals(CommitStatus.APPLIED, a.result(first).status());
        assertEquals(1, a.outbox.size());
        assertEquals(later, a.outbox.get(0).clientCommitId(), "the later intent stays queued");
        StoredRow doc = server.rows("notes").get("doc");
        assertEquals("first intent", doc.values()[2]);
        assertEquals(1, doc.serverVersion());
        assertTrue(
                reply.frames().stream()
                        .anyMatch(f -> f instanceof CommitFrame c
                                && c.changes().get(0).rowId().equals("bobs")),
                "the pull half delivers what others committed");
        // the next round drains it over the server base
        a.sync();
        assertEquals(CommitStatus.APPLIED, a.result(later).status());
        assertTrue(a.result(later).commitSeq() > a.result(first).commitSeq());
        doc = server.rows("notes").get("doc");
        assertEquals("later intent", doc.values()[2]);
        assertEquals(2, doc.serverVersion());
        a.syncUntilIdle();
        server.assertConverged(a, "p1");
    }

    /** Over {@code POST /sync}. */
    @Test
    void B22_aCapturedRoundAcknowledgesOnlyItsOwnCommits() {
        server.allow("p1", "alice", "bob");
        SyncTestClient a = server.synced("alice", "a-22", "p1");
        SyncTestClient bob = server.synced("bob", "b-22", "p1");
        capturedRound(a, bob);
    }

    /** Over the socket (§8.7): the same answer from the other binding. */
    @Test
    void B22_aCapturedSocketRoundAcknowledgesOnlyItsOwnCommits() throws Exception {
        server.allow("p1", "alice", "bob");
        RealtimeSocket s = server.connect("alice", "a-22s");
        s.nextEvent("hello");
        SyncTestClient a = server.overSocket(s, "alice", "a-22s", "p1");
        a.syncUntilIdle();
        SyncTestClient bob = server.synced("bob", "b-22s", "p1");
        capturedRound(a, bob);
        s.ws.abort();
    }
}
