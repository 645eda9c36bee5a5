package dev.syncular.server.round;

import dev.syncular.server.errors.SyncError;
import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.WireException;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.List;

/**
 * A round's request arriving in chunks, as the socket brings it (§8.7): each chunk is counted under the cap
 * and the buffer budget ({@link BodyIntake}) and fed to the request decoder, which keeps the stream's framing
 * through a decode error so the request's {@code END} is still found.
 *
 * <p>{@link #feed} answers {@link Fed#MORE} until the {@code END}, then {@link Fed#COMPLETE} — {@link #request}
 * is then the decoded request, or its in-band failure: a decode error, or {@code sync.rate_limited} when the
 * budget could not hold the request (its frames are then dropped as they arrive; the round is answered at its
 * end). {@link Fed#FATAL} when the stream's end can no longer be found, {@link Fed#TOO_LARGE} when the request
 * exceeds the cap ({@code syncular.max-request-bytes}, as {@code POST /sync}'s body): the framing closes the stream,
 * holding nothing. One request per instance; used by one thread at a time.
 */
public final class RequestStream {
    /** What a chunk did to the request. */
    public enum Fed {
        MORE,
        COMPLETE,
        /** The stream's end cannot be found (a bad envelope header, bytes past {@code END}). */
        FATAL,
        /** More bytes than the round's cap arrived (HTTP answers the same body 413). */
        TOO_LARGE
    }

    private final MessageDecoder decoder = MessageDecoder.forRequestsKeepingFraming();
    private final List<Frame> frames = new ArrayList<>();
    private final BodyIntake intake;
    /** The budget's refusal, once it ran out ({@code null} while the request is held). */
    private SyncError refused;

    /** A request of at most {@code round}'s cap, held against {@code budget} as it arrives. */
    public RequestStream(SyncRound round, BufferBudget budget) {
        BufferBudget.Lease lease;
        try {
            lease = budget.open(-1);
        } catch (SyncError spent) {
            lease = budget.unmetered();
            refused = spent;
        }
        this.intake = new BodyIntake(round.maxRequestBytes(), round::tooLarge, lease);
    }

    /** Feeds {@code payload} from {@code offset} on. */
    public Fed feed(byte[] payload, int offset) {
        int length = payload.length - offset;
        try {
            intake.take(length);
        } catch (HttpError over) {
            release();
            return Fed.TOO_LARGE; // over syncular.max-request-bytes
        } catch (SyncError spent) {
            refused = spent; // §8.7/§10.2: the round is answered sync.rate_limited at its END
            release();
            frames.clear();
        }
        try {
            List<Frame> decoded = decoder.feed(payload, offset, length);
            if (refused == null) {
                frames.addAll(decoded);
            }
        } catch (WireException e) {
            release();
            return Fed.FATAL; // a bad envelope header or bytes past END: the stream's end cannot be found
        }
        return decoder.isComplete() ? Fed.COMPLETE : Fed.MORE;
    }

    /**
     * After {@link Fed#COMPLETE}: the request, or its in-band failure (the budget's refusal, or the decode
     * error — §8.7 answers it in the round as HTTP answers it 400).
     */
    public Uni<Message> request() {
        if (refused != null) {
            return Uni.createFrom().failure(refused);
        }
        WireException decodeError = decoder.error();
        return decodeError != null
                ? Uni.createFrom().failure(decodeError)
                : Uni.createFrom().item(Message.request(List.copyOf(frames)));
    }

    /** Gives the request's bytes back to the budget: once its round is planned, or the stream closed. */
    public void release() {
        intake.release();
    }
}
