package dev.syncular.server.realtime;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.round.RequestIntake;
import dev.syncular.server.round.RoundFailure;
import dev.syncular.server.round.RoundResponse;
import dev.syncular.server.round.SyncRound;
import dev.syncular.server.storage.StorageBusy;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.wire.ErrorFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.ReqHeader;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionStatus;
import dev.syncular.server.wire.realtime.ChannelTag;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import java.util.Iterator;
import java.util.List;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * §8.7 socket rounds of one connection — the socket framing of the one round handler ({@link SyncRound}):
 * {@code 0x01} chunks are fed to the round's intake ({@link RequestIntake}, the one {@code POST /sync} feeds its
 * body's chunks to: under the cap and the buffer budget, decoded as each
 * message arrives: a round may come as one message or as many, a fragmented message whole as the transport
 * reassembles it, {@link SocketMessageLimits}) until its {@code END}, the request runs through the round as
 * {@code POST /sync}'s does, and the response leaves as {@code 0x01} chunks of the identity-coded response body
 * ({@link RoundResponse}). A request-level failure answers the minimal stream {@code RESP_HEADER, ERROR, END}.
 * Connection-fatal (the caller closes): an invalid envelope header, bytes past a request's {@code END}, round bytes
 * while a response is in flight, a decode error (the stream's end can no longer be found) — and, with its own
 * close code, a request over {@code syncular.max-request-bytes} ({@link Outcome#TOO_LARGE}).
 */
final class SocketRound {
    private static final Logger LOG = Logger.getLogger(SocketRound.class);

    /** What the caller does after a chunk. */
    enum Outcome {
        CONTINUE,
        /** A §8.7 protocol violation: the stream cannot go on (1002). */
        CLOSE,
        /**
         * The request passed {@code syncular.max-request-bytes}: closed with 1009 (message too big, RFC 6455 §7.4.1)
         * and a reason naming {@code sync.invalid_request}, not answered in-band. §8.7 answers in-band what HTTP
         * answers as a §1.7 decode or request-validation failure; the byte cap is neither but the transport's limit,
         * which HTTP answers 413 before it reads the body. An in-band answer could only follow the request's
         * {@code END} (the next {@code 0x01} message after a response's {@code END} begins a new round, §8.7), so
         * the pod would have to read the rest of an over-cap request, however long; 1009 is the socket's 413.
         */
        TOO_LARGE
    }

    /** §8.7: a socket round's response is identity-coded (a transport compression is the socket's own). */
    static final String IDENTITY = "identity";

    private final long maxRequestBytes;
    private final StorageBusy storageBusy;
    /** The request arriving, under the cap and the pod's buffer budget; {@code null} between rounds. */
    private RequestIntake request;

    SocketRound(long maxRequestBytes, StorageBusy storageBusy) {
        this.maxRequestBytes = maxRequestBytes;
        this.storageBusy = storageBusy;
    }

    /**
     * Feeds one {@code 0x01} payload; when it completes the request, runs the round and streams its response.
     * {@code onEnd} runs once the round's frames are planned, before its response is sent (told whether the
     * round succeeded and carried a {@code PULL_HEADER}).
     */
    Outcome chunk(
            RealtimeSession session,
            SyncEngine engine,
            BufferBudget budget,
            byte[] payload,
            int offset,
            Function<Boolean, Uni<Void>> onEnd) {
        if (session.roundInFlight()) {
            LOG.debug("Round bytes while a response is in flight");
            return Outcome.CLOSE; // §8.7: no pipelining — round bytes while a response is in flight
        }
        SyncRound round = new SyncRound(engine, maxRequestBytes, budget);
        if (request == null) {
            request = round.streamIntake();
        }
        RequestIntake.Fed fed = request.feed(payload, offset);
        if (fed == RequestIntake.Fed.FATAL || fed == RequestIntake.Fed.TOO_LARGE) {
            request = null;
            LOG.debugf("Socket round stream refused (%s)", fed == RequestIntake.Fed.FATAL ? "framing" : "over the cap");
            return fed == RequestIntake.Fed.FATAL ? Outcome.CLOSE : Outcome.TOO_LARGE;
        }
        if (fed == RequestIntake.Fed.MORE) {
            return Outcome.CONTINUE;
        }
        RequestIntake held = request;
        request = null;
        if (!session.beginRound()) {
            held.release();
            return Outcome.CLOSE;
        }
        boolean[] pulls = new boolean[1];
        held.request()
                .chain(m -> {
                    pulls[0] = m.frames().stream().anyMatch(f -> f instanceof PullHeader);
                    return ((ReqHeader) m.frames().get(0)).clientId().equals(session.clientId)
                            ? round.handle(session.ctx, m)
                            : Uni.createFrom()
                                    .failure(new SyncError(
                                            ErrorCode.INVALID_CLIENT_ID,
                                            "REQ_HEADER.clientId differs from the connection's clientId"));
                })
                .onTermination()
                .invoke(held::release)
                .onFailure()
                .recoverWithItem(e -> failure(session, e))
                .subscribe()
                .with(
                        planned -> {
                            boolean ok = planned.stream().noneMatch(f -> f instanceof ErrorFrame);
                            // §8.7 / §8.2: the commits this round answers are its own, never deltas, however late their
                            // notifications arrive; recorded while the round is still in flight
                            session.roundPlanned(pushed(planned), ok && pulls[0] ? pulled(planned) : -1);
                            // the planned response is held against the pod's buffer budget until it is written
                            RoundResponse response = round.response(planned, IDENTITY);
                            // the client record was written by the round: registrations are replaced before the
                            // response leaves, and the round is over (no longer in flight) exactly as its last chunk
                            // is sent
                            onEnd.apply(ok && pulls[0])
                                    .chain(() -> stream(session, response.iterator()))
                                    .onTermination()
                                    .invoke(response::release)
                                    .subscribe()
                                    .with(v -> {}, e -> {
                                        // the client sees the socket close and retries the round
                                        session.failures.report(
                                                RealtimeFailures.Kind.ROUND_WRITE, e, session.connection());
                                        session.connection()
                                                .close()
                                                .subscribe()
                                                .with(
                                                        x -> {},
                                                        y -> session.failures.report(
                                                                RealtimeFailures.Kind.CLOSE, y, session.connection()));
                                    });
                        },
                        e -> session.failures.failed(RealtimeFailures.Kind.ROUND, e));
        return Outcome.CONTINUE;
    }

    /** The connection closed: a request still arriving holds nothing any more. */
    void closed() {
        if (request != null) {
            request.release();
        }
    }

    /** Sends the chunks one after the other, each after the previous write completed (bounded buffering). */
    private static Uni<Void> stream(RealtimeSession session, Iterator<Buffer> chunks) {
        if (!chunks.hasNext()) {
            return Uni.createFrom().voidItem();
        }
        Buffer chunk = chunks.next();
        Buffer tagged = Buffer.buffer(chunk.length() + 1)
                .appendByte((byte) ChannelTag.ROUND)
                .appendBuffer(chunk);
        if (!chunks.hasNext()) {
            // the response's END: the next 0x01 message begins a new round, deltas may follow this chunk
            return session.endRound(tagged);
        }
        return session.sendRound(tagged).chain(() -> stream(session, chunks));
    }

    /** The highest {@code commitSeq} of the round's push results (-1 without). */
    static long pushed(List<Frame> planned) {
        long max = -1;
        for (Frame f : planned) {
            if (f instanceof PushResult r && r.commitSeq() != null) {
                max = Math.max(max, r.commitSeq());
            }
        }
        return max;
    }

    /**
     * What the round's pull hands the client (§8.2 ack point): the lowest {@code SUB_END.nextCursor} of its
     * active sections that end complete (no resume token); -1 without any.
     */
    static long pulled(List<Frame> planned) {
        long min = Long.MAX_VALUE;
        boolean active = false;
        for (Frame f : planned) {
            if (f instanceof SubStart start) {
                active = start.status() == SubscriptionStatus.ACTIVE;
            } else if (f instanceof SubEnd end && active) {
                if (end.bootstrapState() == null) {
                    min = Math.min(min, end.nextCursor());
                }
                active = false;
            }
        }
        return min == Long.MAX_VALUE ? -1 : min;
    }

    /**
     * §8.7: a request-level failure as the minimal response stream {@code RESP_HEADER, ERROR, END}, mapped as
     * {@code POST /sync} maps it ({@link RoundFailure}); anything outside the catalogue is logged here only.
     */
    private List<Frame> failure(RealtimeSession session, Throwable e) {
        RoundFailure failure = RoundFailure.of(e, storageBusy);
        if (failure.internal()) {
            LOG.error("Socket round failed; answered as sync.internal_error", e);
        }
        return SyncRound.failed(failure, session.logEpoch);
    }
}
