package dev.syncular.server.operations;

/** The REMOTE.md §7 operation error codes with their {@code retryable} flag (every §7 code of revision 1 is not retryable). */
public enum OperationErrorCode {
    UNKNOWN("operation.unknown"),
    FORBIDDEN("operation.forbidden"),
    INVALID_REQUEST("operation.invalid_request"),
    RESULT_TOO_LARGE("operation.result_too_large"),
    STORAGE_UNSUPPORTED("operation.storage_unsupported"),
    QUERY_FAILED("operation.query_failed"),
    EXECUTION_FAILED("operation.execution_failed"),
    /** Identity binding (REMOTE.md §1): the client id belongs to another actor, or is reserved. */
    INVALID_CLIENT_ID("sync.invalid_client_id"),
    /**
     * A watch over the socket's or the pod's cap ({@code syncular.operations.watch.max-per-connection},
     * {@code max-per-pod}): revision 1 has no code of its own for it, so the SPEC's retryable
     * {@code sync.rate_limited} (§7: "normal ... sync.* result codes").
     */
    WATCH_LIMIT("sync.rate_limited", true);

    public final String code;
    public final boolean retryable;

    OperationErrorCode(String code) {
        this(code, false);
    }

    OperationErrorCode(String code, boolean retryable) {
        this.code = code;
        this.retryable = retryable;
    }
}
