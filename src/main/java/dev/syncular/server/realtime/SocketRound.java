package dev.syncular.server.realtime;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.http.ResponseBody;
import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.wire.ErrorFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.ReqHeader;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionStatus;
import dev.syncular.server.wire.WireException;
import dev.syncular.server.wire.realtime.ChannelTag;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import java.util.ArrayList;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * §8.7 socket rounds of one connection: {@code 0x01} chunks are fed to the request decoder until its
 * {@code END}, the request runs through {@link SyncEngine#handle} — the very round path of
 * {@code POST /sync} — and the response leaves as {@code 0x01} chunks of the identity-coded response body
 * ({@link ResponseBody#identity}, the HTTP binding's encoder). A request-level failure answers the minimal
 * stream {@code RESP_HEADER, ERROR, END}. Connection-fatal (the caller closes): an invalid envelope header,
 * bytes past a request's {@code END}, round bytes while a response is in flight, a request over
 * {@code syncular.max-request-bytes}, a decode error (the stream's end can no longer be found).
 */
final class SocketRound {
    private static final Logger LOG = Logger.getLogger(SocketRound.class);

    /** What the caller does after a chunk. */
    enum Outcome { CONTINUE, CLOSE }

    private final long maxRequestBytes;
    private MessageDecoder decoder;
    private List<Frame> frames;
    private long received;
    /** The round's share of the pod's buffer budget; {@code refused} once it ran out (frames then dropped). */
    private BufferBudget.Lease lease;
    private SyncError refused;

    SocketRound(long maxRequestBytes) {
        this.maxRequestBytes = maxRequestBytes;
    }

    /**
     * Feeds one {@code 0x01} payload; when it completes the request, runs the round and streams its response.
     * {@code onEnd} runs once the round's frames are planned, before its response is sent (told whether the
     * round succeeded and carried a {@code PULL_HEADER}).
     */
    Outcome chunk(RealtimeSession session, SyncEngine engine, BufferBudget budget, byte[] payload, int offset,
            java.util.function.Function<Boolean, Uni<Void>> onEnd) {
        synchronized (session) {
            if (session.roundInFlight) {
                LOG.debug("Round bytes while a response is in flight");
                return Outcome.CLOSE; // §8.7: no pipelining — round bytes while a response is in flight
            }
        }
        if (decoder == null) {
            decoder = MessageDecoder.forRequestsKeepingFraming();
            frames = new ArrayList<>();
            received = 0;
            refused = null;
            try {
                lease = budget.open(-1);
            } catch (SyncError spent) {
                lease = null;
                refused = spent;
            }
        }
        received += payload.length - offset;
        if (received > maxRequestBytes) {
            release();
            return Outcome.CLOSE;
        }
        if (refused == null) {
            try {
                lease.grow(payload.length - offset); // the request's frames are held until the round is planned
            } catch (SyncError spent) {
                refused = spent; // §8.7/§10.2: the round is answered sync.rate_limited at its END
                release();
                frames.clear();
            }
        }
        try {
            List<Frame> decoded = decoder.feed(payload, offset, payload.length - offset);
            if (refused == null) {
                frames.addAll(decoded);
            }
        } catch (WireException e) {
            release();
            LOG.debugf("Socket round stream refused: %s", e.getMessage());
            return Outcome.CLOSE; // a bad envelope header or bytes past END: the stream's end cannot be found
        }
        if (!decoder.isComplete()) {
            return Outcome.CONTINUE;
        }
        WireException decodeError = decoder.error();
        SyncError spent = refused;
        Message request = decodeError == null && spent == null ? Message.request(frames) : null;
        BufferBudget.Lease held = lease;
        decoder = null;
        frames = null;
        lease = null;
        refused = null;
        synchronized (session) {
            session.roundInFlight = true;
        }
        // §8.7: a decode error of the request message is the round's in-band failure, as HTTP answers it 400
        boolean pulls = request != null
                && request.frames().stream().anyMatch(f -> f instanceof dev.syncular.server.wire.PullHeader);
        Uni<List<Frame>> round = spent != null ? Uni.createFrom().failure(spent)
                : decodeError != null ? Uni.createFrom().failure(decodeError)
                : ((ReqHeader) request.frames().get(0)).clientId().equals(session.clientId)
                ? Uni.createFrom().deferred(() -> engine.handle(session.ctx, request))
                : Uni.createFrom().failure(new SyncError(ErrorCode.INVALID_CLIENT_ID,
                        "REQ_HEADER.clientId differs from the connection's clientId"));
        round.onTermination().invoke(() -> {
                    if (held != null) {
                        held.release();
                    }
                })
                .onFailure().recoverWithItem(e -> failure(session, e))
                .subscribe().with(planned -> {
                    boolean ok = planned.stream().noneMatch(f -> f instanceof ErrorFrame);
                    // §8.7 / §8.2: the commits this round answers are its own, never deltas, however late their
                    // notifications arrive; recorded while the round is still in flight
                    session.roundPlanned(pushed(planned), ok && pulls ? pulled(planned) : -1);
                    // the client record was written by the round: registrations are replaced before the response
                    // leaves, and the round is over (no longer in flight) exactly as its last chunk is sent
                    onEnd.apply(ok && pulls)
                            .chain(() -> stream(session, ResponseBody.identity(planned).iterator()))
                            .subscribe().with(v -> { }, e -> {
                                // the client sees the socket close and retries the round
                                session.failures.report(RealtimeFailures.Kind.ROUND_WRITE, e, session.connection());
                                session.connection().close().subscribe().with(x -> { },
                                        y -> session.failures.report(RealtimeFailures.Kind.CLOSE, y, session.connection()));
                            });
                }, e -> session.failures.failed(RealtimeFailures.Kind.ROUND, e));
        return Outcome.CONTINUE;
    }

    /** The connection closed: a request still arriving holds nothing any more. */
    void closed() {
        release();
    }

    /** Gives the partial round's bytes back to the budget (the connection closes or the round was refused). */
    private void release() {
        if (lease != null) {
            lease.release();
            lease = null;
        }
    }

    /** Sends the chunks one after the other, each after the previous write completed (bounded buffering). */
    private static Uni<Void> stream(RealtimeSession session, java.util.Iterator<io.vertx.core.buffer.Buffer> chunks) {
        if (!chunks.hasNext()) {
            return Uni.createFrom().voidItem();
        }
        io.vertx.core.buffer.Buffer chunk = chunks.next();
        Buffer tagged = Buffer.buffer(chunk.length() + 1).appendByte((byte) ChannelTag.ROUND).appendBuffer(chunk);
        if (!chunks.hasNext()) {
            synchronized (session) {
                // the response's END: the next 0x01 message begins a new round, deltas may follow this chunk
                session.roundInFlight = false;
                return session.sendRound(tagged);
            }
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

    /** §8.7: a request-level failure as the minimal response stream {@code RESP_HEADER, ERROR, END}. */
    private static List<Frame> failure(RealtimeSession session, Throwable e) {
        RealtimeErrors error = RealtimeErrors.of(e);
        ErrorCode code = error.code();
        return List.of(new RespHeader(null, null, session.logEpoch == null ? "" : session.logEpoch, false),
                new ErrorFrame(code.code, error.message(), code.category, code.retryable, code.recommendedAction, null));
    }
}
