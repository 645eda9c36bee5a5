package dev.syncular.server.wire.realtime;

/**
 * The closed set of client-runtime presence error codes carried in the {@code error} field of a
 * server → client {@code presence} event (SPEC.md §8.6.2). These are not §10 wire codes.
 */
public enum PresenceErrorCode {
    TOO_LARGE("presence.too_large"),
    FORBIDDEN("presence.forbidden");

    private final String wire;

    PresenceErrorCode(String wire) {
        this.wire = wire;
    }

    public String wire() {
        return wire;
    }

    /** The code with this wire string, or {@code null} when it is outside the closed set. */
    public static PresenceErrorCode fromWire(String s) {
        for (PresenceErrorCode c : values()) {
            if (c.wire.equals(s)) {
                return c;
            }
        }
        return null;
    }
}
