package dev.syncular.server.round;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.storage.StorageBusy;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.wire.WireException;
import java.util.Map;

/**
 * A failure of a round (or of anything answered before one) as a §10 catalogue error — the one mapping both
 * bindings use: HTTP answers it as §10.1 JSON with {@link #status}, the socket as the in-band
 * {@code RESP_HEADER, ERROR, END} of §8.7 (and its upgrade as §10.1 JSON).
 *
 * <ul>
 *   <li>a {@link SyncError} keeps its code, status (the code's) and details;</li>
 *   <li>a {@link HttpError} keeps its status and code, without details;</li>
 *   <li>a decode {@link WireException} keeps its code (default {@code sync.invalid_request}) and details;</li>
 *   <li>a transient storage failure — a full push queue or connection pool, a lock or statement timeout, a
 *       deadlock, the database or the object store unavailable (what the storage classifies so, {@link StorageBusy}; an S3 store raises its
 *       outages as such, {@code s3.S3Outage}) — is 429 {@code sync.rate_limited} (§10.2 "host adapter
 *       errors": the mapping hook) with the storage's {@code reason} and {@code retryAfterMs}: nothing was
 *       written, the same request may retry;</li>
 *   <li>anything else is {@link #internal} 500 {@code sync.internal_error} with a static message: the binding
 *       logs the original server-side only, never in the answer.</li>
 * </ul>
 *
 * {@link #retryAfter} says whether the HTTP answer carries {@code Retry-After} ({@code sync.rate_limited} and
 * {@code sync.schema_not_ready} raised as {@link SyncError}).
 */
public record RoundFailure(
        ErrorCode code, int status, String message, Map<String, Object> details, boolean retryAfter, boolean internal) {

    /** {@code e} mapped, with {@code storage} saying which failures are a transient storage refusal. */
    public static RoundFailure of(Throwable e, StorageBusy storage) {
        SyncError busy = rateLimited(e, storage);
        if (busy != null) {
            e = busy;
        }
        if (e instanceof SyncError s) {
            boolean retry = s.code() == ErrorCode.SCHEMA_NOT_READY || s.code() == ErrorCode.RATE_LIMITED;
            return new RoundFailure(s.code(), s.code().httpStatus, s.getMessage(), s.details(), retry, false);
        }
        if (e instanceof HttpError h) {
            return new RoundFailure(h.code(), h.status(), h.getMessage(), Map.of(), false, false);
        }
        if (e instanceof WireException w) {
            ErrorCode code = ErrorCode.of(w.code()) == null ? ErrorCode.INVALID_REQUEST : ErrorCode.of(w.code());
            // decode errors (§1.7) are static rule descriptions; request data goes only in details
            return new RoundFailure(code, code.httpStatus, w.getMessage(), w.details(), false, false);
        }
        return new RoundFailure(ErrorCode.INTERNAL_ERROR, 500, "internal server error", Map.of(), false, true);
    }

    /**
     * A transient storage failure ({@link StorageBusy}) as {@code sync.rate_limited}, with the
     * storage's {@code reason} and {@code retryAfterMs} in the details; {@code null} for anything else.
     */
    public static SyncError rateLimited(Throwable e, StorageBusy storage) {
        StorageException busy = storage.busy(e);
        return busy == null
                ? null
                : new SyncError(ErrorCode.RATE_LIMITED, "the server is busy; retry later", busy.details());
    }

    /** {@code Retry-After} in whole seconds: {@code details.retryAfterMs} rounded up, at least 1. */
    public String retryAfterSeconds() {
        Object ms = details == null ? null : details.get("retryAfterMs");
        long seconds = ms instanceof Number n ? Math.max(1, (n.longValue() + 999) / 1000) : 1;
        return Long.toString(seconds);
    }
}
