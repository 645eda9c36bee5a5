package dev.syncular.server.wire;

/** {@code PUSH_RESULT.status} (§6.3). */
public enum CommitStatus {
    APPLIED(1, "applied"),
    CACHED(2, "cached"),
    REJECTED(3, "rejected");

    public final int code;
    public final String wireName;

    CommitStatus(int code, String wireName) {
        this.code = code;
        this.wireName = wireName;
    }

    public static CommitStatus of(int code) {
        for (CommitStatus s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        throw WireException.invalid("push result status byte out of range");
    }
}
