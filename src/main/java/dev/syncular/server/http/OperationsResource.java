package dev.syncular.server.http;

import dev.syncular.server.auth.Authenticator;
import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.operations.OperationsConfig;
import dev.syncular.server.operations.RemoteOperations;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.http.HttpServerRequest;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Response;
import java.time.Duration;

/**
 * {@code POST <mount>/operations} (REMOTE.md §5): one encoded remote operation request in, one encoded response
 * out, HTTP 200 for every operation-level outcome (success or {@code kind: "error"}).
 *
 * <p>As on {@code /sync}: the content type first ({@code application/vnd.syncular.operations.v1+json},
 * parameters ignored; anything else 415), the declared length (413), authentication (401), then the body under
 * {@code syncular.operations.max-request-bytes} (within {@code syncular.max-request-bytes}) through the pod's buffer budget ({@link RequestBody}); these answer with the
 * §10.1 JSON error body before the operation is decoded. Decoding and the registry run on a worker thread.
 */
@Path("/operations")
public class OperationsResource {
    public static final String CONTENT_TYPE = "application/vnd.syncular.operations.v1+json";
    private static final Duration AUTH_TIMEOUT = Duration.ofSeconds(30);

    private final RemoteOperations operations;
    private final Authenticator authenticator;
    private final RequestBodies bodies;
    private final long maxRequestBytes;

    @Inject
    public OperationsResource(
            RemoteOperations operations,
            Authenticator authenticator,
            RequestBodies bodies,
            SyncularConfig config,
            OperationsConfig operationsConfig) {
        this.operations = operations;
        this.authenticator = authenticator;
        this.bodies = bodies;
        this.maxRequestBytes = Math.min(
                config.maxRequestBytes().asLongValue(),
                operationsConfig.maxRequestBytes().asLongValue());
    }

    @POST
    public Uni<Response> operate(@Context HttpServerRequest request) {
        SyncResource.requireContentType(request.getHeader("Content-Type"), CONTENT_TYPE);
        RequestBody body = bodies.open(request, maxRequestBytes, RequestBody::tooLarge);
        return authenticator
                .authenticate(request)
                .ifNoItem()
                .after(AUTH_TIMEOUT)
                .failWith(() -> new IllegalStateException("authentication timed out"))
                .chain(ctx -> body.read()
                        .emitOn(Infrastructure.getDefaultWorkerPool())
                        .chain(bytes -> operations.handle(ctx, bytes.getBytes())))
                .onTermination()
                .invoke(body::release)
                .map(out -> Response.ok(out, CONTENT_TYPE).build());
    }
}
