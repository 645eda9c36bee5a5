package dev.syncular.server.wire.realtime;

/** The closed set of presence fanout kinds (SPEC.md §8.6.2). */
public enum PresenceKind {
    JOIN("join"),
    UPDATE("update"),
    LEAVE("leave");

    private final String wire;

    PresenceKind(String wire) {
        this.wire = wire;
    }

    public String wire() {
        return wire;
    }

    /** The kind with this wire string, or {@code null} when it is outside the closed set. */
    public static PresenceKind fromWire(String s) {
        for (PresenceKind k : values()) {
            if (k.wire.equals(s)) {
                return k;
            }
        }
        return null;
    }
}
