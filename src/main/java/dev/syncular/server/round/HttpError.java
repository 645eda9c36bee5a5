package dev.syncular.server.round;

import dev.syncular.server.errors.ErrorCode;

/**
 * An HTTP-level protocol error whose status differs from the catalogue default of its code (§1.1): 415 for
 * a wrong content type, 413 for an oversized body — both {@code sync.invalid_request}. The message is
 * static; mapped by {@link RoundFailure} (HTTP answers it as §10.1 JSON with this status).
 */
public final class HttpError extends RuntimeException {
    private final int status;
    private final ErrorCode code;

    public HttpError(int status, ErrorCode code, String message) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
    }

    public int status() {
        return status;
    }

    public ErrorCode code() {
        return code;
    }
}
