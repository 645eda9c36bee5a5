package dev.syncular.server.round;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.SyncRequestContext;
import dev.syncular.server.wire.ErrorFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.RespHeader;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * The sync round (§1.1 push+pull), written once for both of its bindings (§8.7: "one handler, two framings"):
 * {@code POST <mount>/sync} and the socket's {@code 0x01} rounds. Bytes in — fed chunk by chunk, as each binding
 * receives them, to the round's {@link RequestIntake} (under {@code syncular.max-request-bytes} and the pod's buffer
 * budget, gzip inflated under the same cap, decoded as they arrive); the engine's planned frames; the response out
 * ({@link RoundResponse}: the content coding negotiated, §1.3, its hold on the budget, its chunks, compressed on the
 * worker pool when large); failures mapped once ({@link RoundFailure}). A binding adds only its framing: HTTP its
 * route, authentication, headers, statuses and §10.1 JSON, the socket its channel tag, no-pipelining and in-band
 * {@code RESP_HEADER, ERROR, END} ({@link #failed}).
 *
 * <p>Threading: the bindings feed the intake on their event loops; a small identity request (up to
 * {@link #INLINE_DECODE_BYTES}) is decoded right there (microseconds), a larger one past that and a gzip one
 * (which may inflate up to the cap) on the worker pool ({@link RequestIntake}); socket rounds, which the transport
 * bounds per message, decode as they arrive.
 */
public final class SyncRound {
    /** How long authentication may take before the round fails (answered {@code sync.internal_error}). */
    public static final Duration AUTH_TIMEOUT = Duration.ofSeconds(30);
    /** An identity request body's first bytes up to this many are decoded on the event loop; the rest on a worker. */
    public static final int INLINE_DECODE_BYTES = 64 * 1024;

    private final SyncEngine engine;
    private final long maxRequestBytes;
    private final BufferBudget budget;

    public SyncRound(SyncEngine engine, long maxRequestBytes, BufferBudget budget) {
        this.engine = engine;
        this.maxRequestBytes = maxRequestBytes;
        this.budget = budget;
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
     * The intake of an HTTP body declaring {@code declared} bytes (-1: none) in {@code coding} (identity or gzip,
     * {@link ContentCoding#ofRequest}), decided before any byte is read: 413 when it declares more than the cap,
     * {@code sync.rate_limited} when the buffer budget is spent or cannot hold the declared length.
     */
    public RequestIntake bodyIntake(long declared, ContentCoding coding) {
        BodyIntake bytes = BodyIntake.declared(declared, maxRequestBytes, this::tooLarge, budget::open);
        return new RequestIntake(this, RequestIntake.Framing.BODY, bytes, coding, null);
    }

    /**
     * The intake of a socket round: never refused up front — a spent budget is the round's in-band
     * {@code sync.rate_limited}, answered at its {@code END} (§8.7, §10.2).
     */
    public RequestIntake streamIntake() {
        BufferBudget.Lease lease;
        SyncError refused = null;
        try {
            lease = budget.open(-1);
        } catch (SyncError spent) {
            lease = budget.unmetered();
            refused = spent;
        }
        BodyIntake bytes = new BodyIntake(maxRequestBytes, this::tooLarge, lease);
        return new RequestIntake(this, RequestIntake.Framing.STREAM, bytes, ContentCoding.IDENTITY, refused);
    }

    /**
     * The round of an HTTP body: authentication first, then — only once it passed, and the actor's round places are
     * not all taken ({@link SyncEngine#admissible}) — the body fed to {@code intake} ({@code arrived}: its item once
     * the body ended; before this no body byte is read), the request, the engine's planned frames, and the response
     * coded as {@code acceptEncoding} allows (§1.3). The intake is released once the round is planned or failed.
     */
    public Uni<RoundResponse> handle(
            Uni<SyncRequestContext> authenticate,
            RequestIntake intake,
            Supplier<Uni<Void>> arrived,
            String acceptEncoding) {
        Context trace = Context.current(); // the HTTP request's span, when tracing is on
        return authenticated(authenticate)
                // issue 45: a round whose places are taken is refused before its body is read or decoded
                .call(engine::admissible)
                .chain(ctx -> arrived.get()
                        .chain(intake::request)
                        .chain(request -> engine.handle(ctx, request, SyncEngine.Binding.HTTP, trace)))
                // the request's frames (and its bytes' count) are held until the round is planned
                .onTermination()
                .invoke(intake::release)
                .map(planned -> response(planned, acceptEncoding));
    }

    /** The round of a request already decoded (the socket, {@link RequestIntake}): the engine's planned frames. */
    public Uni<List<Frame>> handle(SyncRequestContext ctx, Message request) {
        Context trace = Context.current();
        return Uni.createFrom().deferred(() -> engine.handle(ctx, request, SyncEngine.Binding.SOCKET, trace));
    }

    /**
     * The response of planned (or failed-round) frames, coded as {@code acceptEncoding} allows (§1.3; the socket
     * passes {@code "identity"}), held against the buffer budget until written.
     */
    public RoundResponse response(List<Frame> planned, String acceptEncoding) {
        return new RoundResponse(planned, acceptEncoding, budget);
    }

    /** 413 {@code sync.invalid_request}: a round's request above {@code syncular.max-request-bytes}. */
    public HttpError tooLarge() {
        return new HttpError(
                413,
                ErrorCode.INVALID_REQUEST,
                "request body exceeds " + maxRequestBytes + " bytes; split the push into smaller requests");
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
