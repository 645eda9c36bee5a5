package dev.syncular.server.operations;

/**
 * An operation-level failure (REMOTE.md §5 {@code kind: "error"}): a §7 code and a static message. Ids and
 * values never go into the message.
 */
public final class OperationException extends RuntimeException {
    private final OperationErrorCode code;

    public OperationException(OperationErrorCode code, String message) {
        super(message, null, false, false);
        this.code = code;
    }

    public OperationErrorCode code() {
        return code;
    }

    static OperationException invalid(String message) {
        return new OperationException(OperationErrorCode.INVALID_REQUEST, message);
    }
}
