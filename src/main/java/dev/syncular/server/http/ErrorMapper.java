package dev.syncular.server.http;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.wire.WireException;
import io.vertx.ext.web.RoutingContext;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.Map;
import org.jboss.logging.Logger;
import org.jboss.logging.MDC;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;
import org.jboss.resteasy.reactive.server.ServerResponseFilter;
import org.jboss.resteasy.reactive.server.core.ResteasyReactiveRequestContext;
import org.jboss.resteasy.reactive.server.spi.ResteasyReactiveContainerRequestContext;

/**
 * HTTP-level errors (§1.1, §10.1): every failure detected before a 200 is committed is answered as
 * {@code application/json} in the catalogue shape with the code's status. This includes a failed
 * {@code Uni} behind {@code RestMulti.fromUniResponse} on {@code POST <mount>/sync}: nothing of the SSP2
 * body has been written at that point.
 *
 * <p>A transient storage failure — a full push queue or connection pool, a lock or statement timeout, a
 * deadlock ({@link PostgresSyncStorage#busy}) — is mapped (§10.2 "host adapter errors": the mapping hook) to
 * 429 {@code sync.rate_limited} with {@code Retry-After}: nothing was written, the same request may retry.
 * Anything else outside the catalogue becomes 500 {@code sync.internal_error} with a static message; the
 * original is logged server-side only, once, at ERROR with its stack trace and the request id
 * ({@link RequestIds}, which also returns it in {@code X-Request-Id}).
 *
 * <p>An error answered before the request's body was read (a refusal from the headers or from authentication,
 * a body cut off at its cap, an admin refusal) closes the connection after the answer
 * ({@link #closeUnreadBodies}).
 */
public class ErrorMapper {
    private static final Logger LOG = Logger.getLogger(ErrorMapper.class);

    @ServerExceptionMapper
    public Response syncError(SyncError e) {
        logged(status(e.code()), e.code());
        Response.ResponseBuilder r = json(status(e.code()), ErrorBodies.body(e.code(), e.getMessage(), e.details()));
        if (e.code() == ErrorCode.SCHEMA_NOT_READY || e.code() == ErrorCode.RATE_LIMITED) {
            r.header("Retry-After", retryAfterSeconds(e.details()));
        }
        return r.build();
    }

    /** {@code Retry-After} in whole seconds: {@code details.retryAfterMs} rounded up, at least 1. */
    static String retryAfterSeconds(Map<String, Object> details) {
        Object ms = details == null ? null : details.get("retryAfterMs");
        long seconds = ms instanceof Number n ? Math.max(1, (n.longValue() + 999) / 1000) : 1;
        return Long.toString(seconds);
    }

    @ServerExceptionMapper
    public Response wireError(WireException e) {
        ErrorCode code = ErrorCode.of(e.code());
        if (code == null) {
            code = ErrorCode.INVALID_REQUEST;
        }
        logged(code.httpStatus, code);
        // Decode errors (§1.7) are static rule descriptions; they never interpolate request data (the unsupported
        // wireVersion refusal puts the request's version in details).
        return json(code.httpStatus, ErrorBodies.body(code, e.getMessage(), e.details())).build();
    }

    @ServerExceptionMapper
    public Response httpError(HttpError e) {
        logged(e.status(), e.code());
        return json(e.status(), ErrorBodies.body(e.code(), e.getMessage(), Map.of())).build();
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
        SyncError busy = rateLimited(e);
        return busy != null ? syncError(busy) : internalError(e);
    }

    /**
     * A transient storage failure ({@link PostgresSyncStorage#busy}) as {@code sync.rate_limited}, with the
     * storage's {@code reason} and {@code retryAfterMs} in the details; {@code null} for anything else.
     */
    public static SyncError rateLimited(Throwable e) {
        StorageException busy = PostgresSyncStorage.busy(e);
        return busy == null ? null : new SyncError(ErrorCode.RATE_LIMITED, "the server is busy; retry later", busy.details());
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
                .header(RequestIds.HEADER, id).build();
    }

    /**
     * One line per error answer, carrying the request id ({@link RequestIds}) like every line of the request:
     * INFO for a 5xx, DEBUG for a refusal of the request itself. Static text and the code only.
     */
    private static void logged(int status, ErrorCode code) {
        LOG.logf(status >= 500 ? Logger.Level.INFO : Logger.Level.DEBUG, "request answered %d %s", status, code.code);
    }

    /**
     * Every error answer (status ≥ 400) to a request whose body was not read to its end — thrown or returned —
     * discards the rest of that body, bounded, and closes the connection ({@link RequestBody#closeUnread}).
     */
    @ServerResponseFilter
    public void closeUnreadBodies(ResteasyReactiveContainerRequestContext request, ContainerResponseContext response) {
        if (response.getStatus() >= 400
                && request.getServerRequestContext() instanceof ResteasyReactiveRequestContext context) {
            RequestBody.closeUnread(context.serverRequest().unwrap(RoutingContext.class), response.getStatus());
        }
    }

    /** The HTTP status of a catalogue code (§10.1; §5.5 answers an expired segment with 404). */
    static int status(ErrorCode code) {
        return code.httpStatus;
    }

    private static Response.ResponseBuilder json(int status, Object body) {
        return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE).entity(body);
    }
}
