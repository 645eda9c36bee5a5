package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.realtime.ControlMessages;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Exactly once, in order (§8.2 contiguity, §8.7 rounds and suppression, §8.1 registration before the head),
 * stressed over real sockets: a client pushing through its own socket rounds never gets a delta for a commit
 * its rounds already answered, while a passive reader gets every one of them once and in order; a client
 * connecting while commits flow is told {@code requiresSync: false} only when every later commit reaches it,
 * contiguously, as a delta.
 */
@QuarkusTest
class RealtimeExactlyOnceTest {
    @TestHTTPResource("/")
    URI base;

    @Inject
    SchemaWindow window;

    String partition;

    @BeforeEach
    void partition() {
        partition = "exact-" + UUID.randomUUID();
    }

    SyncTestClient client(String actor, SyncTestClient.Transport transport) {
        return SyncTestClient.onListL1(window.current(), transport, actor);
    }

    HttpTransport http() {
        return new HttpTransport(base.toString(), partition);
    }

    static Map<String, Object> todo(String id) {
        return Map.of(
                "id", id, "list_id", "l1", "title", "t " + id, "done", false, "position", 1L, "updated_at_ms", 1L);
    }

    /** Rounds over {@code socket} (§8.7), one message per 64 KiB; segments stay on HTTP (§5.5). */
    record SocketTransport(RealtimeSocket socket, HttpTransport http) implements SyncTestClient.Transport {
        @Override
        public byte[] roundTrip(SyncTestClient client, byte[] request) {
            try {
                return socket.round(request, 1 << 16);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
            return http.downloadSegment(client, segmentId, scopesHeader);
        }
    }

    /** The commit sequence a delta carries, after checking it is one commit of {@code s1}. */
    static long deltaSeq(byte[] tagged) {
        assertEquals(0x00, tagged[0]);
        List<Frame> f = MessageDecoder.decodeResponse(Arrays.copyOfRange(tagged, 1, tagged.length))
                .frames();
        CommitFrame commit = assertInstanceOf(CommitFrame.class, f.get(2));
        assertEquals(
                commit.commitSeq(), assertInstanceOf(SubEnd.class, f.get(3)).nextCursor());
        return commit.commitSeq();
    }

    /** A socket that acks every delta at once and records their commit sequences; any wake-up is recorded too. */
    static final class Reader extends Thread {
        final RealtimeSocket socket;
        final List<Long> seqs = Collections.synchronizedList(new ArrayList<>());
        final AtomicReference<String> wake = new AtomicReference<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicBoolean stop = new AtomicBoolean();

        Reader(RealtimeSocket socket) {
            this.socket = socket;
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                while (!stop.get()) {
                    byte[] b = socket.binaries.poll(100, TimeUnit.MILLISECONDS);
                    String t;
                    while ((t = socket.texts.poll()) != null) {
                        if ("sync"
                                .equals(ControlMessages.readTree(t)
                                        .path("event")
                                        .asText())) {
                            wake.compareAndSet(null, t);
                        }
                    }
                    if (b != null) {
                        long seq = deltaSeq(b);
                        seqs.add(seq);
                        socket.ack(seq);
                    }
                }
            } catch (Throwable e) {
                failure.set(e);
            }
        }

        /** Waits (bounded) until the reader has seen {@code seq}. */
        void awaitSeq(long seq) {
            long deadline = System.nanoTime() + RealtimeSocket.WAIT.toNanos();
            while (seqs.isEmpty() || seqs.get(seqs.size() - 1) < seq) {
                assertTrue(System.nanoTime() < deadline, "reader never saw commit " + seq + "; wake " + wake.get());
                assertEquals(null, failure.get());
                Thread.onSpinWait();
            }
        }
    }

    /**
     * §8.7: 200 times, A pushes a row through its own socket round and acks the round (the §8.2 post-round ack
     * point). The round's commit is covered by its own pull: A never receives it — or anything — as a delta,
     * whenever its notification arrives. B, a reader on the same scope, receives each of A's commits exactly
     * once, in commit order.
     */
    @Test
    void pushingThroughOwnRoundNeverEchoesTheCommit() throws Exception {
        SyncTestClient b = client("bob", http());
        b.syncUntilIdle();
        RealtimeSocket bs = RealtimeSocket.connect(base.toString(), partition, b.actorId, b.clientId);
        JsonNode bHello = bs.nextEvent("hello").get("data");
        assertFalse(bHello.get("requiresSync").asBoolean());
        Reader reader = new Reader(bs);
        reader.start();

        SyncTestClient probe = client("alice", http());
        RealtimeSocket as = RealtimeSocket.connect(base.toString(), partition, probe.actorId, probe.clientId);
        as.nextEvent("hello");
        SyncTestClient a =
                new SyncTestClient(window.current(), new SocketTransport(as, http()), probe.actorId, probe.clientId);
        a.subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
        a.syncUntilIdle();
        as.ack(a.subscriptions.get("s1").cursor);
        List<Long> pushed = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            String id = a.upsert("todos", todo("r" + i), null);
            Message response = a.sync();
            PushResult result = response.frames().stream()
                    .filter(f -> f instanceof PushResult)
                    .map(f -> (PushResult) f)
                    .filter(r -> r.clientCommitId().equals(id))
                    .findFirst()
                    .orElseThrow();
            pushed.add(result.commitSeq());
            long cursor = a.subscriptions.get("s1").cursor;
            assertTrue(cursor >= result.commitSeq(), "the round's pull covers its own commit");
            as.ack(cursor);
        }
        reader.awaitSeq(pushed.get(pushed.size() - 1));
        // a last round: every message A was sent before its answer has arrived by then
        a.sync();
        reader.stop.set(true);
        reader.join();
        assertEquals(null, reader.failure.get());
        assertEquals(null, reader.wake.get(), "the reader kept up: no wake-up");
        assertEquals(pushed, reader.seqs, "every commit once, in order");
        List<Long> echoed = new ArrayList<>();
        for (byte[] d : as.deltasBesideRounds) {
            echoed.add(deltaSeq(d));
        }
        for (byte[] d : as.binaries) {
            echoed.add(deltaSeq(d));
        }
        assertEquals(List.of(), echoed, "no delta for a commit the connection's own rounds answered");
        as.ws.abort();
        bs.ws.abort();
    }

    /**
     * §8.1 with commits flowing: 250 times, C connects while W commits back to back. A {@code hello} with
     * {@code requiresSync: false} promises continuity: the next three commits must arrive as deltas, contiguous
     * from the hello's cursor, with no wake-up. With {@code requiresSync: true} the hello's {@code latestCursor}
     * is past its cursor (it is true), and C catches up: a pull over HTTP, then the ack that stores its cursor.
     */
    @Test
    void connectingDuringCommitsLosesNothing() throws Exception {
        SyncTestClient w = client("walt", http());
        w.syncUntilIdle();
        SyncTestClient c = client("carol", http());
        c.syncUntilIdle(); // bootstrapped before the commits start: each later pull is incremental
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> writerFailure = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            try {
                for (int i = 0; !stop.get(); i++) {
                    w.upsert("todos", todo("w" + i), null);
                    w.sync();
                }
            } catch (Throwable e) {
                writerFailure.set(e);
            }
        });
        writer.setDaemon(true);
        writer.start();
        int promised = 0;
        int told = 0;
        try {
            for (int i = 0; i < 250; i++) {
                RealtimeSocket s = RealtimeSocket.connect(base.toString(), partition, c.actorId, c.clientId);
                JsonNode hello = s.nextEvent("hello").get("data");
                long cursor = hello.get("cursor").asLong();
                if (hello.get("requiresSync").asBoolean()) {
                    assertTrue(hello.get("latestCursor").asLong() > cursor, "requiresSync only when behind: " + hello);
                    // the catch-up of §8.1: a pull, then its ack (§8.2 post-pull ack point) stores the cursor
                    c.sync();
                    s.ack(c.subscriptions.get("s1").cursor);
                    told++;
                } else {
                    assertEquals(cursor, hello.get("latestCursor").asLong());
                    for (long next = cursor + 1; next <= cursor + 3; next++) {
                        byte[] b = s.binaries.poll(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS);
                        String wake = s.texts.stream()
                                .filter(t -> t.contains("\"sync\""))
                                .findFirst()
                                .orElse(null);
                        assertEquals(null, wake, "a commit went missing after hello said requiresSync: false");
                        assertTrue(b != null, "no delta for commit " + next);
                        assertEquals(next, deltaSeq(b), "deltas contiguous from the hello's cursor");
                        s.ack(next);
                    }
                    c.subscriptions.get("s1").cursor = cursor + 3;
                    promised++;
                }
                s.ws.abort();
                assertEquals(null, writerFailure.get());
            }
        } finally {
            stop.set(true);
            writer.join();
        }
        assertEquals(null, writerFailure.get());
        assertEquals(250, promised + told);
        assertTrue(promised > 0, "some connects happened with nothing to catch up (" + told + " were behind)");
    }
}
