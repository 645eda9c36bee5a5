package dev.syncular.server.schema;

import static dev.syncular.server.schema.SchemaFixtures.base;
import static dev.syncular.server.schema.SchemaFixtures.column;
import static dev.syncular.server.schema.SchemaFixtures.columnNamed;
import static dev.syncular.server.schema.SchemaFixtures.columns;
import static dev.syncular.server.schema.SchemaFixtures.docsTable;
import static dev.syncular.server.schema.SchemaFixtures.table;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** One test per compile-time rejection rule; each asserts the reason, the details and the message. */
class SchemaLoaderRejectionTest {

    private static SchemaException reject(ObjectNode root, String reason) {
        return reject(root.toString(), reason);
    }

    private static SchemaException reject(String json, String reason) {
        SchemaException e = assertThrows(SchemaException.class, () -> SchemaLoader.parse(json));
        assertEquals(SchemaException.CODE, e.code());
        assertEquals(reason, e.reason(), () -> "message was: " + e.getMessage());
        return e;
    }

    private static void assertNames(SchemaException e, String table, String column) {
        assertTrue(e.getMessage().contains("table \"" + table + "\""), e.getMessage());
        assertEquals(table, e.details().get("table"), e.details().toString());
        if (column != null) {
            assertTrue(e.getMessage().contains("\"" + column + "\""), e.getMessage());
            assertEquals(column, e.details().get("column"), e.details().toString());
        }
    }

    private static ArrayNode tables(ObjectNode root) {
        return (ArrayNode) root.get("tables");
    }

    // ---------------------------------------------------------------- document level

    @Test
    void invalidJson() {
        reject("{\"version\": 1, \"tables\": [", "invalid_json");
    }

    @Test
    void duplicateJsonKeys() {
        reject("{\"version\": 1, \"version\": 2, \"tables\": []}", "invalid_json");
    }

    @Test
    void irVersionOtherThanOne() {
        ObjectNode root = base();
        root.put("irVersion", 2);
        SchemaException e = reject(root, "ir_version");
        assertTrue(e.getMessage().contains("irVersion must be 1"), e.getMessage());
    }

    @Test
    void schemaVersionBelowOne() {
        ObjectNode root = base();
        root.remove("version");
        root.put("schemaVersion", 0);
        SchemaException e = reject(root, "schema_version");
        assertTrue(e.getMessage().contains("\"schemaVersion\" must be an integer >= 1"), e.getMessage());
    }

    @Test
    void missingVersion() {
        ObjectNode root = base();
        root.remove("version");
        reject(root, "schema_version");
    }

    @Test
    void conflictingVersionKeys() {
        ObjectNode root = base();
        root.put("schemaVersion", 2);
        reject(root, "schema_version");
    }

    @Test
    void schemaVersionsHistoryNotEndingAtCurrent() {
        ObjectNode root = base();
        root.putArray("schemaVersions").addObject().put("version", 2);
        reject(root, "schema_versions");
    }

    @Test
    void missingTables() {
        ObjectNode root = base();
        root.remove("tables");
        reject(root, "tables_missing");
    }

    // ---------------------------------------------------------------- tables and columns

    @Test
    void duplicateTable() {
        ObjectNode root = base();
        tables(root).add(docsTable("docs"));
        assertNames(reject(root, "duplicate_table"), "docs", null);
    }

    @Test
    void duplicateTableIgnoringCase() {
        ObjectNode root = base();
        tables(root).add(docsTable("DOCS"));
        assertNames(reject(root, "duplicate_table"), "DOCS", null);
    }

    @Test
    void duplicateColumn() {
        ObjectNode root = base();
        columns(root, 0).add(column("body", "integer", true));
        SchemaException e = reject(root, "duplicate_column");
        assertNames(e, "docs", "body");
        assertEquals("table \"docs\": duplicate column \"body\"", e.getMessage());
    }

    @Test
    void emptyColumns() {
        ObjectNode root = base();
        table(root, 0).putArray("columns");
        assertNames(reject(root, "columns_missing"), "docs", null);
    }

    @Test
    void unknownColumnType() {
        ObjectNode root = base();
        columnNamed(root, 0, "body").put("type", "text");
        SchemaException e = reject(root, "unknown_type");
        assertNames(e, "docs", "body");
        assertTrue(e.getMessage().contains("unknown column type \"text\""), e.getMessage());
    }

    @Test
    void missingNullable() {
        ObjectNode root = base();
        columnNamed(root, 0, "body").remove("nullable");
        assertNames(reject(root, "nullable_missing"), "docs", "body");
    }

    @ParameterizedTest
    @ValueSource(strings = {"_sync_row_id", "_sync_version", "_syncular_meta", "_SYNC_partition"})
    void reservedColumnName(String name) {
        ObjectNode root = base();
        columns(root, 0).add(column(name, "string", true));
        SchemaException e = reject(root, "reserved_identifier");
        assertNames(e, "docs", name);
        assertTrue(e.getMessage().contains("reserved prefix"), e.getMessage());
    }

    @Test
    void reservedTableName() {
        ObjectNode root = base();
        tables(root).add(docsTable("_syncular_blobs"));
        assertNames(reject(root, "reserved_identifier"), "_syncular_blobs", null);
    }

    @Test
    void overlongColumnName() {
        ObjectNode root = base();
        String name = "c".repeat(SchemaLoader.MAX_IDENTIFIER_BYTES + 1);
        columns(root, 0).add(column(name, "string", true));
        SchemaException e = reject(root, "identifier_too_long");
        assertNames(e, "docs", name);
        assertTrue(e.getMessage().contains("64 bytes long; the limit is 63"), e.getMessage());
    }

    @Test
    void overlongTableName() {
        ObjectNode root = base();
        String name = "t".repeat(64);
        tables(root).add(docsTable(name));
        assertNames(reject(root, "identifier_too_long"), name, null);
    }

    @ParameterizedTest
    @ValueSource(strings = {"my-col", "1abc", "has space", "quote\"d", "é"})
    void invalidColumnIdentifier(String name) {
        ObjectNode root = base();
        columns(root, 0).add(column(name, "string", true));
        assertNames(reject(root, "invalid_identifier"), "docs", name);
    }

    @Test
    void invalidTableIdentifier() {
        ObjectNode root = base();
        table(root, 0).put("name", "my.docs");
        assertNames(reject(root, "invalid_identifier"), "my.docs", null);
    }

    // ---------------------------------------------------------------- primary key

    @Test
    void primaryKeyNamesNoColumn() {
        ObjectNode root = base();
        table(root, 0).put("primaryKey", "uuid");
        SchemaException e = reject(root, "primary_key_unknown_column");
        assertNames(e, "docs", "uuid");
        assertEquals("table \"docs\": primary key \"uuid\" is not a column of the table", e.getMessage());
    }

    @Test
    void primaryKeyMissing() {
        ObjectNode root = base();
        table(root, 0).remove("primaryKey");
        assertNames(reject(root, "primary_key_missing"), "docs", null);
    }

    @ParameterizedTest
    @ValueSource(strings = {"float", "bytes", "crdt", "blob_ref"})
    void primaryKeyIneligibleType(String type) {
        ObjectNode root = base();
        ObjectNode id = columnNamed(root, 0, "id").put("type", type);
        if (type.equals("crdt")) {
            id.put("crdtType", "yjs-doc");
        }
        SchemaException e = reject(root, "primary_key_ineligible_type");
        assertNames(e, "docs", "id");
        assertEquals(type, e.details().get("type"));
        assertTrue(e.getMessage().contains("has type " + type + ", which is not eligible"), e.getMessage());
    }

    @Test
    void nullablePrimaryKey() {
        ObjectNode root = base();
        columnNamed(root, 0, "id").put("nullable", true);
        assertNames(reject(root, "primary_key_nullable"), "docs", "id");
    }

    @Test
    void encryptedPrimaryKey() {
        ObjectNode root = base();
        columnNamed(root, 0, "id").put("type", "bytes").put("encrypted", true).put("declaredType", "string");
        assertNames(reject(root, "primary_key_encrypted"), "docs", "id");
    }

    // ---------------------------------------------------------------- scopes

    @Test
    void tableWithoutScopes() {
        ObjectNode root = base();
        table(root, 0).remove("scopes");
        SchemaException e = reject(root, "scopes_missing");
        assertNames(e, "docs", null);
        assertTrue(e.getMessage().contains("at least one scope pattern"), e.getMessage());
    }

    @Test
    void tableWithEmptyScopes() {
        ObjectNode root = base();
        table(root, 0).putArray("scopes");
        assertNames(reject(root, "scopes_missing"), "docs", null);
    }

    @Test
    void patternWithTwoVariables() {
        ObjectNode root = base();
        table(root, 0).putArray("scopes").add("org:{a}{b}");
        SchemaException e = reject(root, "scope_pattern_variable_count");
        assertEquals(
                "table \"docs\": scope pattern \"org:{a}{b}\" must contain exactly one {variable}", e.getMessage());
        assertEquals("docs", e.details().get("table"));
        assertEquals("org:{a}{b}", e.details().get("pattern"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"org", "org:{}", "org:}x{", "org:{a", "org:{a}}"})
    void patternWithoutExactlyOneVariable(String pattern) {
        ObjectNode root = base();
        table(root, 0).putArray("scopes").add(pattern);
        assertNames(reject(root, "scope_pattern_variable_count"), "docs", null);
    }

    @ParameterizedTest
    @ValueSource(strings = {"{org_id}", ":{org_id}", "org{org_id}", "org:{org_id}:x", "o g:{org_id}"})
    void patternNotOfPrefixVariableShape(String pattern) {
        ObjectNode root = base();
        table(root, 0).putArray("scopes").addObject().put("pattern", pattern).put("column", "org_id");
        assertNames(reject(root, "scope_pattern_shape"), "docs", null);
    }

    @Test
    void patternWithInvalidVariable() {
        ObjectNode root = base();
        table(root, 0)
                .putArray("scopes")
                .addObject()
                .put("pattern", "org:{org-id}")
                .put("column", "org_id");
        assertNames(reject(root, "scope_variable_invalid"), "docs", null);
    }

    @Test
    void scopeColumnNotInTable() {
        ObjectNode root = base();
        table(root, 0).putArray("scopes").add("project:{project_id}");
        SchemaException e = reject(root, "scope_column_unknown");
        assertNames(e, "docs", "project_id");
        assertEquals(
                "table \"docs\": scope pattern \"project:{project_id}\" maps variable \"project_id\""
                        + " to column \"project_id\", which is not a column of the table",
                e.getMessage());
    }

    @Test
    void scopeObjectColumnNotInTable() {
        ObjectNode root = base();
        table(root, 0)
                .putArray("scopes")
                .addObject()
                .put("pattern", "org:{orgId}")
                .put("column", "organisation");
        assertNames(reject(root, "scope_column_unknown"), "docs", "organisation");
    }

    @Test
    void variableMappedToTwoColumns() {
        ObjectNode root = base();
        ArrayNode scopes = table(root, 0).putArray("scopes");
        scopes.add("org:{org_id}");
        scopes.addObject().put("pattern", "team:{org_id}").put("column", "body");
        SchemaException e = reject(root, "scope_variable_conflict");
        assertNames(e, "docs", "body");
        assertTrue(
                e.getMessage().contains("\"org_id\" maps to two different columns, \"org_id\" and \"body\""),
                e.getMessage());
    }

    @Test
    void variableDeclaredTwice() {
        ObjectNode root = base();
        ArrayNode scopes = table(root, 0).putArray("scopes");
        scopes.add("org:{org_id}");
        scopes.add("tenant:{org_id}");
        assertNames(reject(root, "scope_variable_duplicate"), "docs", "org_id");
    }

    @Test
    void irScopeVariableDisagreesWithPattern() {
        ObjectNode root = base();
        table(root, 0)
                .putArray("scopes")
                .addObject()
                .put("pattern", "org:{org_id}")
                .put("variable", "orgId")
                .put("column", "org_id");
        assertNames(reject(root, "scope_variable_mismatch"), "docs", null);
    }

    @ParameterizedTest
    @ValueSource(strings = {"blob", "doc"})
    void binaryScopeColumn(String col) {
        ObjectNode root = base();
        table(root, 0).putArray("scopes").addObject().put("pattern", "x:{x}").put("column", col);
        assertNames(reject(root, "scope_column_type"), "docs", col);
    }

    @Test
    void encryptedScopeColumn() {
        ObjectNode root = base();
        columnNamed(root, 0, "org_id")
                .put("type", "bytes")
                .put("encrypted", true)
                .put("declaredType", "string");
        assertNames(reject(root, "scope_column_encrypted"), "docs", "org_id");
    }

    // ---------------------------------------------------------------- crdt

    @Test
    void crdtTypeOnNonCrdtColumn() {
        ObjectNode root = base();
        columnNamed(root, 0, "blob").put("crdtType", "yjs-doc");
        SchemaException e = reject(root, "crdt_type_unexpected");
        assertNames(e, "docs", "blob");
        assertTrue(e.getMessage().contains("only allowed on a crdt column, not on a bytes column"), e.getMessage());
    }

    @Test
    void crdtColumnWithoutCrdtTypeInIr() {
        ObjectNode root = base();
        root.put("irVersion", 1);
        columnNamed(root, 0, "doc").remove("crdtType");
        assertNames(reject(root, "crdt_type_missing"), "docs", "doc");
    }

    @Test
    void unknownCrdtType() {
        ObjectNode root = base();
        columnNamed(root, 0, "doc").put("crdtType", "automerge");
        SchemaException e = reject(root, "crdt_type_unknown");
        assertNames(e, "docs", "doc");
        assertTrue(e.getMessage().contains("unknown crdtType \"automerge\""), e.getMessage());
    }

    // ---------------------------------------------------------------- encryption

    @Test
    void encryptedColumnNotBytes() {
        ObjectNode root = base();
        columnNamed(root, 0, "body").put("encrypted", true).put("declaredType", "string");
        SchemaException e = reject(root, "encrypted_type");
        assertNames(e, "docs", "body");
        assertTrue(e.getMessage().contains("wire type bytes, not string"), e.getMessage());
    }

    @Test
    void encryptedColumnWithoutDeclaredType() {
        ObjectNode root = base();
        columnNamed(root, 0, "blob").put("encrypted", true);
        assertNames(reject(root, "declared_type_missing"), "docs", "blob");
    }

    @Test
    void encryptedColumnWithUnknownDeclaredType() {
        ObjectNode root = base();
        columnNamed(root, 0, "blob").put("encrypted", true).put("declaredType", "text");
        assertNames(reject(root, "declared_type_unknown"), "docs", "blob");
    }

    @Test
    void declaredTypeWithoutEncrypted() {
        ObjectNode root = base();
        columnNamed(root, 0, "blob").put("declaredType", "string");
        assertNames(reject(root, "declared_type_unexpected"), "docs", "blob");
    }

    @Test
    void encryptedCrdtColumn() {
        ObjectNode root = base();
        columnNamed(root, 0, "blob").put("encrypted", true).put("declaredType", "crdt");
        assertNames(reject(root, "encrypted_crdt"), "docs", "blob");
    }

    // ---------------------------------------------------------------- indexes

    @Test
    void indexOnUnknownColumn() {
        ObjectNode root = base();
        ObjectNode idx = table(root, 0).putArray("indexes").addObject().put("name", "idx_docs_x");
        idx.putArray("columns").add("x");
        assertNames(reject(root, "index_column_unknown"), "docs", "x");
    }

    @Test
    void duplicateIndexNameAcrossTables() {
        ObjectNode root = base();
        ObjectNode other = docsTable("other");
        tables(root).add(other);
        table(root, 0)
                .putArray("indexes")
                .addObject()
                .put("name", "idx_a")
                .putArray("columns")
                .add("body");
        other.putArray("indexes")
                .addObject()
                .put("name", "idx_a")
                .putArray("columns")
                .add("body");
        assertNames(reject(root, "index_duplicate"), "other", null);
    }

    // ---------------------------------------------------------------- references (§6.11)

    private static ObjectNode withChild(ObjectNode root, String column, String parent, String onDelete) {
        ObjectNode child = docsTable("children");
        ObjectNode ref =
                child.putArray("references").addObject().put("column", column).put("parentTable", parent);
        if (onDelete != null) {
            ref.put("onDelete", onDelete);
        }
        tables(root).add(child);
        return child;
    }

    @Test
    void referenceColumnNotInTable() {
        ObjectNode root = base();
        withChild(root, "doc_id", "docs", "CASCADE");
        SchemaException e = reject(root, "reference_column_unknown");
        assertNames(e, "children", "doc_id");
    }

    @Test
    void referenceParentNotInSchema() {
        ObjectNode root = base();
        withChild(root, "ref", "documents", "CASCADE");
        SchemaException e = reject(root, "reference_parent_unknown");
        assertNames(e, "children", "ref");
        assertTrue(e.getMessage().contains("references table \"documents\", which is not a table"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"NO ACTION", "SET DEFAULT", "cascade", "SET_NULL"})
    void referenceOnDeleteNotAllowed(String onDelete) {
        ObjectNode root = base();
        withChild(root, "ref", "docs", onDelete);
        assertNames(reject(root, "reference_on_delete"), "children", "ref");
    }

    @Test
    void referenceTypeDiffersFromParentPrimaryKey() {
        ObjectNode root = base();
        ObjectNode child = withChild(root, "ref", "docs", "RESTRICT");
        ((ObjectNode) child.get("columns").get(6)).put("type", "integer");
        assertNames(reject(root, "reference_type_mismatch"), "children", "ref");
    }

    @Test
    void referenceAcrossDifferentScopePatterns() {
        ObjectNode root = base();
        ObjectNode child = withChild(root, "ref", "docs", "CASCADE");
        child.putArray("scopes").add("tenant:{org_id}");
        assertNames(reject(root, "reference_scope_mismatch"), "children", "ref");
    }

    @Test
    void setNullOnNonNullableColumn() {
        ObjectNode root = base();
        ObjectNode child = withChild(root, "body", "docs", "SET NULL");
        assertNames(reject(root, "reference_set_null_not_nullable"), "children", "body");
    }

    @Test
    void twoReferencesOnOneColumn() {
        ObjectNode root = base();
        ObjectNode child = withChild(root, "ref", "docs", "CASCADE");
        ((ArrayNode) child.get("references")).addObject().put("column", "ref").put("parentTable", "docs");
        assertNames(reject(root, "reference_duplicate"), "children", "ref");
    }

    // ---------------------------------------------------------------- subscriptions

    @Test
    void subscriptionToUnknownTable() {
        ObjectNode root = base();
        root.putArray("subscriptions")
                .addObject()
                .put("name", "s")
                .put("table", "nope")
                .putArray("scopes");
        assertNames(reject(root, "subscription_table_unknown"), "nope", null);
    }

    @Test
    void subscriptionWithUndeclaredVariable() {
        ObjectNode root = base();
        root.putArray("subscriptions")
                .addObject()
                .put("name", "s")
                .put("table", "docs")
                .putArray("scopes")
                .addObject()
                .put("variable", "project_id");
        assertNames(reject(root, "subscription_variable_unknown"), "docs", null);
    }
}
