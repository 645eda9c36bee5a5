package dev.syncular.server.round;

import dev.syncular.server.errors.SyncError;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.WireException;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.buffer.Buffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A round's request as its bytes arrive — the one intake of both bindings (§1.1, §8.7 "one handler, two
 * framings"): HTTP feeds it the chunks of {@code POST <mount>/sync}'s body as they are read, the socket the
 * payloads of its {@code 0x01} messages. Every chunk is counted under {@code syncular.max-request-bytes} and the
 * pod's buffer budget ({@link BodyIntake}), inflated when the body is gzip-coded (§1.3: the inflated bytes under the
 * same cap and grown on the same lease, {@link GzipInflation}) and fed to the streaming request decoder. The
 * request's frames are held from then on; its bytes are not, but stay counted until {@link #release}.
 *
 * <p>The two framings differ only in where a request ends and how its failures are told:
 *
 * <ul>
 *   <li><b>{@link Framing#BODY}</b> (HTTP): the request ends with the body. Bytes past the cap or the budget make
 *       {@link #feed(Buffer)} throw (413 / 429 {@code sync.rate_limited}: the binding stops reading there). Whatever
 *       is found <i>in</i> the bytes — a decode error, the inflated bytes over the cap or the budget, bad gzip, an
 *       empty or truncated message — is kept and told by {@link #request()} once the body has ended, exactly when a
 *       body decoded whole told it (so the answer still follows the whole body). An identity body's first
 *       {@link SyncRound#INLINE_DECODE_BYTES} are decoded on the caller's event loop (a typical round costs no
 *       hand-off); the rest of a larger body, and all of a gzip one, on the worker pool, one chunk after the other
 *       in order, never blocking the event loop.
 *   <li><b>{@link Framing#STREAM}</b> (socket): the request ends with its {@code END} frame, decoded as each
 *       message arrives. {@link #feed(byte[], int)} answers {@link Fed#MORE} until the {@code END}, then
 *       {@link Fed#COMPLETE}; {@link #request()} is then the decoded request or its in-band failure — a decode
 *       error (the decoder keeps the stream's framing through it), or {@code sync.rate_limited} when the budget could
 *       not hold the request (its frames are dropped as they arrive; the round is answered at its end).
 *       {@link Fed#FATAL} when the stream's end can no longer be found, {@link Fed#TOO_LARGE} past the cap: the
 *       framing closes the stream, holding nothing.
 * </ul>
 *
 * One request per instance.
 */
public final class RequestIntake {
    /** Where a request ends and how its failures are told. */
    public enum Framing {
        /** An HTTP body: ends with the body, failures thrown ({@link #feed(Buffer)}) or told by {@link #request()}. */
        BODY,
        /** A socket round: ends with its {@code END} frame, failures answered by {@link Fed}. */
        STREAM
    }

    /** What a socket chunk did to the request. */
    public enum Fed {
        MORE,
        COMPLETE,
        /** The stream's end cannot be found (a bad envelope header, bytes past {@code END}). */
        FATAL,
        /** More bytes than the round's cap arrived (HTTP answers the same body 413). */
        TOO_LARGE
    }

    /**
     * Stops the inflation of a chunk once the request was released: a few KiB of gzip inflate to megabytes in
     * one {@link GzipInflation#feed}, and a request answered meanwhile (its round refused 429 when a later chunk
     * found the budget spent) must not go on inflating and buffering them with nothing counted — 16 such requests
     * took 158 MB of a 192 MB heap (HostileMemoryIT, heap dump).
     */
    private static final RuntimeException RELEASED = new RuntimeException("request released", null, false, false) {};

    private final SyncRound round;
    private final Framing framing;
    private final BodyIntake bytes;
    private final MessageDecoder decoder;
    private final List<Frame> frames = new ArrayList<>();
    /** The inflation of a gzip body ({@link Framing#BODY} only); {@code null} for an identity one. */
    private final GzipInflation gzip;

    /** The bytes given to the decoder (inflated, for gzip). */
    private long decoded;
    /** The inflated bytes counted on the lease (beside the body's own), given back when the request is refused. */
    private long inflatedHeld;
    /** {@link Framing#STREAM}: the budget's refusal, once it ran out ({@code null} while the request is held). */
    private SyncError refused;
    /** {@link Framing#BODY}: the first failure found in the bytes, told at the body's end ({@code null}: none). */
    private RuntimeException failure;

    /** {@link Framing#BODY}: the decoding moved to the worker pool; from then on every step runs there, in order. */
    private volatile boolean offloaded;
    /** Released: later steps decode nothing. */
    private volatile boolean closed;

    private final Queue<Runnable> steps = new ConcurrentLinkedQueue<>();
    private final AtomicInteger pending = new AtomicInteger();

    RequestIntake(SyncRound round, Framing framing, BodyIntake bytes, ContentCoding coding, SyncError refused) {
        this.round = round;
        this.framing = framing;
        this.bytes = bytes;
        this.refused = refused;
        this.decoder = (framing == Framing.STREAM
                        ? MessageDecoder.forRequestsKeepingFraming()
                        : MessageDecoder.forRequests())
                .accountingBuffer(this::bufferResized);
        this.gzip = coding == ContentCoding.GZIP ? new GzipInflation(this::inflated) : null;
    }

    /** What the decoder holds for a partial frame, in bytes (its buffer's capacity). */
    int bufferedBytes() {
        return decoder.heldBytes();
    }

    /** The counter of the request's bytes under the cap and the budget (a binding reads its rate from it). */
    public BodyIntake bytes() {
        return bytes;
    }

    /**
     * {@link Framing#BODY}: the next chunk of the body, on the request's event loop. Throws the cap's 413 or the
     * budget's {@code sync.rate_limited} at once (the binding stops reading); anything else is told by
     * {@link #request()}.
     */
    public void feed(Buffer chunk) {
        bytes.take(chunk.length());
        if (closed) {
            return;
        }
        byte[] b = chunk.getBytes();
        if (offloaded || gzip != null || bytes.received() > SyncRound.INLINE_DECODE_BYTES) {
            offloaded = true;
            later(() -> decode(b));
        } else {
            decode(b);
        }
    }

    /** {@link Framing#STREAM}: feeds {@code payload} from {@code offset} on, on the connection's event loop. */
    public Fed feed(byte[] payload, int offset) {
        int length = payload.length - offset;
        try {
            bytes.take(length);
        } catch (HttpError over) {
            release();
            return Fed.TOO_LARGE; // over syncular.max-request-bytes
        } catch (SyncError spent) {
            refuse(spent);
        }
        try {
            List<Frame> decodedFrames = decoder.feed(payload, offset, length);
            if (refused == null) {
                frames.addAll(decodedFrames);
            }
        } catch (WireException e) {
            release();
            return Fed.FATAL; // a bad envelope header or bytes past END: the stream's end cannot be found
        }
        return decoder.isComplete() ? Fed.COMPLETE : Fed.MORE;
    }

    /**
     * The request, once it has ended ({@link Framing#BODY}: the body's end; {@link Framing#STREAM}: after
     * {@link Fed#COMPLETE}), or its failure: for a body, the first failure found in its bytes, else 400 for bad gzip,
     * an empty body or a message truncated before {@code END}; for a socket round its in-band failure (the budget's
     * refusal, or the decode error — §8.7 answers it in the round as HTTP answers it 400). On the worker pool when
     * the decoding went there.
     */
    public Uni<Message> request() {
        if (framing == Framing.STREAM) {
            if (refused != null) {
                return Uni.createFrom().failure(refused);
            }
            WireException decodeError = decoder.error();
            return decodeError != null
                    ? Uni.createFrom().failure(decodeError)
                    : Uni.createFrom().item(Message.request(List.copyOf(frames)));
        }
        return Uni.createFrom()
                .emitter(em -> step(() -> {
                    try {
                        em.complete(ended());
                    } catch (RuntimeException e) {
                        em.fail(e);
                    }
                }));
    }

    /**
     * Gives the request's bytes back to the budget — once its round is planned, or its body or stream was refused
     * or closed — and decodes nothing more. Idempotent.
     */
    public void release() {
        closed = true;
        bytes.release();
        if (offloaded) {
            later(
                    () -> { // after any step still queued, on the thread that decodes
                        decoder.abandon();
                        if (gzip != null) {
                            gzip.end();
                        }
                    });
        }
    }

    /** The body's whole request, or the first failure found in it (in the order a whole body met them). */
    private Message ended() {
        if (failure != null) {
            throw failure;
        }
        if (gzip != null) {
            gzip.finish();
            gzip.end();
        }
        if (decoded == 0) {
            throw WireException.invalid("empty request body");
        }
        decoder.finish();
        return Message.request(frames);
    }

    /** One chunk of a body: inflated and/or decoded; the first failure is kept for the body's end. */
    private void decode(byte[] chunk) {
        if (failure != null || closed) {
            return; // the rest of the body is only counted, as it was when a body was decoded whole
        }
        try {
            if (gzip != null) {
                gzip.feed(chunk, 0, chunk.length);
            } else {
                frames(chunk, 0, chunk.length);
            }
        } catch (RuntimeException e) {
            failure = e;
            // the request will not be served: what it decoded and buffered goes now, not when the connection lets
            // go of this intake (16 refused gzip pushes kept 140 MB of buffers alive that way: HostileMemoryIT)
            decoder.abandon();
            frames.clear();
            bytes.lease().shrink(inflatedHeld);
            inflatedHeld = 0;
        }
    }

    /** Inflated bytes: under the same cap, and held against the budget like the body's own. */
    private void inflated(byte[] b, int offset, int length) {
        if (closed) {
            throw RELEASED;
        }
        if (decoded + length > round.maxRequestBytes()) {
            throw round.tooLarge();
        }
        bytes.lease().grow(length);
        inflatedHeld += length;
        frames(b, offset, length);
    }

    /**
     * The decoder's buffer for a partial frame, counted on the lease beside the bytes received: a large frame is held
     * twice while it is decoded (its bytes buffered, then its fields copied out), and a lease that counted it once let
     * 16 gzip pushes of a 15 MiB row take a 192 MB heap (HostileMemoryIT). A larger buffer the budget cannot hold is
     * refused like the bytes themselves: thrown for a body (told at its end), the round's in-band refusal for a socket
     * (its frames dropped, the stream still framed to its {@code END}).
     */
    private void bufferResized(int from, int to) {
        if (to <= from) {
            bytes.lease().shrink(from - to);
            return;
        }
        if (closed && framing == Framing.BODY) {
            throw RELEASED; // released: nothing more is held for this body (a socket round is still framed)
        }
        try {
            bytes.lease().grow(to - from);
        } catch (SyncError spent) {
            if (framing == Framing.BODY) {
                throw spent;
            }
            refuse(spent);
        }
    }

    /**
     * {@link Framing#STREAM}: the budget could not hold the round — §8.7/§10.2: it is answered
     * {@code sync.rate_limited} at its {@code END}; its frames are dropped as they arrive, the stream still framed.
     */
    private void refuse(SyncError spent) {
        refused = spent;
        release();
        frames.clear();
    }

    private void frames(byte[] b, int offset, int length) {
        decoded += length;
        frames.addAll(decoder.feed(b, offset, length));
    }

    /** Runs {@code task} here while the decoding is inline, else after the queued steps, on the worker pool. */
    private void step(Runnable task) {
        if (offloaded) {
            later(task);
        } else {
            task.run();
        }
    }

    /** Queues {@code task} behind the body's other steps: they run one at a time, in order, on the worker pool. */
    private void later(Runnable task) {
        steps.add(task);
        if (pending.getAndIncrement() == 0) {
            Infrastructure.getDefaultWorkerPool().execute(this::drain);
        }
    }

    private void drain() {
        do {
            steps.poll().run();
        } while (pending.decrementAndGet() > 0);
    }
}
