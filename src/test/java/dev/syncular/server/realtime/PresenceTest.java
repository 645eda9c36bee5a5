package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.realtime.ControlMessage;
import dev.syncular.server.wire.realtime.ControlMessages;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * §8.6 presence end to end over real sockets (Appendix B scenario 16): the lifecycle, the cross-scope privacy
 * probe, a peer that ignores presence, presence across a socket round, and the size cap.
 *
 * <p>Absence is proven without waiting: a connection's messages are handled in order and the registry changes
 * under one monitor, so once a connection has its answer to a later message (a {@code presence.forbidden}, a
 * round), every presence event issued to it before has arrived.
 */
@QuarkusTest
class PresenceTest {
    static final String L1 = "list:l1";
    static final String L2 = "list:l2";

    @TestHTTPResource("/")
    URI base;

    @Inject
    SchemaWindow window;

    String partition;

    @BeforeEach
    void partition() {
        partition = "presence-" + UUID.randomUUID();
    }

    /** A client subscribed to {@code list}'s todos, synced over HTTP (registered) and then connected. */
    final class Peer {
        final SyncTestClient client;
        final RealtimeSocket socket;

        Peer(String actor, String list) throws InterruptedException {
            this(actor, list, () -> {});
        }

        /** {@code beforeConnect} runs once the client is synced, right before its socket connects. */
        Peer(String actor, String list, Runnable beforeConnect) throws InterruptedException {
            client = new SyncTestClient(
                    window.current(),
                    new HttpTransport(base.toString(), partition),
                    actor,
                    "c-" + actor + "-" + UUID.randomUUID());
            client.subscribe("s1", "todos", Map.of("list_id", List.of(list)));
            client.syncUntilIdle();
            beforeConnect.run();
            socket = RealtimeSocket.connect(base.toString(), partition, actor, client.clientId);
            socket.nextEvent("hello");
        }

        void publish(String key, ObjectNode doc) {
            socket.send(new ControlMessage.PresencePublish(key, doc));
        }

        JsonNode nextPresence() throws InterruptedException {
            return socket.nextEvent("presence").get("data");
        }

        /**
         * Publishes onto {@code unheldKey} and returns every presence event received before its
         * {@code presence.forbidden} answer: the barrier that proves what did not arrive.
         */
        List<JsonNode> presenceUntilForbidden(String unheldKey) throws InterruptedException {
            publish(unheldKey, doc("probe"));
            List<JsonNode> before = new ArrayList<>();
            while (true) {
                JsonNode d = nextPresence();
                if (d.has("error")) {
                    assertEquals("presence.forbidden", d.get("error").asText());
                    assertEquals(unheldKey, d.get("scopeKey").asText());
                    return before;
                }
                before.add(d);
            }
        }

        void close() {
            socket.ws.abort();
        }
    }

    static ObjectNode doc(String text) {
        return JsonNodeFactory.instance.objectNode().put("cursor", text);
    }

    static void assertPresence(JsonNode d, String kind, Peer from, String cursor) {
        assertEquals(L1, d.get("scopeKey").asText());
        assertEquals(kind, d.get("kind").asText());
        assertEquals(from.client.actorId, d.get("actorId").asText());
        assertEquals(from.client.clientId, d.get("clientId").asText());
        if (cursor == null) {
            assertTrue(d.get("doc").isNull(), "a leave carries doc: null");
        } else {
            assertEquals(cursor, d.get("doc").get("cursor").asText());
        }
        assertTrue(d.get("timestamp").asLong() > 0);
        // the event is a well-formed §8.6.2 server message
        assertInstanceOf(
                ControlMessage.PresenceFanout.class,
                ControlMessages.parseServerMessage("{\"event\":\"presence\",\"data\":" + d + "}"));
    }

    /**
     * Appendix B.16 (a): join, update, leave by {@code doc: null}, join again, leave by disconnect, and a late
     * joiner's snapshot join-burst of exactly who is present (§8.6.1, §8.6.4).
     */
    @Test
    void B16a_fullLifecycleWithSnapshotForALateJoiner() throws Exception {
        Peer a = new Peer("alice", "l1");
        Peer b = new Peer("bob", "l1");
        a.publish(L1, doc("1"));
        assertPresence(b.nextPresence(), "join", a, "1");
        a.publish(L1, doc("2"));
        assertPresence(b.nextPresence(), "update", a, "2");
        a.publish(L1, null);
        assertPresence(b.nextPresence(), "leave", a, null);
        a.publish(L1, doc("3"));
        assertPresence(b.nextPresence(), "join", a, "3");
        // the publisher never hears its own documents
        assertTrue(a.presenceUntilForbidden(L2).isEmpty());
        a.close();
        assertPresence(b.nextPresence(), "leave", a, null); // disconnect implies leave (§8.6.1)
        // a late joiner gets the join-burst of who is present: B only
        b.publish(L1, doc("b"));
        Peer c = new Peer("carol", "l1");
        JsonNode snapshot = c.nextPresence();
        assertPresence(snapshot, "join", b, "b");
        assertTrue(c.presenceUntilForbidden(L2).isEmpty(), "exactly one peer is present");
        b.close();
        c.close();
    }

    /**
     * §8.6.4 exactly once: a connection registering while a scope-mate keeps publishing sees that peer's
     * document once — in its join-burst snapshot or as a live {@code join}, never both — then only updates, in
     * publish order. Repeated, since the registration and the publishes race.
     */
    @Test
    void aJoinerRacingPublishesSeesEachPeerExactlyOnce() throws Exception {
        Peer a = new Peer("alice", "l1");
        a.publish(L1, doc("0"));
        long published = 0;
        for (int round = 0; round < 25; round++) {
            // A publishes until C's hello is in, so the registration lands among the publishes; every tenth
            // publish waits for the server's answer to a probe (backpressure, not a pause)
            AtomicBoolean joined = new AtomicBoolean();
            AtomicLong counter = new AtomicLong(published);
            Thread publisher = new Thread(() -> {
                do {
                    long n = counter.incrementAndGet();
                    a.publish(L1, doc(String.valueOf(n)));
                    if (n % 10 == 0) {
                        try {
                            a.presenceUntilForbidden(L2);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return;
                        }
                    }
                } while (!joined.get());
            });
            Peer c;
            try {
                c = new Peer("carol" + round, "l1", publisher::start);
            } finally {
                joined.set(true);
                publisher.join();
            }
            published = counter.get();
            long from = published;
            JsonNode first = c.nextPresence();
            assertEquals("join", first.get("kind").asText(), "the first event about a present peer is its join");
            long seen = first.get("doc").get("cursor").asLong();
            while (seen < from) {
                JsonNode d = c.nextPresence();
                assertPresence(d, "update", a, d.get("doc").get("cursor").asText());
                long next = d.get("doc").get("cursor").asLong();
                assertTrue(next > seen, "updates arrive in publish order, none twice: " + seen + " then " + next);
                seen = next;
            }
            assertEquals(from, seen);
            assertTrue(c.presenceUntilForbidden(L2).isEmpty(), "nothing after the last document");
            c.close();
        }
        a.close();
    }

    /**
     * Appendix B.16 (b), the privacy probe (§8.6.3): A on l1 and D on l2 never hear each other on any lifecycle event,
     * and neither can publish onto the other's key ({@code presence.forbidden}).
     */
    @Test
    void B16b_crossScopeProbeLearnsNothing() throws Exception {
        Peer a = new Peer("alice", "l1");
        Peer b = new Peer("bob", "l1");
        Peer d = new Peer("dave", "l2");
        a.publish(L1, doc("a"));
        assertPresence(b.nextPresence(), "join", a, "a");
        d.publish(L2, doc("d"));
        a.publish(L1, null);
        assertPresence(b.nextPresence(), "leave", a, null);
        // D heard nothing of l1, and publishing onto it is refused exactly like an unknown key would be
        assertTrue(d.presenceUntilForbidden(L1).isEmpty());
        assertTrue(d.presenceUntilForbidden("list:no-such-list").isEmpty());
        // A heard nothing of D's l2 document, and cannot publish there either
        assertTrue(a.presenceUntilForbidden(L2).isEmpty());
        // D's leave by disconnect reaches no one on l1
        d.close();
        assertTrue(b.presenceUntilForbidden(L2).isEmpty());
        a.close();
        b.close();
    }

    static Map<String, Object> todo(String id) {
        return Map.of("id", id, "list_id", "l1", "title", "x", "done", false, "position", 1L, "updated_at_ms", 1L);
    }

    /**
     * Appendix B.16 (c), feature-off silence: E never publishes and ignores presence events (§8.1 tolerate-unknown);
     * the chatter of its scope-mates changes nothing it relies on — its deltas arrive cursor-contiguous amid it and
     * its own socket round answers as ever.
     */
    @Test
    void B16c_aPeerIgnoringPresenceIsUndisturbed() throws Exception {
        Peer a = new Peer("alice", "l1");
        Peer e = new Peer("erin", "l1");
        long cursor = e.client.subscriptions.get("s1").cursor;
        a.publish(L1, doc("a1"));
        a.publish(L1, doc("a2"));
        a.client.upsert("todos", todo("t1"), null);
        a.client.sync();
        a.publish(L1, null);
        Message delta = e.socket.nextDelta();
        CommitFrame commit = assertInstanceOf(CommitFrame.class, delta.frames().get(2));
        assertEquals("t1", commit.changes().get(0).rowId());
        assertEquals(cursor + 1, commit.commitSeq(), "cursor-contiguous amid the chatter");
        e.client.subscriptions.get("s1").cursor = commit.commitSeq();
        Message round = MessageDecoder.decodeResponse(
                e.socket.round(e.client.buildRequest().encode(), 64));
        assertInstanceOf(RespHeader.class, round.frames().get(0));
        assertFalse(e.socket.closed.isDone());
        a.close();
        e.close();
    }

    /**
     * Appendix B.16 (d): A, present on l1, runs a push + pull round on the same socket (§8.7); the round's
     * registration replace re-derives the same grant, so its published document survives (a late joiner sees it)
     * and A still hears its scope-mates.
     */
    @Test
    void B16d_presenceSurvivesASocketRound() throws Exception {
        Peer a = new Peer("alice", "l1");
        Peer b = new Peer("bob", "l1");
        a.publish(L1, doc("a1"));
        assertPresence(b.nextPresence(), "join", a, "a1");
        a.client.upsert("todos", todo("t2"), null);
        Message response = MessageDecoder.decodeResponse(
                a.socket.round(a.client.buildRequest().encode(), 1 << 16));
        assertTrue(response.frames().stream().anyMatch(f -> f instanceof PushResult), "a push + pull round");
        Peer c = new Peer("carol", "l1");
        assertPresence(c.nextPresence(), "join", a, "a1"); // A's document survived its round
        c.publish(L1, doc("c1"));
        assertPresence(a.nextPresence(), "join", c, "c1"); // and A still hears its scope-mates
        assertTrue(
                b.presenceUntilForbidden(L2).stream()
                        .noneMatch(d -> "leave".equals(d.get("kind").asText())),
                "the round made A leave nothing");
        a.close();
        b.close();
        c.close();
    }

    @Test
    void anOversizeDocumentIsRefusedToItsPublisherOnly() throws Exception {
        Peer a = new Peer("alice", "l1");
        Peer b = new Peer("bob", "l1");
        ObjectNode big = JsonNodeFactory.instance.objectNode().put("cursor", "x".repeat(20_000)); // default cap 16K
        a.publish(L1, big);
        JsonNode error = a.nextPresence();
        assertEquals("presence.too_large", error.get("error").asText());
        assertEquals(L1, error.get("scopeKey").asText());
        a.publish(L1, doc("small"));
        // B's first presence event is the small document: the oversize one was neither fanned out nor stored
        assertPresence(b.nextPresence(), "join", a, "small");
        a.close();
        b.close();
    }

    /**
     * Issue 45: a connection publishing in a loop (300 documents at once) reaches its scope-mates at its rate: the
     * burst (20) goes out, the rest is held with only the newest document per key kept, and that newest document
     * arrives next, once the rate (10 a second) allows; never the backlog.
     */
    @Test
    void aPublishingLoopReachesItsMatesAsItsNewestDocumentAtItsRate() throws Exception {
        Peer a = new Peer("alice", "l1");
        Peer b = new Peer("bob", "l1");
        // B's presence registration follows its hello (§8.6.4): a first document it receives proves it is a mate
        // before the loop (a document published before would reach it only as the snapshot of the newest)
        a.publish(L1, doc("ready"));
        assertEquals("ready", b.nextPresence().get("doc").get("cursor").asText());
        for (int i = 0; i < 300; i++) {
            a.publish(L1, doc("v" + i));
        }
        List<String> seen = new ArrayList<>();
        while (seen.isEmpty() || !seen.get(seen.size() - 1).equals("v299")) {
            JsonNode d = b.nextPresence();
            seen.add(d.get("doc").get("cursor").asText());
        }
        assertTrue(seen.size() <= 22, "the burst, then the newest document: " + seen);
        assertEquals("v0", seen.get(0));
        a.close();
        b.close();
    }

    @Test
    void malformedPresenceClosesTheSocket() throws Exception {
        Peer a = new Peer("alice", "l1");
        a.socket.sendText("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"list:l1\",\"doc\":[1]}}");
        assertEquals(1007, a.socket.closed.get(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS));
        assertFalse(a.socket.texts.stream().anyMatch(t -> t.contains("\"presence\"")));
    }
}
