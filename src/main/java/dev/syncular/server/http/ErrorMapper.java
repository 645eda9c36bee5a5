package dev.syncular.server.http;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.round.ErrorBodies;
import dev.syncular.server.round.HttpError;
import dev.syncular.server.round.RoundFailure;
import dev.syncular.server.storage.StorageBusy;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.wire.WireException;
import jakarta.inject.Inject;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.Map;
import org.jboss.logging.Logger;
import org.jboss.logging.MDC;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * HTTP-level errors (§1.1, §10.1): every failure detected before a 200 is committed is answered as
 * {@code application/json} in the catalogue shape with the code's status. This includes a failed
 * {@code Uni} behind {@code RestMulti.fromUniResponse} on {@code POST <mount>/sync}: nothing of the SSP2
 * body has been written at that point.
 *
 * <p>A transient storage failure — a full push queue or connection pool, a lock or statement timeout, a
 * deadlock — is mapped ({@link RoundFailure}, the mapping the socket binding shares) (§10.2 "host adapter errors": the mapping hook) to
 * 429 {@code sync.rate_limited} with {@code Retry-After}: nothing was written, the same request may retry.
 * Anything else outside the catalogue becomes 500 {@code sync.internal_error} with a static message; the
 * original is logged server-side only, once, at ERROR with its stack trace and the request id
 * ({@link RequestIds}, which also returns it in {@code X-Request-Id}).
 *
 * <p>An error answered before the request's body was read (a refusal from the headers or from authentication,
 * a body cut off at its cap, an admin refusal) closes the connection after the answer
 * ({@link UnreadBodies}).
 */
public class ErrorMapper {
    private static final Logger LOG = Logger.getLogger(ErrorMapper.class);

    private final StorageBusy storageBusy;

    /** @param storageBusy which failures are a transient storage refusal (the storage's own classification) */
    @Inject
    public ErrorMapper(StorageBusy storageBusy) {
        this.storageBusy = storageBusy;
    }

    @ServerExceptionMapper
    public Response syncError(SyncError e) {
        return answer(RoundFailure.of(e, storageBusy), e);
    }

    @ServerExceptionMapper
    public Response wireError(WireException e) {
        return answer(RoundFailure.of(e, storageBusy), e);
    }

    @ServerExceptionMapper
    public Response httpError(HttpError e) {
        return answer(RoundFailure.of(e, storageBusy), e);
    }

    /** The §10.1 JSON answer of a failure mapped by the round handler's one mapping ({@link RoundFailure}). */
    private static Response answer(RoundFailure f, Throwable e) {
        if (f.internal()) {
            return internalError(e);
        }
        logged(f.status(), f.code());
        Response.ResponseBuilder r = json(f.status(), ErrorBodies.body(f.code(), f.message(), f.details()));
        if (f.retryAfter()) {
            r.header("Retry-After", f.retryAfterSeconds());
        }
        return r.build();
    }

    /**
     * Framework-raised HTTP errors (unknown route 404, wrong method 405, unacceptable Accept 406, ...): kept
     * at their status, in the catalogue shape. A response that already carries an entity is left alone.
     */
    @ServerExceptionMapper
    public Response webError(WebApplicationException e) {
        Response original = e.getResponse();
        if (original != null && original.hasEntity()) {
            return original;
        }
        int status = original == null ? 500 : original.getStatus();
        if (status >= 500) {
            return internalError(e);
        }
        ErrorCode code = switch (status) {
            case 401 -> ErrorCode.AUTH_REQUIRED;
            case 403 -> ErrorCode.FORBIDDEN;
            case 404 -> ErrorCode.NOT_FOUND;
            case 429 -> ErrorCode.RATE_LIMITED;
            default -> ErrorCode.INVALID_REQUEST;
        };
        String message = switch (status) {
            case 404 -> "not found";
            case 405 -> "method not allowed";
            case 406 -> "not acceptable";
            case 415 -> "unsupported content type";
            default -> "invalid request";
        };
        logged(status, code);
        Response.ResponseBuilder r = json(status, ErrorBodies.body(code, message, Map.of()));
        if (original != null && original.getHeaderString("Allow") != null) {
            r.header("Allow", original.getHeaderString("Allow"));
        }
        return r.build();
    }

    @ServerExceptionMapper
    public Response storageError(StorageException e) {
        return unexpected(e);
    }

    @ServerExceptionMapper
    public Response unexpected(Throwable e) {
        return answer(RoundFailure.of(e, storageBusy), e);
    }

    /** A 500, logged once: ERROR with the stack trace and the request id (one generated here if none is set). */
    private static Response internalError(Throwable e) {
        Object id = MDC.get(RequestIds.MDC_KEY);
        if (id == null) {
            id = RequestIds.generate();
            MDC.put(RequestIds.MDC_KEY, id.toString());
        }
        LOG.errorf(e, "request %s answered 500 %s", id, ErrorCode.INTERNAL_ERROR.code);
        return json(500, ErrorBodies.body(ErrorCode.INTERNAL_ERROR, "internal server error", Map.of()))
                .header(RequestIds.HEADER, id)
                .build();
    }

    /**
     * One line per error answer, carrying the request id ({@link RequestIds}) like every line of the request:
     * INFO for a 5xx, DEBUG for a refusal of the request itself. Static text and the code only.
     */
    private static void logged(int status, ErrorCode code) {
        LOG.logf(status >= 500 ? Logger.Level.INFO : Logger.Level.DEBUG, "request answered %d %s", status, code.code);
    }

    private static Response.ResponseBuilder json(int status, Object body) {
        return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE).entity(body);
    }
}
