package dev.syncular.server.schema;

import java.util.List;
import java.util.Objects;

/**
 * One secondary index declared on a synced table (schema IR {@code indexes}); {@code columns} keep
 * their declared order (a compound index is order-sensitive). A {@code unique} one is enforced by the storage,
 * unique within a partition (a key with a NULL part never collides); the others only reach clients.
 */
public record IndexDef(String name, List<String> columns, boolean unique) {
    public IndexDef {
        Objects.requireNonNull(name, "name");
        columns = List.copyOf(columns);
    }
}
