package dev.syncular.server.schema;

import dev.syncular.server.wire.ColumnDef;
import dev.syncular.server.wire.ColumnType;
import java.util.Objects;

/**
 * One column of a synced table, in schema-IR declaration order (the row codec's positional order, §2.4).
 *
 * @param name         the column name
 * @param type         the wire/codec type; {@code bytes} for an encrypted column (§5.11)
 * @param nullable     whether NULL is allowed (on the wire, part of the SSG2 column record)
 * @param crdtType     the merger name of a {@code crdt} column (§5.10.1), else {@code null}; IR metadata only
 * @param encrypted    whether the column is end-to-end encrypted (§5.11); IR metadata only
 * @param declaredType the app-side type of an encrypted column, else {@code null}; IR metadata only
 */
public record ColumnSchema(
        String name, ColumnType type, boolean nullable, String crdtType, boolean encrypted, ColumnType declaredType) {

    public ColumnSchema {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
    }

    /** A plain column: no CRDT, no encryption. */
    public static ColumnSchema of(String name, ColumnType type, boolean nullable) {
        return new ColumnSchema(name, type, nullable, null, false, null);
    }

    /** The wire column record: name, type, nullable (§5.2); IR metadata is dropped. */
    public ColumnDef toColumnDef() {
        return new ColumnDef(name, type, nullable);
    }

    /** The application-facing type: {@link #declaredType()} when encrypted, else {@link #type()}. */
    public ColumnType appType() {
        return encrypted && declaredType != null ? declaredType : type;
    }

    public boolean isCrdt() {
        return type == ColumnType.CRDT;
    }
}
