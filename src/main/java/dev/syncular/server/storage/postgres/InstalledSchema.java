package dev.syncular.server.storage.postgres;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.StorageException;
import java.util.HashMap;
import java.util.Map;

/**
 * The compiled schema a storage instance was last ensured at (§2.4) and its {@link RowTable}s: the row
 * codec, scope keys and statement texts of every synced table, and the writer version of every append. The
 * only state the storage caches; installed by {@link StorageSchemaMigration} once the schema is ready.
 */
final class InstalledSchema {
    private final String pgSchema;
    private volatile CompiledSchema schema;
    private volatile Map<String, RowTable> tables = Map.of();

    InstalledSchema(String pgSchema) {
        this.pgSchema = pgSchema;
    }

    /** The running schema, or null before {@code ensureSchema} completed. */
    CompiledSchema schema() {
        return schema;
    }

    void install(CompiledSchema running) {
        Map<String, RowTable> m = new HashMap<>();
        for (TableSchema ts : running.tables()) {
            m.put(ts.name(), new RowTable(ts, PgSql.qualified(pgSchema, RowTable.physicalName(ts.name()))));
        }
        this.tables = Map.copyOf(m);
        this.schema = running;
    }

    /** The synced table, or null when the running schema has none of that name (or none is installed). */
    RowTable tableOrNull(String name) {
        return tables.get(name);
    }

    /** The synced table; fails with {@code sync.storage.invalid_argument} before ensureSchema or when unknown. */
    RowTable table(String name) {
        if (schema == null) {
            throw new StorageException(StorageException.INVALID_ARGUMENT, "ensureSchema has not completed", Map.of());
        }
        RowTable rt = tables.get(name);
        if (rt == null) {
            throw new StorageException(
                    StorageException.INVALID_ARGUMENT, "unknown synced table", Map.of("table", name));
        }
        return rt;
    }
}
