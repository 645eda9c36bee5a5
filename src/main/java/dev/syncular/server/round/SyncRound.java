package dev.syncular.server.round;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.SyncRequestContext;
import dev.syncular.server.wire.ErrorFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.WireException;
import io.netty.buffer.ByteBufInputStream;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.buffer.Buffer;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * The sync round (§1.1 push+pull), written once for both of its bindings (§8.7: "one handler, two framings"):
 * {@code POST <mount>/sync} and the socket's {@code 0x01} rounds. Bytes in — a whole HTTP body, or a socket
 * request arriving in chunks ({@link RequestStream}) — under {@code syncular.max-request-bytes} and the pod's
 * buffer budget ({@link BodyIntake}); the request decoded; the engine's planned frames; the response out as
 * chunks of the encoded body ({@link #chunks}); failures mapped once ({@link RoundFailure}). A binding adds only
 * its framing: HTTP its headers, statuses and §10.1 JSON, the socket its channel tag, no-pipelining and
 * in-band {@code RESP_HEADER, ERROR, END} ({@link #failed}).
 *
 * <p>Threading: a small identity body (up to {@link #INLINE_DECODE_BYTES}) decodes on the caller's event loop
 * (microseconds); a gzip body, which may inflate up to the cap, and a larger one decode on the worker pool.
 */
public final class SyncRound {
    /** How long authentication may take before the round fails (answered {@code sync.internal_error}). */
    public static final Duration AUTH_TIMEOUT = Duration.ofSeconds(30);
    /** Identity request bodies up to this size are decoded on the event loop; larger ones on a worker. */
    public static final int INLINE_DECODE_BYTES = 64 * 1024;

    private static final int CHUNK = 64 * 1024;

    private final SyncEngine engine;
    private final long maxRequestBytes;

    public SyncRound(SyncEngine engine, long maxRequestBytes) {
        this.engine = engine;
        this.maxRequestBytes = maxRequestBytes;
    }

    /** {@code syncular.max-request-bytes}: the cap of a round's request, received and inflated. */
    public long maxRequestBytes() {
        return maxRequestBytes;
    }

    /** {@code authenticate} under {@link #AUTH_TIMEOUT}: the one authentication deadline of every route. */
    public static <T> Uni<T> authenticated(Uni<T> authenticate) {
        return authenticate
                .ifNoItem()
                .after(AUTH_TIMEOUT)
                .failWith(() -> new IllegalStateException("authentication timed out"));
    }

    /**
     * The round of a request whose body arrives whole (HTTP): authentication first, then — only once it
     * passed, and the actor's round places are not all taken ({@link SyncEngine#admissible}) — the body ({@code body}, read under the cap), its decoding (gzip inflated under the same cap,
     * the inflated bytes grown on {@code lease}), and the engine's planned frames.
     */
    public Uni<List<Frame>> handle(
            Uni<SyncRequestContext> authenticate, Supplier<Uni<Buffer>> body, boolean gzip, BufferBudget.Lease lease) {
        Context trace = Context.current(); // the HTTP request's span, when tracing is on
        return authenticated(authenticate)
                // issue 45: a round whose places are taken is refused before its body is read or decoded
                .call(engine::admissible)
                .chain(ctx -> body.get()
                        .chain(bytes -> decoded(bytes, gzip, lease))
                        .chain(request -> engine.handle(ctx, request, SyncEngine.Binding.HTTP, trace)));
    }

    /** The round of a request already decoded (the socket, {@link RequestStream}): the engine's planned frames. */
    public Uni<List<Frame>> handle(SyncRequestContext ctx, Message request) {
        Context trace = Context.current();
        return Uni.createFrom().deferred(() -> engine.handle(ctx, request, SyncEngine.Binding.SOCKET, trace));
    }

    private Uni<Message> decoded(Buffer bytes, boolean gzip, BufferBudget.Lease lease) {
        Uni<Message> message = Uni.createFrom()
                .item(() -> decode(new ByteBufInputStream(bytes.getByteBuf()), bytes.length(), gzip, lease));
        return gzip || bytes.length() > INLINE_DECODE_BYTES
                ? message.runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                : message;
    }

    /**
     * Streams a whole body through the request decoder. The cap applies to the bytes received and, for gzip,
     * separately to the inflated bytes (a few KiB of gzip can inflate to gigabytes), which are counted on
     * {@code lease} like the body (429 when the budget is spent). An identity body of {@code length} bytes is read
     * in one chunk of its own size: a round's request is a few hundred bytes, and a 64 KiB chunk for each was a
     * third of the bytes the server allocated under push-pull load.
     */
    Message decode(InputStream raw, int length, boolean gzip, BufferBudget.Lease lease) {
        MessageDecoder decoder = MessageDecoder.forRequests();
        List<Frame> frames = new ArrayList<>();
        byte[] chunk = new byte[gzip ? CHUNK : Math.max(1, Math.min(CHUNK, length))];
        long total = 0;
        try (InputStream in = gzip
                ? new GZIPInputStream(new CappedInputStream(raw, maxRequestBytes), CHUNK)
                : new CappedInputStream(raw, maxRequestBytes)) {
            int n;
            while ((n = in.read(chunk)) > 0) {
                total += n;
                if (total > maxRequestBytes) {
                    throw tooLarge();
                }
                if (gzip) {
                    lease.grow(n);
                }
                frames.addAll(decoder.feed(chunk, 0, n));
            }
        } catch (ZipException | EOFException e) {
            throw new HttpError(400, ErrorCode.INVALID_REQUEST, "request body is not valid gzip");
        } catch (CappedInputStream.TooLarge e) {
            throw tooLarge();
        } catch (IOException e) {
            throw new UncheckedIOException("reading the request body failed", e);
        }
        if (total == 0) {
            throw WireException.invalid("empty request body");
        }
        decoder.finish();
        return Message.request(frames);
    }

    /** 413 {@code sync.invalid_request}: a round's request above {@code syncular.max-request-bytes}. */
    public HttpError tooLarge() {
        return new HttpError(
                413,
                ErrorCode.INVALID_REQUEST,
                "request body exceeds " + maxRequestBytes + " bytes; split the push into smaller requests");
    }

    /** The chunks of the planned response body under {@code coding} (§1.2–§1.4): about 32 KiB each. */
    public static Iterable<Buffer> chunks(List<Frame> planned, ContentCoding coding) {
        return ResponseBody.of(planned, coding);
    }

    /**
     * A round that failed before its response began, as the minimal response stream
     * {@code RESP_HEADER, ERROR, END} (§1.4, §8.7) with the partition's {@code logEpoch}: the form a binding
     * without HTTP statuses answers it in.
     */
    public static List<Frame> failed(RoundFailure failure, String logEpoch) {
        ErrorCode code = failure.code();
        return List.of(
                new RespHeader(null, null, logEpoch == null ? "" : logEpoch, false),
                new ErrorFrame(
                        code.code, failure.message(), code.category, code.retryable, code.recommendedAction, null));
    }
}
