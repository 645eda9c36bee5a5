package dev.syncular.server.errors;

import java.util.Map;

/**
 * A §10 catalogue error raised by the engine. The message is a static description; ids, cursors and row
 * values travel only in {@code details}.
 */
public final class SyncError extends RuntimeException {
    private final ErrorCode code;
    private final Map<String, Object> details;

    public SyncError(ErrorCode code, String message) {
        this(code, message, Map.of());
    }

    public SyncError(ErrorCode code, String message, Map<String, Object> details) {
        super(message, null, false, false);
        this.code = code;
        this.details = Map.copyOf(details);
    }

    public ErrorCode code() {
        return code;
    }

    public Map<String, Object> details() {
        return details;
    }
}
