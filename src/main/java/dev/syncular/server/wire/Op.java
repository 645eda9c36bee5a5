package dev.syncular.server.wire;

/** A change or push operation: {@code 1} = upsert, {@code 2} = delete (§4.5, §6.1). */
public enum Op {
    UPSERT(1, "upsert"),
    DELETE(2, "delete");

    public final int code;
    public final String wireName;

    Op(int code, String wireName) {
        this.code = code;
        this.wireName = wireName;
    }

    public static Op of(int code) {
        if (code == 1) {
            return UPSERT;
        }
        if (code == 2) {
            return DELETE;
        }
        throw WireException.invalid("op enum byte out of range");
    }
}
