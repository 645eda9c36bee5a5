package dev.syncular.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.observability.AdminConfig;
import dev.syncular.server.round.ErrorBodies;
import dev.syncular.server.round.HttpError;
import dev.syncular.server.storage.StorableText;
import dev.syncular.server.storage.StorageException;
import io.quarkus.vertx.http.runtime.CurrentVertxRequest;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * The door of every admin route ({@code <mount>/admin/*}): the API exists only when {@code syncular.admin.token}
 * is set (404 {@code sync.not_found} otherwise), and a call must carry {@code Authorization: Bearer <token>}
 * (401 {@code sync.auth_required} otherwise, compared in constant time) — both §10.1 JSON, decided before the
 * route does any work. Every call leaves one audit line on category {@value #AUDIT_CATEGORY}: the route
 * template, the status and the §10 code of a refusal; never the token, never a request body.
 */
@ApplicationScoped
public class AdminAccess {
    public static final String AUDIT_CATEGORY = "dev.syncular.server.admin.audit";
    private static final Logger AUDIT = Logger.getLogger(AUDIT_CATEGORY);

    private final String token;
    private final CredentialAttempts attempts;
    private final CurrentVertxRequest current;
    private final RequestBodies bodies;

    @Inject
    public AdminAccess(
            AdminConfig config, CredentialAttempts attempts, CurrentVertxRequest current, RequestBodies bodies) {
        this.token = config.token().orElse("");
        this.attempts = attempts;
        this.current = current;
        this.bodies = bodies;
    }

    /**
     * {@link #guarded} for a route with a JSON body: the token check first; only then the body, read under
     * {@code maxBody} bytes ({@link RequestBody}: a declared length above it is 413 before any byte is read) and
     * handed to {@code call}. A body that is not JSON, or a field {@code call} refuses with an
     * {@link IllegalArgumentException}, is 400 {@code sync.invalid_request}; with the pod's request-buffer budget
     * spent the call fails with its 429 before the body is read.
     */
    Uni<Response> guardedJson(
            String route,
            String authorization,
            HttpServerRequest request,
            int maxBody,
            Function<StorageException, Response> storageErrors,
            Function<JsonNode, Uni<Response>> call) {
        RequestBody body;
        try {
            body = bodies.open(request, maxBody, RequestBody::tooLarge);
        } catch (HttpError e) {
            return guarded(
                    route, authorization, storageErrors, () -> Uni.createFrom().item(refusal(e)));
        } catch (SyncError busy) {
            return Uni.createFrom().failure(busy);
        }
        return guarded(
                route,
                authorization,
                storageErrors,
                () -> body.readJson()
                        .chain(json -> call.apply(json))
                        .onFailure(IllegalArgumentException.class)
                        .recoverWithItem(e -> bad("invalid request"))
                        .onFailure(HttpError.class)
                        .recoverWithItem(e -> refusal((HttpError) e)));
    }

    private static Response refusal(HttpError e) {
        return error(e.status(), e.code(), e.getMessage(), Map.of());
    }

    /**
     * Runs {@code call} for an authorized caller of {@code route} (e.g. {@code "GET /admin/partitions"}). A
     * {@link StorageException} becomes {@code storageErrors}' answer; an {@link IllegalArgumentException} thrown
     * while building the call is 400 {@code sync.invalid_request}.
     */
    Uni<Response> guarded(
            String route,
            String authorization,
            Function<StorageException, Response> storageErrors,
            Supplier<Uni<Response>> call) {
        Uni<Response> answer;
        String presented = authorization != null && authorization.startsWith("Bearer ")
                ? authorization.substring(7).trim()
                : "";
        RoutingContext rc = current.getCurrent();
        String source = CredentialAttempts.source(rc == null ? null : rc.request());
        long now = System.currentTimeMillis();
        long blocked = token.isEmpty() ? 0 : attempts.blockedForMs(source, now);
        if (token.isEmpty()) {
            answer = Uni.createFrom().item(error(404, ErrorCode.NOT_FOUND, "admin API disabled", Map.of()));
        } else if (blocked > 0) {
            // issue 45: a source past its wrong attempts waits, whatever it presents now
            answer = Uni.createFrom().item(CredentialAttempts.refusal(blocked));
        } else if (!MessageDigest.isEqual(
                token.getBytes(StandardCharsets.UTF_8), presented.getBytes(StandardCharsets.UTF_8))) {
            attempts.failed(source, now);
            answer = Uni.createFrom().item(error(401, ErrorCode.AUTH_REQUIRED, "admin credential required", Map.of()));
        } else {
            attempts.succeeded(source);
            try {
                answer = call.get()
                        .onFailure(StorageException.class)
                        .recoverWithItem(e -> storageErrors.apply((StorageException) e));
            } catch (IllegalArgumentException e) {
                answer = Uni.createFrom().item(bad("invalid request"));
            }
        }
        return answer.onItemOrFailure().invoke((response, failure) -> {
            int status = failure != null ? 500 : response.getStatus();
            String code = failure != null
                    ? ErrorCode.INTERNAL_ERROR.code
                    : response.getEntity() instanceof JsonNode n && n.hasNonNull("code")
                            ? n.get("code").asText()
                            : "-";
            AUDIT.infof("admin %s status=%d code=%s", route, status, code);
        });
    }

    /** Storage failures no admin route expects: 500 {@code sync.internal_error}, logged server-side only. */
    static Response internalError(StorageException e) {
        Logger.getLogger(AdminAccess.class).error("admin call failed in storage", e);
        return error(500, ErrorCode.INTERNAL_ERROR, "internal server error", Map.of());
    }

    /**
     * An identifier taken from the request (a path or query parameter) that the storage can key on
     * ({@link StorableText}: no U+0000, bounded length); otherwise an {@link IllegalArgumentException}, which
     * {@link #guarded} answers 400 {@code sync.invalid_request} — it never reaches a statement.
     */
    public static String storable(String value) {
        if (value != null && !StorableText.storableKey(value)) {
            throw new IllegalArgumentException("identifier the storage cannot hold");
        }
        return value;
    }

    static Response bad(String message) {
        return error(400, ErrorCode.INVALID_REQUEST, message, Map.of());
    }

    static Response error(int status, ErrorCode code, String message, Map<String, Object> details) {
        return Response.status(status)
                .type(MediaType.APPLICATION_JSON)
                .entity(ErrorBodies.body(code, message, details))
                .build();
    }
}
