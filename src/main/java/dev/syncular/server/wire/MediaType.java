package dev.syncular.server.wire;

/** Segment media types (§5.4): {@code 1} = rows (SSG2), {@code 2} = sqlite. */
public enum MediaType {
    ROWS(1, "rows"),
    SQLITE(2, "sqlite");

    public final int code;
    public final String wireName;

    MediaType(int code, String wireName) {
        this.code = code;
        this.wireName = wireName;
    }

    public static MediaType of(int code) {
        if (code == 1) {
            return ROWS;
        }
        if (code == 2) {
            return SQLITE;
        }
        throw WireException.invalid("mediaType byte out of range");
    }
}
