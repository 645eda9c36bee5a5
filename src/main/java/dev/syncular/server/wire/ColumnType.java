package dev.syncular.server.wire;

/**
 * Column types of the row codec and rows segments, with their wire tags (§2.4).
 * {@code blob_ref} rides the {@code json} machinery and {@code crdt} rides {@code bytes}.
 */
public enum ColumnType {
    STRING(1, "string"),
    INTEGER(2, "integer"),
    FLOAT(3, "float"),
    BOOLEAN(4, "boolean"),
    JSON(5, "json"),
    BYTES(6, "bytes"),
    BLOB_REF(7, "blob_ref"),
    CRDT(8, "crdt");

    private static final ColumnType[] BY_TAG = new ColumnType[9];

    static {
        for (ColumnType t : values()) {
            BY_TAG[t.tag] = t;
        }
    }

    public final int tag;
    public final String wireName;

    ColumnType(int tag, String wireName) {
        this.tag = tag;
        this.wireName = wireName;
    }

    /** The type for a wire tag; an unknown tag is a decode error (§5.2). */
    public static ColumnType ofTag(int tag) {
        if (tag < 1 || tag >= BY_TAG.length) {
            throw WireException.invalid("unknown column type tag");
        }
        return BY_TAG[tag];
    }

    /** The type for its schema-IR / rendering name, or {@code null} when unknown. */
    public static ColumnType ofName(String name) {
        for (ColumnType t : values()) {
            if (t.wireName.equals(name)) {
                return t;
            }
        }
        return null;
    }

    /** True for types whose wire form is a {@code str} holding a JSON document. */
    public boolean isJsonText() {
        return this == JSON || this == BLOB_REF;
    }

    /**
     * The {@code rowId} string form of a primary-key value of this type (§2.4 primary-key eligibility):
     * strings as is, integers in decimal, booleans as {@code true}/{@code false}, json as its raw text.
     */
    public String rowIdOf(Object value) {
        return switch (this) {
            case STRING, JSON -> (String) value;
            case INTEGER -> Long.toString((Long) value);
            case BOOLEAN -> Boolean.toString((Boolean) value);
            default -> throw new IllegalArgumentException("ineligible primary-key type");
        };
    }

    /** True for types whose wire form is {@code bytes}. */
    public boolean isBinary() {
        return this == BYTES || this == CRDT;
    }
}
