package dev.syncular.server.wire;

import java.util.List;
import java.util.Map;

/**
 * A decode error (§1.7) or encoder refusal. Carries a static §10 code; the message is a fixed
 * description of the violated rule and never interpolates ids, cursors or row values.
 */
public final class WireException extends RuntimeException {
    public static final String INVALID_REQUEST = "sync.invalid_request";
    public static final String EMPTY_COMMIT = "sync.empty_commit";

    /** The first Syncular release whose clients write wire version 3 (§9; wire version 3 shipped with 0.21.0). */
    public static final String FIRST_CLIENT_RELEASE = "0.21.0";

    /**
     * The §1.2 refusal of another {@code wireVersion}: the message says which version this server speaks and which
     * clients write it; the request's version travels in {@code details}.
     */
    static final String UNSUPPORTED_WIRE_VERSION = "unsupported wireVersion: this server reads SSP2 wire version "
            + FrameType.WIRE_VERSION + " only, written by Syncular clients " + FIRST_CLIENT_RELEASE
            + " and later; upgrade the client (docs/CLIENTS.md)";

    private final String code;
    private final Map<String, Object> details;

    /** @param details §10.1 {@code details}: ids and values, never in {@code message} */
    public WireException(String code, String message, Map<String, Object> details) {
        super(message, null, false, false);
        this.code = code;
        this.details = Map.copyOf(details);
    }

    /** A decode error with the default code {@code sync.invalid_request}. */
    public static WireException invalid(String message) {
        return new WireException(INVALID_REQUEST, message, Map.of());
    }

    /**
     * §1.2 / §9: a request in a wire version outside the window {@code [3]}, e.g. a Syncular client before 0.21.0
     * (wire 2). {@code sync.invalid_request}, with {@code details} {@code wireVersion} (the request's),
     * {@code supportedWireVersions} and {@code minimumClientVersion}.
     */
    public static WireException unsupportedWireVersion(int version) {
        return new WireException(
                INVALID_REQUEST,
                UNSUPPORTED_WIRE_VERSION,
                Map.of(
                        "wireVersion",
                        version,
                        "supportedWireVersions",
                        List.of(FrameType.WIRE_VERSION),
                        "minimumClientVersion",
                        FIRST_CLIENT_RELEASE));
    }

    public String code() {
        return code;
    }

    /** The §10.1 {@code details} object (empty for most decode errors). */
    public Map<String, Object> details() {
        return details;
    }
}
