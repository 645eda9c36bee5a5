package dev.syncular.server.wire.realtime;

/** The closed set of wake-up reasons on the {@code sync} event (SPEC.md §8.3). */
public enum WakeReason {
    DELTA_TOO_LARGE("delta-too-large"),
    CATCHUP_REQUIRED("catchup-required"),
    RESET_REQUIRED("reset-required");

    private final String wire;

    WakeReason(String wire) {
        this.wire = wire;
    }

    /** The wire string, e.g. {@code "catchup-required"}. */
    public String wire() {
        return wire;
    }

    /** The reason with this wire string, or {@code null} when it is outside the closed set. */
    public static WakeReason fromWire(String s) {
        for (WakeReason r : values()) {
            if (r.wire.equals(s)) {
                return r;
            }
        }
        return null;
    }
}
