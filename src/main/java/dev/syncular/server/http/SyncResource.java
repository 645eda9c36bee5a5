package dev.syncular.server.http;

import dev.syncular.server.auth.Authenticator;
import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.round.ContentCoding;
import dev.syncular.server.round.HttpError;
import dev.syncular.server.round.ResponseBody;
import dev.syncular.server.round.SyncRound;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.SyncRequestContext;
import dev.syncular.server.wire.Frame;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jboss.resteasy.reactive.RestMulti;

/**
 * {@code POST <mount>/sync} (§1.1): one combined push+pull round. SSP2 request in, SSP2 response out.
 *
 * <p>Order of checks, all answered as §10.1 JSON before any response byte: content type (415), request
 * {@code Content-Encoding} (415 unless absent/identity/gzip), declared length (413), authentication (401) —
 * no body byte is read before these pass ({@link RequestBody}) — then body size and gzip inflation under
 * {@code syncular.max-request-bytes} (413, a chunked body cut off at the cap), decode (400 with the decode
 * error's code, e.g. {@code sync.invalid_request} or {@code sync.empty_commit}), then the engine, whose
 * request-level {@code SyncError}s still arrive before the 200 because the response is only committed once
 * the engine's {@code Uni} yields the planned frames ({@code RestMulti.fromUniResponse}).
 *
 * <p>The HTTP framing of the one round handler ({@link SyncRound}, shared with the socket's rounds, §8.7):
 * this class owns only the headers, the body's reading ({@link RequestBody}) and the status; the cap, the
 * decoding, the authentication deadline, the error mapping and the response chunks are the handler's.
 *
 * <p><b>Threading.</b> The method is non-blocking: authentication is a {@code Uni}, the body is then read
 * with Vert.x handlers on the request's event loop, and a typical request (identity, up to
 * {@link SyncRound#INLINE_DECODE_BYTES}) is decoded right on the event loop — a round costs no hand-off to a
 * worker thread and back. gzip bodies (which may inflate up to the cap) and larger ones are decoded on the
 * worker pool. The engine's {@code Uni} runs on the reactive PostgreSQL client's event loop, and the response
 * frames are encoded (and compressed) as the HTTP layer pulls chunks of about 32 KiB — a typical response is
 * one socket write, a large one leaves in bounded pieces, with rows segments above
 * {@code inline-segment-max-bytes} served via {@code GET /segments} instead.
 */
@Path("/sync")
public class SyncResource {
    public static final String CONTENT_TYPE = "application/vnd.syncular.sync.v2";
    /**
     * A compressed response of about this size or more is coded on a worker thread; at least
     * {@link ContentCoding#ZSTD_FROM_BYTES}, so the size estimate capped here also chooses the coding.
     */
    static final int OFFLOAD_BYTES = 16 * 1024;

    private final SyncEngine engine;
    private final Authenticator authenticator;
    private final long maxRequestBytes;
    private final RequestBodies bodies;

    @Inject
    public SyncResource(SyncEngine engine, Authenticator authenticator, SyncularConfig config, RequestBodies bodies) {
        this.engine = engine;
        this.authenticator = authenticator;
        this.bodies = bodies;
        this.maxRequestBytes = config.maxRequestBytes().asLongValue();
    }

    @POST
    @Produces(CONTENT_TYPE)
    public RestMulti<Buffer> sync(@Context HttpServerRequest request) {
        return handle(request, engine, authenticator.authenticate(request));
    }

    /**
     * The whole {@code POST /sync} binding for any engine (the production one, or a conformance-host
     * instance's): content type, content coding, declared size, authentication, then the body read under the
     * cap ({@link RequestBody}), decode, and the engine's planned frames streamed only once planning and
     * verification succeeded. Call it from the route method, on the request's event loop.
     */
    public RestMulti<Buffer> handle(
            HttpServerRequest request, SyncEngine engine, Uni<SyncRequestContext> authenticate) {
        requireContentType(request.getHeader("Content-Type"), CONTENT_TYPE);
        boolean gzip = requestIsGzip(request.getHeader("Content-Encoding"));
        SyncRound round = new SyncRound(engine, maxRequestBytes);
        RequestBody body = bodies.open(request, maxRequestBytes, round::tooLarge);
        String accepted = request.getHeader("Accept-Encoding");
        Uni<List<Frame>> planned = round.handle(authenticate, body::read, gzip, body.lease())
                // the request's bytes (and what was decoded from them) are held until the round is planned
                .onTermination()
                .invoke(body::release);
        // §1.3: the coding honours Accept-Encoding and pays for itself (small responses go identity-coded)
        Uni<Coded> coded = planned.map(frames -> {
            long bytes = ResponseBody.estimatedBytes(frames, Long.MAX_VALUE);
            // the planned response is held against the pod's buffer budget until it is written (issue 44)
            return new Coded(
                    frames,
                    ContentCoding.choose(accepted, bytes),
                    bytes,
                    bodies.budget().hold(bytes));
        });
        return RestMulti.fromUniResponse(
                coded,
                c -> {
                    Multi<Buffer> chunks = Multi.createFrom()
                            .iterable(SyncRound.chunks(c.frames(), c.coding()))
                            .onTermination()
                            .invoke(c.held()::release);
                    // compressing a large response is CPU work: its chunks are produced on a worker, not the
                    // event loop (a small one is cheaper to code in place than to hand over)
                    return c.coding() != ContentCoding.IDENTITY && c.bytes() >= OFFLOAD_BYTES
                            ? chunks.runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                            : chunks;
                },
                c -> responseHeaders(c.coding()),
                c -> 200);
    }

    /** A planned response, the coding it goes out in, its estimated size and its hold on the buffer budget. */
    private record Coded(List<Frame> frames, ContentCoding coding, long bytes, BufferBudget.Lease held) {}

    static Map<String, List<String>> responseHeaders(ContentCoding coding) {
        return coding == ContentCoding.IDENTITY
                ? Map.of("Vary", List.of("Accept-Encoding"))
                : Map.of("Vary", List.of("Accept-Encoding"), "Content-Encoding", List.of(coding.token));
    }

    /**
     * Exactly the media type {@code expected} (case-insensitive; parameters ignored), else 415: §1.1 for
     * {@code /sync}, REMOTE.md §5 for {@code /operations}.
     */
    static void requireContentType(String contentType, String expected) {
        if (contentType != null) {
            int semi = contentType.indexOf(';');
            String essence = (semi < 0 ? contentType : contentType.substring(0, semi)).trim();
            if (essence.equalsIgnoreCase(expected)) {
                return;
            }
        }
        throw new HttpError(415, ErrorCode.INVALID_REQUEST, "content type must be " + expected);
    }

    /** §1.3: request bodies are identity or {@code gzip}; any other coding is 415. */
    static boolean requestIsGzip(String contentEncoding) {
        if (contentEncoding == null) {
            return false;
        }
        String c = contentEncoding.trim().toLowerCase(Locale.ROOT);
        if (c.isEmpty() || c.equals("identity")) {
            return false;
        }
        if (c.equals("gzip") || c.equals("x-gzip")) {
            return true;
        }
        throw new HttpError(415, ErrorCode.INVALID_REQUEST, "request Content-Encoding must be gzip or identity");
    }
}
