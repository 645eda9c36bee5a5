package dev.syncular.server.realtime;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.http.ErrorMapper;
import dev.syncular.server.http.HttpError;
import dev.syncular.server.wire.WireException;
import org.jboss.logging.Logger;

/**
 * A failure of the realtime binding as a §10 catalogue error, mapped as {@code POST /sync} maps it: a
 * {@link SyncError} keeps its code, a {@link HttpError} its status, a decode {@link WireException} its code
 * (default {@code sync.invalid_request}), a transient storage failure is {@code sync.rate_limited}
 * ({@link ErrorMapper#rateLimited}); anything else is {@code sync.internal_error} with a static message, the
 * original logged server-side only (§10.2).
 */
record RealtimeErrors(ErrorCode code, int status, String message) {
    private static final Logger LOG = Logger.getLogger(RealtimeErrors.class);

    static RealtimeErrors of(Throwable e) {
        SyncError busy = ErrorMapper.rateLimited(e);
        if (busy != null) {
            e = busy;
        }
        if (e instanceof SyncError s) {
            return new RealtimeErrors(s.code(), s.code().httpStatus, s.getMessage());
        }
        if (e instanceof HttpError h) {
            return new RealtimeErrors(h.code(), h.status(), h.getMessage());
        }
        if (e instanceof WireException w) {
            ErrorCode code = ErrorCode.of(w.code()) == null ? ErrorCode.INVALID_REQUEST : ErrorCode.of(w.code());
            return new RealtimeErrors(code, code.httpStatus, w.getMessage());
        }
        LOG.error("Realtime request failed; answered as sync.internal_error", e);
        return new RealtimeErrors(ErrorCode.INTERNAL_ERROR, 500, "internal server error");
    }
}
