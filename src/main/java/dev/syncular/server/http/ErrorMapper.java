package dev.syncular.server.http;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.wire.WireException;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.Map;
import java.util.UUID;
import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

/**
 * HTTP-level errors (§1.1, §10.1): every failure detected before a 200 is committed is answered as
 * {@code application/json} in the catalogue shape with the code's status. This includes a failed
 * {@code Uni} behind {@code RestMulti.fromUniResponse} on {@code POST <mount>/sync}: nothing of the SSP2
 * body has been written at that point.
 *
 * <p>A transient storage failure — a full push queue or connection pool, a lock or statement timeout, a
 * deadlock ({@link PostgresSyncStorage#busy}) — is mapped (§10.2 "host adapter errors": the mapping hook) to
 * 429 {@code sync.rate_limited} with {@code Retry-After}: nothing was written, the same request may retry.
 * Anything else outside the catalogue becomes 500 {@code sync.internal_error} with a static message. Every
 * answer with a 5xx status is logged once, with its stack trace and the request id: the request's
 * {@code X-Request-Id}, or one generated here and returned in that header.
 */
public class ErrorMapper {
    private static final Logger LOG = Logger.getLogger(ErrorMapper.class);
    static final String REQUEST_ID = "X-Request-Id";

    @ServerExceptionMapper
    public Response syncError(SyncError e, HttpHeaders headers) {
        Response.ResponseBuilder r = json(status(e.code()), ErrorBodies.body(e.code(), e.getMessage(), e.details()));
        if (e.code() == ErrorCode.SCHEMA_NOT_READY || e.code() == ErrorCode.RATE_LIMITED) {
            r.header("Retry-After", "1");
        }
        if (status(e.code()) >= 500) {
            r.header(REQUEST_ID, logged(e, headers, e.code().code));
        }
        return r.build();
    }

    @ServerExceptionMapper
    public Response storageError(StorageException e, HttpHeaders headers) {
        return unexpected(e, headers);
    }

    @ServerExceptionMapper
    public Response wireError(WireException e) {
        ErrorCode code = ErrorCode.of(e.code());
        if (code == null) {
            code = ErrorCode.INVALID_REQUEST;
        }
        // Decode errors (§1.7) are static rule descriptions; they never interpolate request data.
        return json(code.httpStatus, ErrorBodies.body(code, e.getMessage(), Map.of())).build();
    }

    @ServerExceptionMapper
    public Response httpError(HttpError e) {
        return json(e.status(), ErrorBodies.body(e.code(), e.getMessage(), Map.of())).build();
    }

    /**
     * Framework-raised HTTP errors (unknown route 404, wrong method 405, unacceptable Accept 406, ...): kept
     * at their status, in the catalogue shape. A response that already carries an entity is left alone.
     */
    @ServerExceptionMapper
    public Response webError(WebApplicationException e, HttpHeaders headers) {
        Response original = e.getResponse();
        if (original != null && original.hasEntity()) {
            return original;
        }
        int status = original == null ? 500 : original.getStatus();
        if (status >= 500) {
            return internalError(e, headers);
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
        Response.ResponseBuilder r = json(status, ErrorBodies.body(code, message, Map.of()));
        if (original != null && original.getHeaderString("Allow") != null) {
            r.header("Allow", original.getHeaderString("Allow"));
        }
        return r.build();
    }

    @ServerExceptionMapper
    public Response unexpected(Throwable e, HttpHeaders headers) {
        SyncError busy = rateLimited(e);
        return busy != null ? syncError(busy, headers) : internalError(e, headers);
    }

    /**
     * A transient storage failure ({@link PostgresSyncStorage#busy}) as {@code sync.rate_limited}, with the
     * storage's {@code reason} and {@code retryAfterMs} in the details; {@code null} for anything else.
     */
    public static SyncError rateLimited(Throwable e) {
        StorageException busy = PostgresSyncStorage.busy(e);
        return busy == null ? null : new SyncError(ErrorCode.RATE_LIMITED, "the server is busy; retry later", busy.details());
    }

    private static Response internalError(Throwable e, HttpHeaders headers) {
        String id = logged(e, headers, ErrorCode.INTERNAL_ERROR.code);
        return json(500, ErrorBodies.body(ErrorCode.INTERNAL_ERROR, "internal server error", Map.of()))
                .header(REQUEST_ID, id).build();
    }

    /** Logs a 5xx answer once, with its stack trace and the request id; yields the id. */
    private static String logged(Throwable e, HttpHeaders headers, String code) {
        String id = headers == null ? null : headers.getHeaderString(REQUEST_ID);
        if (id == null || id.isBlank() || id.length() > 128 || !id.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
            id = UUID.randomUUID().toString();
        }
        LOG.errorf(e, "request %s answered %s", id, code);
        return id;
    }

    /** The HTTP status of a catalogue code (§10.1; §5.5 answers an expired segment with 404). */
    static int status(ErrorCode code) {
        return code.httpStatus;
    }

    private static Response.ResponseBuilder json(int status, Object body) {
        return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE).entity(body);
    }
}
