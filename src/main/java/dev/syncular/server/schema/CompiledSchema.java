package dev.syncular.server.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A compiled, validated schema of one {@code schemaVersion}: synced tables in declaration order (the
 * handler-declared bootstrap order, §4.7), the schema-version history, and the raw subscription
 * templates and {@code extensions}. Immutable; built by {@link SchemaLoader} (compiled by {@code SchemaCompiler}).
 */
public final class CompiledSchema {
    private final int version;
    private final List<TableSchema> tables;
    private final Map<String, TableSchema> byName;
    private final List<SchemaVersionEntry> schemaVersions;
    private final JsonNode subscriptions;
    private final JsonNode extensions;

    CompiledSchema(
            int version,
            List<TableSchema> tables,
            List<SchemaVersionEntry> schemaVersions,
            JsonNode subscriptions,
            JsonNode extensions) {
        this.version = version;
        this.tables = List.copyOf(tables);
        Map<String, TableSchema> m = new LinkedHashMap<>();
        for (TableSchema t : this.tables) {
            m.put(t.name(), t);
        }
        this.byName = Collections.unmodifiableMap(m);
        this.schemaVersions = List.copyOf(schemaVersions);
        this.subscriptions = subscriptions == null ? JsonNodeFactory.instance.arrayNode() : subscriptions.deepCopy();
        this.extensions = extensions == null ? JsonNodeFactory.instance.objectNode() : extensions.deepCopy();
    }

    /** The schema version ({@code schemaVersion}, or {@code version} in the short form); at least 1. */
    public int version() {
        return version;
    }

    /** Tables in declaration order. */
    public List<TableSchema> tables() {
        return tables;
    }

    /** The named table, or {@code null}. */
    public TableSchema table(String name) {
        return byName.get(name);
    }

    public boolean hasTable(String name) {
        return byName.containsKey(name);
    }

    public List<String> tableNames() {
        return new ArrayList<>(byName.keySet());
    }

    /** The IR's {@code schemaVersions} history (empty for the short form). */
    public List<SchemaVersionEntry> schemaVersions() {
        return schemaVersions;
    }

    /** A copy of the raw {@code subscriptions} array (empty array when absent). */
    public JsonNode subscriptions() {
        return subscriptions.deepCopy();
    }

    /** A copy of the raw document-level {@code extensions} object (empty object when absent). */
    public JsonNode extensions() {
        return extensions.deepCopy();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CompiledSchema s
                && s.version == version
                && s.tables.equals(tables)
                && s.schemaVersions.equals(schemaVersions)
                && s.subscriptions.equals(subscriptions)
                && s.extensions.equals(extensions);
    }

    @Override
    public int hashCode() {
        return Objects.hash(version, tables, schemaVersions);
    }

    @Override
    public String toString() {
        return "CompiledSchema[version=" + version + ", tables=" + byName.keySet() + "]";
    }
}
