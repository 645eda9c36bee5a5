package dev.syncular.server.schema;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.wire.ColumnType;
import java.util.List;

/**
 * The parsed schema document (§2.4 schema IR, or the short host form): the plain model that
 * {@link SchemaIrParser} reads from JSON and {@link SchemaCompiler} compiles into a {@link CompiledSchema}.
 *
 * <p>Everything here is well-formed JSON of the right shape — required fields present, strings, booleans
 * and column-type names (§2.4 tags) valid — but none of the §2.4/§3.1/§5.10.1/§5.11/§6.11 rules between
 * fields has been checked yet: identifiers, duplicates, primary-key eligibility, scope patterns, CRDT and
 * encryption metadata and references are the compiler's. Lists keep declaration order.
 *
 * @param irForm         whether the document is the typegen IR ({@code irVersion} present) rather than the
 *                       short host form
 * @param version        {@code schemaVersion} (or {@code version}); at least 1
 * @param schemaVersions the {@code schemaVersions} history, strictly increasing and ending at {@code version}
 * @param tables         the synced tables
 * @param subscriptions  the raw {@code subscriptions} array, or {@code null} when absent
 * @param subscriptionRefs what each subscription template names, in order; empty when absent
 * @param extensions     the raw document-level {@code extensions} object, or {@code null} when absent
 */
record SchemaIr(
        boolean irForm,
        int version,
        List<SchemaVersionEntry> schemaVersions,
        List<Table> tables,
        JsonNode subscriptions,
        List<Subscription> subscriptionRefs,
        JsonNode extensions) {

    /**
     * One declared table.
     *
     * @param extensions the raw {@code extensions} object, or {@code null} when absent
     */
    record Table(
            String name,
            List<Column> columns,
            String primaryKey,
            List<Scope> scopes,
            List<Index> indexes,
            List<Reference> references,
            JsonNode extensions) {}

    /**
     * One declared column (§2.4), before the §5.10.1/§5.11 metadata rules.
     *
     * @param crdtType     the declared {@code crdtType}, or {@code null} when absent
     * @param declaredType the declared {@code declaredType}, or {@code null} when absent
     */
    record Column(
            String name,
            ColumnType type,
            boolean nullable,
            String crdtType,
            boolean encrypted,
            ColumnType declaredType) {}

    /**
     * One declared scope (§3.1): a {@code "prefix:{var}"} string, or a {@code {pattern, variable, column}}
     * object.
     *
     * @param variable the object's {@code variable}, or {@code null} when not declared
     * @param column   the object's {@code column}, or {@code null} when it defaults to the variable
     */
    record Scope(String pattern, String variable, String column) {}

    /** One declared secondary index; {@code columns} as listed. */
    record Index(String name, List<String> columns, boolean unique) {}

    /** One declared reference (§6.11); {@code onDelete} is {@code RESTRICT} when absent. */
    record Reference(String column, String parentTable, ReferenceDef.OnDelete onDelete) {}

    /** What one subscription template names: its {@code name}, {@code table} and scope variables. */
    record Subscription(String name, String table, List<String> variables) {}
}
