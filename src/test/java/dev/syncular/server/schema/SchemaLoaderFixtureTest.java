package dev.syncular.server.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.syncular.server.wire.ColumnDef;
import dev.syncular.server.wire.ColumnType;
import dev.syncular.server.wire.RowLayout;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SchemaLoaderFixtureTest {

    @Test
    void typegenBasicIrCompiles() {
        CompiledSchema s = SchemaLoader.load(SchemaFixtures.irFixture("typegen-basic.syncular.ir.json"));

        assertEquals(5, s.version());
        assertEquals(List.of("tasks", "docs", "doc_revisions"), s.tableNames());
        assertEquals(5, s.schemaVersions().size());
        assertEquals(
                new SchemaVersionEntry(3, List.of("0003_add_doc_crdt")),
                s.schemaVersions().get(2));
        assertEquals(2, s.subscriptions().size());
        assertTrue(s.extensions().isObject());

        TableSchema tasks = s.table("tasks");
        assertEquals(9, tasks.columnCount());
        assertEquals("id", tasks.primaryKey());
        assertEquals(0, tasks.primaryKeyIndex());
        assertEquals(ColumnType.FLOAT, tasks.column("estimate").type());
        assertEquals(7, tasks.columnIndex("estimate"));
        assertEquals(-1, tasks.columnIndex("nope"));
        assertEquals(List.of("project_id"), tasks.scopeVariables());
        assertEquals("project_id", tasks.scopeColumnFor("project_id"));
        assertEquals(
                List.of(
                        new IndexDef("idx_tasks_project", List.of("project_id"), false),
                        new IndexDef("idx_tasks_project_title", List.of("project_id", "title"), true)),
                tasks.indexes());
        assertTrue(tasks.references().isEmpty());

        RowLayout layout = tasks.rowLayout();
        assertEquals(0, layout.primaryKeyIndex());
        assertEquals(9, layout.size());
        assertEquals(new ColumnDef("reviewed", ColumnType.BOOLEAN, true), layout.column(4));
        assertEquals(new ColumnDef("meta", ColumnType.JSON, true), layout.column(6));

        TableSchema docs = s.table("docs");
        assertEquals(2, docs.scopePatterns().size());
        assertEquals(List.of("org_id", "projectId"), docs.scopeVariables());
        assertEquals("project_id", docs.scopeColumnFor("projectId"));
        assertNull(docs.scopeColumnFor("project_id"));
        ScopePattern project = docs.scopePatternFor("projectId");
        assertEquals("project:{projectId}", project.pattern());
        assertEquals("project", project.prefix());
        assertEquals(2, project.columnIndex());
        assertEquals("project:P1", project.scopeKey("P1"));
        assertEquals("org:acme", docs.scopePatternFor("org_id").scopeKey("acme"));

        ColumnSchema bodyDoc = docs.column("body_doc");
        assertEquals(ColumnType.CRDT, bodyDoc.type());
        assertEquals("yjs-doc", bodyDoc.crdtType());
        assertTrue(bodyDoc.nullable());
        assertFalse(bodyDoc.encrypted());
        assertEquals(ColumnType.BLOB_REF, docs.column("remote_blob").type());
        assertEquals(
                new ColumnDef("body_doc", ColumnType.CRDT, true),
                docs.rowLayout().column(6));
        assertNull(docs.column("body").crdtType());

        TableSchema revisions = s.table("doc_revisions");
        assertEquals(
                List.of(new ReferenceDef("doc_id", "docs", ReferenceDef.OnDelete.CASCADE)), revisions.references());
        assertEquals(
                ReferenceDef.OnDelete.CASCADE, revisions.referenceOn("doc_id").onDelete());
        assertNull(revisions.referenceOn("note"));
    }

    @Test
    void quickstartIrCompiles() {
        CompiledSchema s = SchemaLoader.load(SchemaFixtures.irFixture("quickstart.syncular.ir.json"));
        assertEquals(1, s.version());
        assertEquals(List.of("todos"), s.tableNames());
        TableSchema todos = s.table("todos");
        assertEquals(6, todos.columnCount());
        assertEquals(0, todos.rowLayout().primaryKeyIndex());
        ScopePattern list = todos.scopePatterns().get(0);
        assertEquals("list", list.prefix());
        assertEquals("list_id", list.variable());
        assertEquals("list_id", list.column());
        assertEquals("list:L1", list.scopeKey("L1"));
    }

    @Test
    void sameDocumentCompilesToEqualSchemas() throws Exception {
        var path = SchemaFixtures.irFixture("typegen-basic.syncular.ir.json");
        CompiledSchema a = SchemaLoader.load(path);
        CompiledSchema b = SchemaLoader.parse(Files.readString(path));
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
    }

    @Test
    void shortFormCompiles() throws Exception {
        CompiledSchema s;
        try (InputStream in = getClass().getResourceAsStream("/schema/short-form.json")) {
            s = SchemaLoader.load(in);
        }
        assertEquals(3, s.version());
        assertTrue(s.schemaVersions().isEmpty());
        assertEquals(0, s.subscriptions().size());

        TableSchema tasks = s.table("tasks");
        ScopePattern p = tasks.scopePatterns().get(0);
        assertEquals("project:{project_id}", p.pattern());
        assertEquals("project_id", p.variable());
        assertEquals("project_id", p.column());
        assertEquals(1, p.columnIndex());
        // short form: a crdt column without crdtType gets the built-in merger
        assertEquals(SchemaLoader.DEFAULT_CRDT_TYPE, tasks.column("doc").crdtType());
        ColumnSchema secret = tasks.column("secret");
        assertTrue(secret.encrypted());
        assertEquals(ColumnType.BYTES, secret.type());
        assertEquals(ColumnType.JSON, secret.declaredType());
        assertEquals(ColumnType.JSON, secret.appType());
        assertEquals(
                new ColumnDef("secret", ColumnType.BYTES, true),
                tasks.rowLayout().column(5));

        TableSchema notes = s.table("notes");
        assertEquals(ColumnType.INTEGER, notes.primaryKeyColumn().type());
        assertEquals(List.of("orgId", "project_id"), notes.scopeVariables());
        assertEquals("org", notes.scopeColumnFor("orgId"));
        assertEquals("org:o1", notes.scopePatternFor("orgId").scopeKey("o1"));
        assertSame(notes, s.table("notes"));
    }

    @Test
    void schemaVersionAndVersionMayBothBePresentWhenEqual() {
        var root = SchemaFixtures.base();
        root.put("schemaVersion", 1);
        assertEquals(1, SchemaFixtures.compile(root).version());
    }

    @Test
    void primaryKeyEligibleTypesAreAccepted() {
        for (String type : List.of("string", "integer", "boolean", "json")) {
            var root = SchemaFixtures.base();
            SchemaFixtures.columnNamed(root, 0, "id").put("type", type);
            assertEquals(
                    type,
                    SchemaFixtures.compile(root)
                            .table("docs")
                            .primaryKeyColumn()
                            .type()
                            .wireName);
        }
    }

    @Test
    void customCrdtTypeAcceptedWhenRegistered() {
        var root = SchemaFixtures.base();
        SchemaFixtures.columnNamed(root, 0, "doc").put("crdtType", "rga");
        CompiledSchema s = SchemaLoader.parse(root.toString(), Set.of("yjs-doc", "rga"));
        assertEquals("rga", s.table("docs").column("doc").crdtType());
    }

    @Test
    void identifierOf63BytesIsAccepted() {
        var root = SchemaFixtures.base();
        String name = "c".repeat(SchemaLoader.MAX_IDENTIFIER_BYTES);
        SchemaFixtures.columns(root, 0).add(SchemaFixtures.column(name, "string", true));
        assertTrue(SchemaFixtures.compile(root).table("docs").hasColumn(name));
    }

    @Test
    void absentOnDeleteMeansRestrict() {
        var root = SchemaFixtures.base();
        var child = SchemaFixtures.docsTable("children");
        child.putArray("references").addObject().put("column", "ref").put("parentTable", "docs");
        ((ArrayNode) root.get("tables")).add(child);
        assertEquals(
                ReferenceDef.OnDelete.RESTRICT,
                SchemaFixtures.compile(root)
                        .table("children")
                        .referenceOn("ref")
                        .onDelete());
    }

    @Test
    void selfReferenceAndSetNullAccepted() {
        var root = SchemaFixtures.base();
        SchemaFixtures.table(root, 0)
                .putArray("references")
                .addObject()
                .put("column", "ref")
                .put("parentTable", "docs")
                .put("onDelete", "SET NULL");
        assertEquals(
                ReferenceDef.OnDelete.SET_NULL,
                SchemaFixtures.compile(root).table("docs").referenceOn("ref").onDelete());
    }
}
