package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.realtime.ControlMessage;
import dev.syncular.server.wire.realtime.ControlMessages;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Appendix B 11 (d), §8.7 "Interleaving", run many times over real sockets: a commit that lands while a client's
 * socket round is in flight reaches that client as a {@code catchup-required} wake-up, never as a delta — no
 * {@code 0x00} message inside the round's response stream, no delta for a commit the round's response carries, at
 * least one wake-up for a commit of the round's window — and deltas resume after the ack that covers them. Shared by
 * the one-pod test ({@link RealtimeInterleavingTest}) and the two-pod one ({@link TwoPodRealtimeIT}).
 *
 * <p>The number of runs is {@code -Dinterleaving.runs} (default {@value #DEFAULT_RUNS}); with
 * {@code -Dinterleaving.busy=true} a busy-loop thread per core runs beside them (the CPU saturated). Not under
 * {@code syncular.}: the app refuses unknown keys of its own prefix, and the test JVM's system properties are its
 * configuration too. Each
 * test prints how often each outcome occurred.
 */
final class InterleavingRuns {
    static final int DEFAULT_RUNS = 20;
    /** Commits of the second scope each round's pull replays, so its response streams for a while. */
    static final int REPLAYED = 1000;

    private InterleavingRuns() {}

    static int runs() {
        return Integer.getInteger("interleaving.runs", DEFAULT_RUNS);
    }

    /** Saturates every core with a busy loop until closed, when {@code -Dinterleaving.busy=true}. */
    static AutoCloseable busyCpu() {
        if (!Boolean.getBoolean("interleaving.busy")) {
            return () -> {};
        }
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
            Thread t = new Thread(() -> {
                long x = 0;
                while (!stop.get()) {
                    x += System.nanoTime() % 7;
                }
                if (x == 42) {
                    System.out.print("");
                }
            });
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        return () -> {
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
        };
    }

    static Map<String, Object> todo(String id, String list) {
        return Map.of(
                "id", id, "list_id", list, "title", "t " + id, "done", false, "position", 1L, "updated_at_ms", 1L);
    }

    /** How one run ended, counted per test. */
    static final class Outcomes {
        private final Map<String, Integer> counts = new TreeMap<>();
        private long chunks;
        private long streamNanos;
        private int rounds;

        void add(String outcome) {
            counts.merge(outcome, 1, Integer::sum);
        }

        /** The round under test: its response's chunks and how long they took to arrive. */
        void stream(Round r) {
            chunks += r.chunks();
            streamNanos += r.nanos();
            rounds++;
        }

        void print(String test) {
            System.out.println("[interleaving] " + test + ": "
                    + counts.values().stream().mapToInt(i -> i).sum() + " runs, busy CPU "
                    + Boolean.getBoolean("interleaving.busy") + ": " + counts
                    + (rounds == 0
                            ? ""
                            : String.format(
                                    " (responses of %d chunks arriving over %.2f ms on average)",
                                    chunks / rounds, streamNanos / 1e6 / rounds)));
        }
    }

    /**
     * What a client saw of one of its socket rounds, from the request sent to the response's {@code END}: the
     * response, the deltas before its first chunk (the server may have sent them as the request arrived, §8.7) and
     * inside its stream (none allowed), and whether a wake-up came meanwhile.
     */
    record Round(
            byte[] response,
            List<Long> deltasBefore,
            List<Long> deltasInStream,
            boolean wake,
            int chunks,
            long nanos) {}

    /**
     * A client syncing over its socket (§8.7), every message read in arrival order: A of the scenarios. Its
     * subscriptions are {@code s1} ({@code list:l1}, where the commits under test land) and {@code s2}
     * ({@code list:l2}, the replayed commits).
     */
    static final class Client implements SyncTestClient.Transport {
        final RealtimeSocket socket;
        final SyncTestClient sync;
        private final HttpTransport http;
        /** What the last round saw ({@link #roundTrip}). */
        Round last;
        /** Wake-ups and deltas read outside rounds, not consumed yet. */
        private final List<Long> pendingDeltas = new ArrayList<>();

        private boolean pendingWake;

        Client(CompiledSchema schema, String baseUrl, String partition, String actor) throws InterruptedException {
            String clientId = "c-" + actor + "-" + UUID.randomUUID();
            this.http = new HttpTransport(baseUrl, partition);
            this.socket = RealtimeSocket.connectInOrder(baseUrl + "/", partition, actor, clientId);
            this.sync = new SyncTestClient(schema, this, actor, clientId);
            sync.subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
            sync.subscribe("s2", "todos", Map.of("list_id", List.of("l2")));
            sync.limitCommits = 10_000;
            JsonNode hello = next(RealtimeSocket.WAIT.toNanos());
            assertNotNull(hello, "no hello");
            assertEquals("hello", hello.path("event").asText());
        }

        /** §8.7: the request as one message; the response read until its END, everything in arrival order. */
        @Override
        public byte[] roundTrip(SyncTestClient client, byte[] request) {
            try {
                return round(request);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
            return http.downloadSegment(client, segmentId, scopesHeader);
        }

        /** One round of {@link #sync} over the socket. */
        Message sync() {
            return sync(null, null);
        }

        /**
         * One round of {@link #sync} over the socket: {@code sent} runs once its request is sent, {@code firstChunk}
         * once its response's first chunk came (each may be {@code null}).
         */
        Message sync(Runnable sent, Runnable firstChunk) {
            onSent = sent;
            onFirstChunk = firstChunk;
            try {
                return sync.sync();
            } finally {
                onSent = null;
                onFirstChunk = null;
            }
        }

        private Runnable onSent;
        private Runnable onFirstChunk;

        private byte[] round(byte[] request) throws InterruptedException {
            socket.sendOneMessage(request, 0);
            if (onSent != null) {
                onSent.run();
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            MessageDecoder decoder = MessageDecoder.forResponses();
            List<Long> deltasBefore = new ArrayList<>();
            List<Long> deltasInStream = new ArrayList<>();
            boolean wake = false;
            boolean streaming = false;
            int chunks = 0;
            long firstAt = 0;
            long deadline = System.nanoTime() + RealtimeSocket.WAIT.toNanos();
            while (!decoder.isComplete()) {
                RealtimeSocket.Received m =
                        socket.inOrder.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                assertNotNull(
                        m,
                        "no round response chunk; the socket closed: " + socket.closed.isDone() + " "
                                + socket.closeReason());
                if (m.isText()) {
                    wake |= isWake(m.text());
                    continue;
                }
                byte[] b = m.binary();
                if (b[0] == 0x00) {
                    (streaming ? deltasInStream : deltasBefore).addAll(deltaSeqs(b));
                    continue;
                }
                assertEquals(0x01, b[0], "a channel tag of the server (§8.7)");
                chunks++;
                if (!streaming) {
                    streaming = true;
                    firstAt = System.nanoTime();
                    if (onFirstChunk != null) {
                        onFirstChunk.run();
                    }
                }
                out.write(b, 1, b.length - 1);
                decoder.feed(b, 1, b.length - 1);
            }
            last = new Round(
                    out.toByteArray(), deltasBefore, deltasInStream, wake, chunks, System.nanoTime() - firstAt);
            return last.response();
        }

        /**
         * Reads until a wake-up or a delta carrying {@code seq} arrived (or {@code nanos} passed); what was read
         * before is kept for {@link #takeDeltas}/{@link #takeWake}. Whether one of the two arrived.
         */
        boolean awaitWakeOrDelta(long seq, long nanos) throws InterruptedException {
            long deadline = System.nanoTime() + nanos;
            while (!pendingWake && !pendingDeltas.contains(seq)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                next(left);
            }
            return true;
        }

        /** Reads the next message (outside a round): a text's parsed JSON, {@code null} for a delta or nothing. */
        private JsonNode next(long nanos) throws InterruptedException {
            RealtimeSocket.Received m = socket.inOrder.poll(nanos, TimeUnit.NANOSECONDS);
            if (m == null) {
                return null;
            }
            if (m.isText()) {
                if (isWake(m.text())) {
                    pendingWake = true;
                }
                return ControlMessages.readTree(m.text());
            }
            byte[] b = m.binary();
            assertEquals(0x00, b[0], "outside a round only deltas are binary");
            pendingDeltas.addAll(deltaSeqs(b));
            return null;
        }

        /**
         * §8.2 ack of {@code cursor}, returning once the session has applied it: a presence publish to a scope key
         * the connection does not hold follows it, and its {@code forbidden} answer (§8.6.3), written in order after
         * the ack was handled, is awaited. What arrives meanwhile is kept.
         */
        void ack(long cursor) throws InterruptedException {
            socket.ack(cursor);
            String fence = "list:fence-" + UUID.randomUUID();
            socket.send(new ControlMessage.PresencePublish(fence, JsonNodeFactory.instance.objectNode()));
            long deadline = System.nanoTime() + RealtimeSocket.WAIT.toNanos();
            while (true) {
                long left = deadline - System.nanoTime();
                assertTrue(left > 0, "the ack's fence was never answered");
                JsonNode n = next(left);
                if (n != null
                        && "presence".equals(n.path("event").asText())
                        && fence.equals(n.path("data").path("scopeKey").asText())) {
                    return;
                }
            }
        }

        List<Long> takeDeltas() {
            List<Long> out = new ArrayList<>(pendingDeltas);
            pendingDeltas.clear();
            return out;
        }

        boolean takeWake() {
            boolean w = pendingWake;
            pendingWake = false;
            return w;
        }

        /** The §8.2 ack point after a round: the lowest cursor of the subscriptions, applied ({@link #ack}). */
        void ackFloor() throws InterruptedException {
            ack(Math.min(sync.subscriptions.get("s1").cursor, sync.subscriptions.get("s2").cursor));
        }

        /** Waits (bounded) for the next delta; fails on a wake-up meanwhile (the session still suppressed). */
        long nextDelta() throws InterruptedException {
            long deadline = System.nanoTime() + RealtimeSocket.WAIT.toNanos();
            while (pendingDeltas.isEmpty()) {
                assertFalse(pendingWake, "a wake-up where a delta was due: deltas did not resume after the ack");
                long left = deadline - System.nanoTime();
                assertTrue(left > 0, "no delta");
                next(left);
            }
            assertFalse(pendingWake, "a wake-up beside the delta: deltas did not resume after the ack");
            return pendingDeltas.remove(0);
        }
    }

    static boolean isWake(String text) {
        JsonNode n = ControlMessages.readTree(text);
        if (!"sync".equals(n.path("event").asText())) {
            return false;
        }
        assertEquals("catchup-required", n.get("data").get("reason").asText(), text);
        return true;
    }

    /** The commit sequences a {@code 0x00} delta carries. */
    static List<Long> deltaSeqs(byte[] tagged) {
        List<Long> seqs = new ArrayList<>();
        for (Frame f : MessageDecoder.decodeResponse(Arrays.copyOfRange(tagged, 1, tagged.length))
                .frames()) {
            if (f instanceof CommitFrame c) {
                seqs.add(c.commitSeq());
            }
        }
        return seqs;
    }

    /** The commit sequences a response carries. */
    static List<Long> commitsIn(byte[] response) {
        List<Long> seqs = new ArrayList<>();
        for (Frame f : MessageDecoder.decodeResponse(response).frames()) {
            if (f instanceof CommitFrame c) {
                seqs.add(c.commitSeq());
            }
        }
        return seqs;
    }

    static long pushedSeq(Message response, String clientCommitId) {
        for (Frame f : response.frames()) {
            if (f instanceof PushResult r && r.clientCommitId().equals(clientCommitId)) {
                assertTrue(SyncTestClient.applied(r), r.toString());
                return r.commitSeq();
            }
        }
        throw new AssertionError("no PUSH_RESULT for " + clientCommitId);
    }

    /**
     * A: connected first, then synced over its socket (connect-then-sync, §8.1), after {@code replayed} commits of
     * {@code list:l2} by a writer over HTTP (its rounds replay them, a response of many chunks); its post-round ack
     * sent. B: the writer of {@code list:l1} over HTTP on {@code writerBase}.
     */
    static Client prepare(CompiledSchema schema, String base, String partition, int replayed) throws Exception {
        SyncTestClient carol =
                new SyncTestClient(schema, new HttpTransport(base, partition), "carol", "c-carol-" + UUID.randomUUID());
        carol.syncUntilIdle();
        for (int i = 0; i < replayed; i++) {
            carol.upsert("todos", todo("r" + i, "l2"), null);
            if (carol.outbox.size() == 250 || i == replayed - 1) {
                carol.syncUntilIdle(); // a request carries at most 500 operations (§6.1)
            }
        }
        Client a = new Client(schema, base, partition, "alice");
        a.sync.syncUntilIdle();
        a.ackFloor();
        a.takeDeltas();
        a.takeWake();
        return a;
    }

    /**
     * (1) A's own push inside its socket round: no delta inside the stream, never a delta of the pushed commit, a
     * wake-up for it in every run (its notification is heard during the round or after it, before or after the
     * post-round ack, which A sends at once as the reference client does), and after it the next commit of another
     * client is a delta.
     */
    static void ownPush(Client a, SyncTestClient b, int runs, Outcomes outcomes) throws Exception {
        for (int i = 0; i < runs; i++) {
            String id = a.sync.upsert("todos", todo("own" + i, "l1"), null);
            Message response = a.sync();
            Round r = a.last;
            outcomes.stream(r);
            long seq = pushedSeq(response, id);
            assertEquals(List.of(), r.deltasInStream(), "run " + i + ": a delta inside the response stream");
            assertTrue(a.sync.subscriptions.get("s1").cursor >= seq, "the round's pull covers its own commit");
            assertFalse(r.deltasBefore().contains(seq), "run " + i + ": the round's own commit as a delta");
            a.ackFloor(); // at once, as the reference client does (§8.2 ack point)
            boolean inRound = r.wake();
            assertTrue(
                    inRound || a.awaitWakeOrDelta(seq, RealtimeSocket.WAIT.toNanos()),
                    "run " + i + ": no wake-up for the round's own commit " + seq);
            List<Long> deltas = a.takeDeltas();
            assertFalse(deltas.contains(seq), "run " + i + ": the round's own commit came back as a delta");
            assertTrue(a.takeWake() || inRound, "run " + i + ": a delta instead of a wake-up: " + deltas);
            outcomes.add(inRound ? "wake during the round" : "wake after END");
            deltasResume(a, b, i, seq);
        }
    }

    /**
     * (2)/(3) B's push over HTTP — answered just before A's round starts, started as A's request leaves, or started as
     * A's response starts streaming, in turn — while A's round replays {@value #REPLAYED} commits of {@code list:l2}.
     * No delta inside the stream. A delta before the round only when the server fanned the commit out before it saw
     * A's request (§8.7's race). Otherwise the commit reaches A once as data — in the response, as a delta after its
     * END, or in the round a wake-up asked for — never twice; a wake-up whenever it is not a delta (always when the
     * response carries it). After the catch-up round and its ack, the next commit is a delta.
     */
    static void othersPush(Client a, SyncTestClient b, int runs, Outcomes outcomes) throws Exception {
        for (int i = 0; i < runs; i++) {
            a.sync.subscriptions.get("s2").cursor = 0; // the round replays list:l2: a response of many chunks
            String row = "m" + i;
            CompletableFuture<Long> pushed = new CompletableFuture<>();
            Runnable push = () -> CompletableFuture.runAsync(() -> {
                try {
                    String id = b.upsert("todos", todo(row, "l1"), null);
                    pushed.complete(pushedSeq(b.sync(), id));
                } catch (Throwable e) {
                    pushed.completeExceptionally(e);
                }
            });
            // B's push: answered just before A's round starts (the window's edge), started as A's request leaves, or
            // started as A's response starts streaming — in turn
            int mode = i % 3;
            if (mode == 0) {
                push.run();
                pushed.get(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS);
            }
            a.sync(mode == 1 ? push : null, mode == 2 ? push : null);
            String when = new String[] {
                                "push answered before A's request",
                                "push as A's request left",
                                "push at A's first chunk"
                            }
                            [mode]
                    + ": ";
            Round r = a.last;
            outcomes.stream(r);
            long seq = pushed.get(RealtimeSocket.WAIT.toSeconds(), TimeUnit.SECONDS);
            assertEquals(List.of(), r.deltasInStream(), "run " + i + ": a delta inside the response stream");
            if (r.deltasBefore().contains(seq)) {
                // §8.7's race: the commit was fanned out before the server saw A's request (a starved event loop):
                // a delta ahead of the response, which may carry it again (a duplicate A skips, §8.2); none after
                assertFalse(r.wake(), "run " + i + ": a wake-up for a commit delivered before the round");
                a.ackFloor();
                outcomes.add(when + "delta before the round");
                deltasResume(a, b, i, seq);
                continue;
            }
            boolean inResponse = commitsIn(r.response()).contains(seq);
            a.ackFloor(); // at once, as the reference client does (§8.2 ack point)
            boolean inRound = r.wake();
            assertTrue(
                    inRound || a.awaitWakeOrDelta(seq, RealtimeSocket.WAIT.toNanos()),
                    "run " + i + ": commit " + seq + " reached A neither as a delta nor as a wake-up");
            List<Long> deltas = a.takeDeltas();
            boolean woken = inRound | a.takeWake();
            boolean asDelta = deltas.contains(seq);
            assertTrue(deltas.stream().filter(d -> d == seq).count() <= 1, "run " + i + ": a delta twice");
            if (inResponse) {
                assertFalse(asDelta, "run " + i + ": commit " + seq + " in the response and as a delta");
                assertTrue(woken, "run " + i + ": commit " + seq + " of the round's window without a wake-up");
            }
            if (asDelta) {
                // a delta after the response's END, contiguous with what the round pulled: applied (§8.2)
                a.sync.subscriptions.get("s1").cursor = Math.max(a.sync.subscriptions.get("s1").cursor, seq);
            }
            boolean inCatchUp = false;
            if (woken) {
                // the wake-up's round (§8.3): pulls what the first did not carry; its ack lifts the suppression
                a.sync();
                assertEquals(List.of(), a.last.deltasInStream(), "run " + i + ": a delta inside a catch-up round");
                assertFalse(a.last.deltasBefore().contains(seq), "run " + i + ": a delta of " + seq + " after all");
                inCatchUp = commitsIn(a.last.response()).contains(seq);
                a.takeWake();
            }
            a.ackFloor();
            assertEquals(
                    1,
                    (inResponse ? 1 : 0) + (asDelta ? 1 : 0) + (inCatchUp ? 1 : 0),
                    "run " + i + ": commit " + seq + " reached A once as data (response " + inResponse + ", delta "
                            + asDelta + ", catch-up round " + inCatchUp + ")");
            assertFalse(a.takeDeltas().contains(seq), "run " + i + ": a delta of " + seq + " after all");
            a.takeWake();
            outcomes.add(when
                    + (inResponse ? "in the response" : "after the pull")
                    + (inRound ? ", wake during the round" : woken ? ", wake after END" : ", delta after END"));
            deltasResume(a, b, i, seq);
        }
    }

    /** B commits again: A, caught up and acked, gets it as its next delta, and never {@code notAgain} (§8.2). */
    private static void deltasResume(Client a, SyncTestClient b, int run, long notAgain) throws Exception {
        String id = b.upsert("todos", todo("x" + UUID.randomUUID(), "l1"), null);
        long next = pushedSeq(b.sync(), id);
        long delta = a.nextDelta();
        assertTrue(delta != notAgain, "run " + run + ": commit " + notAgain + " twice");
        assertEquals(next, delta, "run " + run + ": deltas resume with the next commit");
        a.sync.subscriptions.get("s1").cursor = next;
        a.sync.subscriptions.get("s2").cursor = Math.max(a.sync.subscriptions.get("s2").cursor, next);
        a.ack(next);
    }
}
