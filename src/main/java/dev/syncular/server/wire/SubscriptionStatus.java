package dev.syncular.server.wire;

/** {@code SUB_START.status} (§4.4). */
public enum SubscriptionStatus {
    ACTIVE(1, "active"),
    REVOKED(2, "revoked"),
    RESET(3, "reset");

    public final int code;
    public final String wireName;

    SubscriptionStatus(int code, String wireName) {
        this.code = code;
        this.wireName = wireName;
    }

    public static SubscriptionStatus of(int code) {
        for (SubscriptionStatus s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        throw WireException.invalid("subscription status byte out of range");
    }
}
