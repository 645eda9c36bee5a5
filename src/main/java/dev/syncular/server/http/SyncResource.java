package dev.syncular.server.http;

import dev.syncular.server.auth.Authenticator;
import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.round.ContentCoding;
import dev.syncular.server.round.HttpError;
import dev.syncular.server.round.RequestIntake;
import dev.syncular.server.round.RoundResponse;
import dev.syncular.server.round.SyncRound;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.SyncRequestContext;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import java.util.List;
import java.util.Map;
import org.jboss.resteasy.reactive.RestMulti;

/**
 * {@code POST <mount>/sync} (§1.1): one combined push+pull round. SSP2 request in, SSP2 response out.
 *
 * <p>The HTTP framing of the one round handler ({@link SyncRound}, shared with the socket's rounds, §8.7): this
 * class owns the route, the headers and the status, and hands the body's chunks to the round's intake
 * ({@link RequestIntake}, through {@link RequestBody#feed}) and the response's chunks back to the client; the cap,
 * the decoding, the authentication deadline, the content coding, the worker hand-offs and the error mapping are the
 * round's.
 *
 * <p>Order of checks, all answered as §10.1 JSON before any response byte: content type (415), request
 * {@code Content-Encoding} (415 unless absent/identity/gzip), declared length (400 malformed, 413 over
 * {@code syncular.max-request-bytes}, 429 when the buffer budget cannot hold it), authentication (401), the
 * actor's round places (429) — no body byte is read before these pass — then the body under the cap as it arrives
 * (413, a chunked body cut off at the cap; 429 when the budget runs out; 408 too slow), then, once the body has
 * ended, what its bytes held: gzip inflation over the cap (413), bad gzip or a decode error (400 with the decode
 * error's code, e.g. {@code sync.invalid_request} or {@code sync.empty_commit}), then the engine, whose
 * request-level {@code SyncError}s still arrive before the 200 because the response is only committed once the
 * engine's {@code Uni} yields the planned frames ({@code RestMulti.fromUniResponse}).
 *
 * <p><b>Threading.</b> The method is non-blocking: authentication is a {@code Uni}, the body is then read with
 * Vert.x handlers on the request's event loop and fed to the intake, which decodes a typical request right there
 * and hands a large or gzip one to the worker pool; the engine's {@code Uni} runs on the reactive PostgreSQL
 * client's event loop, and the response frames are encoded (and compressed, a large response on a worker) as the
 * HTTP layer pulls chunks of about 32 KiB ({@link RoundResponse}).
 */
@Path("/sync")
public class SyncResource {
    public static final String CONTENT_TYPE = "application/vnd.syncular.sync.v2";

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
     * The whole {@code POST /sync} binding for any engine (the production one, or a conformance-host instance's):
     * the headers checked, the round's intake opened from the declared length, the body fed to it once
     * authenticated, and the response's chunks streamed only once planning and verification succeeded. Call it
     * from the route method, on the request's event loop.
     */
    public RestMulti<Buffer> handle(
            HttpServerRequest request, SyncEngine engine, Uni<SyncRequestContext> authenticate) {
        requireContentType(request.getHeader("Content-Type"), CONTENT_TYPE);
        ContentCoding coding = ContentCoding.ofRequest(request.getHeader("Content-Encoding"));
        SyncRound round = new SyncRound(engine, maxRequestBytes, bodies.budget());
        RequestIntake intake = round.bodyIntake(RequestBody.declaredLength(request), coding);
        RequestBody body = bodies.round(request, intake);
        return RestMulti.fromUniResponse(
                round.handle(authenticate, intake, () -> body.feed(intake), request.getHeader("Accept-Encoding")),
                RoundResponse::chunks,
                r -> responseHeaders(r.coding()),
                r -> 200);
    }

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
}
