package dev.syncular.server.schema;

import java.util.List;

/** One entry of the schema IR's {@code schemaVersions} history: a version and the migrations it added. */
public record SchemaVersionEntry(int version, List<String> migrations) {
    public SchemaVersionEntry {
        migrations = List.copyOf(migrations);
    }
}
