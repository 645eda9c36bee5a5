package dev.syncular.server.wire;

import java.util.Objects;

/** One column of a row layout: the SSG2 column record (§5.2) and the row codec's positional slot (§2.4). */
public record ColumnDef(String name, ColumnType type, boolean nullable) {
    public ColumnDef {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
    }
}
