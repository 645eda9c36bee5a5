package dev.syncular.server.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.syncular.server.wire.ColumnDef;
import dev.syncular.server.wire.RowLayout;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One compiled synced table: columns in declaration order (the row-codec order, §2.4), the primary key,
 * the scope patterns (§3.1), indexes, declared references (§6.11) and the raw {@code extensions} slot.
 * Immutable; built by {@code SchemaCompiler} (through {@link SchemaLoader}), which has already validated it.
 */
public final class TableSchema {
    private final String name;
    private final List<ColumnSchema> columns;
    private final Map<String, Integer> columnIndexes;
    private final String primaryKey;
    private final int primaryKeyIndex;
    private final RowLayout rowLayout;
    private final List<ScopePattern> scopePatterns;
    private final Map<String, ScopePattern> scopesByVariable;
    private final List<String> scopeVariables;
    private final List<IndexDef> indexes;
    private final List<ReferenceDef> references;
    private final JsonNode extensions;

    TableSchema(
            String name,
            List<ColumnSchema> columns,
            String primaryKey,
            List<ScopePattern> scopePatterns,
            List<IndexDef> indexes,
            List<ReferenceDef> references,
            JsonNode extensions) {
        this.name = Objects.requireNonNull(name, "name");
        this.columns = List.copyOf(columns);
        Map<String, Integer> idx = new HashMap<>();
        List<ColumnDef> defs = new ArrayList<>(this.columns.size());
        for (int i = 0; i < this.columns.size(); i++) {
            ColumnSchema c = this.columns.get(i);
            idx.put(c.name(), i);
            defs.add(c.toColumnDef());
        }
        this.columnIndexes = Collections.unmodifiableMap(idx);
        this.primaryKey = Objects.requireNonNull(primaryKey, "primaryKey");
        Integer pk = idx.get(primaryKey);
        if (pk == null) {
            throw new IllegalArgumentException("primary key is not a column");
        }
        this.primaryKeyIndex = pk;
        this.rowLayout = new RowLayout(defs, pk);
        this.scopePatterns = List.copyOf(scopePatterns);
        Map<String, ScopePattern> byVar = new LinkedHashMap<>();
        for (ScopePattern p : this.scopePatterns) {
            byVar.putIfAbsent(p.variable(), p);
        }
        this.scopesByVariable = Collections.unmodifiableMap(byVar);
        this.scopeVariables = List.copyOf(byVar.keySet());
        this.indexes = List.copyOf(indexes);
        this.references = List.copyOf(references);
        this.extensions = extensions == null ? JsonNodeFactory.instance.objectNode() : extensions.deepCopy();
    }

    public String name() {
        return name;
    }

    /** Columns in schema-IR declaration order. */
    public List<ColumnSchema> columns() {
        return columns;
    }

    public int columnCount() {
        return columns.size();
    }

    /** Index of the named column in declaration order, or {@code -1}. */
    public int columnIndex(String columnName) {
        Integer i = columnIndexes.get(columnName);
        return i == null ? -1 : i;
    }

    /** The named column, or {@code null}. */
    public ColumnSchema column(String columnName) {
        Integer i = columnIndexes.get(columnName);
        return i == null ? null : columns.get(i);
    }

    public ColumnSchema column(int index) {
        return columns.get(index);
    }

    public boolean hasColumn(String columnName) {
        return columnIndexes.containsKey(columnName);
    }

    /** The primary-key column name. */
    public String primaryKey() {
        return primaryKey;
    }

    public int primaryKeyIndex() {
        return primaryKeyIndex;
    }

    public ColumnSchema primaryKeyColumn() {
        return columns.get(primaryKeyIndex);
    }

    /** The positional row-codec layout (§2.4) with the primary-key index set. */
    public RowLayout rowLayout() {
        return rowLayout;
    }

    /** Scope patterns in declaration order (§3.1); never empty. */
    public List<ScopePattern> scopePatterns() {
        return scopePatterns;
    }

    /** Declared scope variables, in pattern declaration order. */
    public List<String> scopeVariables() {
        return scopeVariables;
    }

    public boolean hasScopeVariable(String variable) {
        return scopesByVariable.containsKey(variable);
    }

    /** The column the variable maps to, or {@code null} when the table does not declare it. */
    public String scopeColumnFor(String variable) {
        ScopePattern p = scopesByVariable.get(variable);
        return p == null ? null : p.column();
    }

    /** The pattern declaring the variable, or {@code null}. */
    public ScopePattern scopePatternFor(String variable) {
        return scopesByVariable.get(variable);
    }

    public List<IndexDef> indexes() {
        return indexes;
    }

    /** Declared references (§6.11) in declaration order; empty when none. */
    public List<ReferenceDef> references() {
        return references;
    }

    /** The reference declared on the column, or {@code null}. */
    public ReferenceDef referenceOn(String columnName) {
        for (ReferenceDef r : references) {
            if (r.column().equals(columnName)) {
                return r;
            }
        }
        return null;
    }

    /** A copy of the table's raw {@code extensions} object (empty object when absent). */
    public JsonNode extensions() {
        return extensions.deepCopy();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TableSchema t
                && t.name.equals(name)
                && t.columns.equals(columns)
                && t.primaryKey.equals(primaryKey)
                && t.scopePatterns.equals(scopePatterns)
                && t.indexes.equals(indexes)
                && t.references.equals(references)
                && t.extensions.equals(extensions);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, columns, primaryKey, scopePatterns, indexes, references);
    }

    @Override
    public String toString() {
        return "TableSchema[" + name + ", pk=" + primaryKey + ", columns=" + columns + ", scopes=" + scopePatterns
                + "]";
    }
}
