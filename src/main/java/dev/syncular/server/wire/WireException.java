package dev.syncular.server.wire;

/**
 * A decode error (§1.7) or encoder refusal. Carries a static §10 code; the message is a fixed
 * description of the violated rule and never interpolates ids, cursors or row values.
 */
public final class WireException extends RuntimeException {
    public static final String INVALID_REQUEST = "sync.invalid_request";
    public static final String EMPTY_COMMIT = "sync.empty_commit";

    private final String code;

    public WireException(String code, String message) {
        super(message, null, false, false);
        this.code = code;
    }

    /** A decode error with the default code {@code sync.invalid_request}. */
    public static WireException invalid(String message) {
        return new WireException(INVALID_REQUEST, message);
    }

    public String code() {
        return code;
    }
}
