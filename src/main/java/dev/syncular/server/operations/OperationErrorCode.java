package dev.syncular.server.operations;

/** The REMOTE.md §7 operation error codes with their {@code retryable} flag (all of revision 1 are not retryable). */
public enum OperationErrorCode {
    UNKNOWN("operation.unknown"),
    FORBIDDEN("operation.forbidden"),
    INVALID_REQUEST("operation.invalid_request"),
    RESULT_TOO_LARGE("operation.result_too_large"),
    STORAGE_UNSUPPORTED("operation.storage_unsupported"),
    QUERY_FAILED("operation.query_failed"),
    EXECUTION_FAILED("operation.execution_failed"),
    /** Identity binding (REMOTE.md §1): the client id belongs to another actor, or is reserved. */
    INVALID_CLIENT_ID("sync.invalid_client_id");

    public final String code;
    public final boolean retryable;

    OperationErrorCode(String code) {
        this.code = code;
        this.retryable = false;
    }
}
