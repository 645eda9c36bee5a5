package dev.syncular.server.schema;

import static dev.syncular.server.schema.SchemaFixtures.base;
import static dev.syncular.server.schema.SchemaFixtures.column;
import static dev.syncular.server.schema.SchemaFixtures.columnNamed;
import static dev.syncular.server.schema.SchemaFixtures.columns;
import static dev.syncular.server.schema.SchemaFixtures.compile;
import static dev.syncular.server.schema.SchemaFixtures.docsTable;
import static dev.syncular.server.schema.SchemaFixtures.table;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SchemaWindowTest {

    /** Version 1 of the base schema. */
    private static CompiledSchema v1() {
        return compile(base());
    }

    /** Version {@code v} of the base schema, with {@code extra} appended columns on docs. */
    private static ObjectNode at(int v) {
        ObjectNode root = base();
        root.put("version", v);
        return root;
    }

    private static SchemaException reject(List<CompiledSchema> window, String reason) {
        SchemaException e = assertThrows(SchemaException.class, () -> SchemaWindow.of(window));
        assertEquals(reason, e.reason(), () -> "message was: " + e.getMessage());
        return e;
    }

    @Test
    void validWindowServesEachVersion() {
        ObjectNode v3 = at(3);
        columns(v3, 0).add(column("added", "integer", true));
        ((ArrayNode) v3.get("tables")).add(docsTable("new_table"));
        ObjectNode v2 = at(2);
        CompiledSchema current = compile(v3);
        CompiledSchema older = compile(v2);
        CompiledSchema oldest = v1();

        SchemaWindow w = SchemaWindow.of(current, List.of(current, older, oldest));
        assertSame(current, w.current());
        assertSame(oldest, w.oldest());
        assertSame(older, w.forVersion(2));
        assertNull(w.forVersion(4));
        assertTrue(w.serves(1));
        assertFalse(w.serves(0));
        assertEquals(List.of(3, 2, 1), w.versions());
    }

    @Test
    void singleWindow() {
        CompiledSchema s = v1();
        SchemaWindow w = SchemaWindow.single(s);
        assertSame(s, w.current());
        assertSame(s, w.oldest());
        assertSame(s, w.forVersion(1));
    }

    @Test
    void emptyWindow() {
        reject(List.of(), "window_empty");
    }

    @Test
    void firstEntryMustBeCurrent() {
        CompiledSchema current = compile(at(2));
        SchemaException e = assertThrows(SchemaException.class, () -> SchemaWindow.of(current, List.of(v1())));
        assertEquals("window_current", e.reason());
    }

    @Test
    void versionsMustDecreaseStrictly() {
        reject(List.of(v1(), compile(at(2))), "window_order");
        reject(List.of(v1(), v1()), "window_order");
    }

    @Test
    void tableRemoved() {
        ObjectNode old = at(1);
        ((ArrayNode) old.get("tables")).add(docsTable("gone"));
        SchemaException e = reject(List.of(compile(at(2)), compile(old)), "window_table_removed");
        assertEquals("gone", e.details().get("table"));
        assertTrue(e.getMessage().contains("table \"gone\" is missing"), e.getMessage());
    }

    @Test
    void columnTypeChanged() {
        ObjectNode cur = at(2);
        columnNamed(cur, 0, "score").put("type", "integer");
        SchemaException e = reject(List.of(compile(cur), v1()), "window_column_changed");
        assertEquals("docs", e.details().get("table"));
        assertEquals("score", e.details().get("column"));
        assertTrue(e.getMessage().contains("table \"docs\" column \"score\" changed its definition"), e.getMessage());
    }

    @Test
    void nullabilityChanged() {
        ObjectNode cur = at(2);
        columnNamed(cur, 0, "body").put("nullable", true);
        reject(List.of(compile(cur), v1()), "window_column_changed");
    }

    @Test
    void columnsReordered() {
        ObjectNode cur = at(2);
        ArrayNode cols = columns(cur, 0);
        var score = cols.remove(3);
        cols.add(score);
        SchemaException e = reject(List.of(compile(cur), v1()), "window_column_changed");
        assertEquals("score", e.details().get("column"));
    }

    @Test
    void columnRemoved() {
        ObjectNode cur = at(2);
        columns(cur, 0).remove(6);
        SchemaException e = reject(List.of(compile(cur), v1()), "window_column_removed");
        assertEquals("ref", e.details().get("column"));
    }

    @Test
    void appendedColumnMustBeNullable() {
        ObjectNode cur = at(2);
        columns(cur, 0).add(column("added", "string", false));
        SchemaException e = reject(List.of(compile(cur), v1()), "window_appended_not_nullable");
        assertEquals("added", e.details().get("column"));
        assertTrue(e.getMessage().contains("table \"docs\": column \"added\""), e.getMessage());
    }

    @Test
    void scopePatternChanged() {
        ObjectNode cur = at(2);
        table(cur, 0).putArray("scopes").add("tenant:{org_id}");
        reject(List.of(compile(cur), v1()), "window_scopes_changed");
    }

    @Test
    void scopePatternAdded() {
        ObjectNode cur = at(2);
        ((ArrayNode) table(cur, 0).get("scopes"))
                .addObject()
                .put("pattern", "b:{body}")
                .put("column", "body");
        reject(List.of(compile(cur), v1()), "window_scopes_changed");
    }

    @Test
    void primaryKeyChanged() {
        ObjectNode cur = at(2);
        table(cur, 0).put("primaryKey", "org_id");
        reject(List.of(compile(cur), v1()), "window_primary_key");
    }

    @Test
    void referencesChanged() {
        ObjectNode cur = at(2);
        table(cur, 0)
                .putArray("references")
                .addObject()
                .put("column", "ref")
                .put("parentTable", "docs")
                .put("onDelete", "CASCADE");
        reject(List.of(compile(cur), v1()), "window_references_changed");
    }

    @Test
    void crdtTypeChanged() {
        ObjectNode cur = at(2);
        columnNamed(cur, 0, "doc").put("crdtType", "rga");
        CompiledSchema current = SchemaLoader.parse(cur.toString(), Set.of("yjs-doc", "rga"));
        reject(List.of(current, v1()), "window_column_changed");
    }

    @Test
    void fixtureWindowWithOlderVersionLackingATable() throws Exception {
        var path = SchemaFixtures.irFixture("typegen-basic.syncular.ir.json");
        CompiledSchema v5 = SchemaLoader.load(path);
        ObjectNode v4 = (ObjectNode) SchemaFixtures.JSON.readTree(Files.readString(path));
        v4.put("schemaVersion", 4);
        ((ArrayNode) v4.get("schemaVersions")).remove(4);
        ((ArrayNode) v4.get("tables")).remove(2);
        SchemaWindow w = SchemaWindow.of(List.of(v5, compile(v4)));
        assertEquals(List.of(5, 4), w.versions());

        // an older doc_revisions without the §6.11 reference is not servable next to version 5
        ObjectNode v4WithTable = (ObjectNode) SchemaFixtures.JSON.readTree(Files.readString(path));
        v4WithTable.put("schemaVersion", 4);
        ((ArrayNode) v4WithTable.get("schemaVersions")).remove(4);
        ((ObjectNode) v4WithTable.get("tables").get(2)).remove("references");
        SchemaException e = reject(List.of(v5, compile(v4WithTable)), "window_references_changed");
        assertEquals("doc_revisions", e.details().get("table"));
    }
}
