package dev.syncular.server.schema;

import static dev.syncular.server.schema.SchemaFixtures.base;
import static dev.syncular.server.schema.SchemaFixtures.column;
import static dev.syncular.server.schema.SchemaFixtures.columns;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.wire.ColumnType;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The parsed model: what {@link SchemaIrParser} reads, before any compile-time rule is applied. */
class SchemaIrParserTest {

    private static SchemaIr read(String json) {
        return SchemaIrParser.parse(SchemaIrParser.readTree(json));
    }

    @Test
    void shortFormReadsIntoThePlainModel() {
        SchemaIr ir = read(base().toString());
        assertFalse(ir.irForm());
        assertEquals(1, ir.version());
        assertTrue(ir.schemaVersions().isEmpty());
        assertNull(ir.subscriptions());
        assertNull(ir.extensions());
        SchemaIr.Table docs = ir.tables().get(0);
        assertEquals("docs", docs.name());
        assertEquals("id", docs.primaryKey());
        assertEquals(
                new SchemaIr.Column("id", ColumnType.STRING, false, null, false, null),
                docs.columns().get(0));
        assertEquals(
                new SchemaIr.Column("doc", ColumnType.CRDT, true, "yjs-doc", false, null),
                docs.columns().get(4));
    }

    @Test
    void scopeStringsAndObjectsKeepWhatWasDeclared() {
        SchemaIr ir = read("""
                {"irVersion": 1, "schemaVersion": 2,
                 "schemaVersions": [{"version": 1}, {"version": 2, "migrations": ["m2"]}],
                 "tables": [{"name": "t", "primaryKey": "id",
                   "columns": [{"name": "id", "type": "string", "nullable": false},
                               {"name": "org_id", "type": "string", "nullable": false}],
                   "scopes": ["id:{id}", {"pattern": "org:{orgId}", "variable": "orgId", "column": "org_id"}],
                   "references": [{"column": "org_id", "parentTable": "t"}]}],
                 "subscriptions": [{"name": "a", "table": "t", "scopes": [{"variable": "orgId"}]},
                                   {"name": "b", "table": "t", "scopes": {"id": "x"}}]}
                """);
        assertTrue(ir.irForm());
        assertEquals(
                List.of(new SchemaVersionEntry(1, List.of()), new SchemaVersionEntry(2, List.of("m2"))),
                ir.schemaVersions());
        SchemaIr.Table t = ir.tables().get(0);
        assertEquals(
                List.of(
                        new SchemaIr.Scope("id:{id}", null, null),
                        new SchemaIr.Scope("org:{orgId}", "orgId", "org_id")),
                t.scopes());
        assertEquals(List.of(new SchemaIr.Reference("org_id", "t", ReferenceDef.OnDelete.RESTRICT)), t.references());
        assertEquals(
                List.of(
                        new SchemaIr.Subscription("a", "t", List.of("orgId")),
                        new SchemaIr.Subscription("b", "t", List.of("id"))),
                ir.subscriptionRefs());
    }

    @Test
    void compileRulesAreNotTheParsers() {
        ObjectNode root = base();
        columns(root, 0).add(column("_sync_x", "string", true));
        SchemaIr ir = read(root.toString());
        assertEquals("_sync_x", ir.tables().get(0).columns().get(7).name());
        SchemaException e =
                assertThrows(SchemaException.class, () -> SchemaCompiler.compile(ir, SchemaLoader.BUILTIN_CRDT_TYPES));
        assertEquals("reserved_identifier", e.reason());
    }

    @Test
    void splitsAScopePattern() {
        assertEquals(
                new ScopePatternParser.Parts("project", "projectId"),
                ScopePatternParser.parse("project:{projectId}", "t"));
        SchemaException e = assertThrows(SchemaException.class, () -> ScopePatternParser.parse("project", "t"));
        assertEquals("scope_pattern_variable_count", e.reason());
    }
}
