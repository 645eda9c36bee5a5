package dev.syncular.server.schema;

import java.util.List;
import java.util.Objects;

/**
 * One secondary index declared on a synced table (schema IR {@code indexes}); {@code columns} keep
 * their declared order (a compound index is order-sensitive).
 */
public record IndexDef(String name, List<String> columns, boolean unique) {
    public IndexDef {
        Objects.requireNonNull(name, "name");
        columns = List.copyOf(columns);
    }
}
