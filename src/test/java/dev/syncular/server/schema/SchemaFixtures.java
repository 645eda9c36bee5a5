package dev.syncular.server.schema;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.testsupport.ReferenceMaterial;
import java.nio.file.Path;

/** Shared test helpers: reference-fixture location and a small mutable base schema. */
final class SchemaFixtures {
    static final ObjectMapper JSON = new ObjectMapper();

    private SchemaFixtures() {}

    /** A Syncular schema-IR fixture (src/test/resources/syncular/fixtures/schema-ir). */
    static Path irFixture(String fileName) {
        return ReferenceMaterial.file("fixtures", "schema-ir", fileName);
    }

    static ObjectNode column(String name, String type, boolean nullable) {
        ObjectNode c = JSON.createObjectNode();
        c.put("name", name);
        c.put("type", type);
        c.put("nullable", nullable);
        return c;
    }

    /**
     * A valid short-form schema with one table {@code docs}: id string pk, org_id string scope column,
     * body string, score float, doc crdt (yjs-doc), blob bytes, ref string nullable.
     */
    static ObjectNode base() {
        ObjectNode root = JSON.createObjectNode();
        root.put("version", 1);
        ArrayNode tables = root.putArray("tables");
        tables.add(docsTable("docs"));
        return root;
    }

    static ObjectNode docsTable(String name) {
        ObjectNode t = JSON.createObjectNode();
        t.put("name", name);
        ArrayNode cols = t.putArray("columns");
        cols.add(column("id", "string", false));
        cols.add(column("org_id", "string", false));
        cols.add(column("body", "string", false));
        cols.add(column("score", "float", true));
        cols.add(column("doc", "crdt", true).put("crdtType", "yjs-doc"));
        cols.add(column("blob", "bytes", true));
        cols.add(column("ref", "string", true));
        t.put("primaryKey", "id");
        t.putArray("scopes").add("org:{org_id}");
        return t;
    }

    static ObjectNode table(ObjectNode root, int i) {
        return (ObjectNode) root.get("tables").get(i);
    }

    static ArrayNode columns(ObjectNode root, int i) {
        return (ArrayNode) table(root, i).get("columns");
    }

    static ObjectNode columnNamed(ObjectNode root, int tableIndex, String name) {
        for (var c : columns(root, tableIndex)) {
            if (c.get("name").asText().equals(name)) {
                return (ObjectNode) c;
            }
        }
        throw new AssertionError("no column " + name);
    }

    static CompiledSchema compile(ObjectNode root) {
        return SchemaLoader.parse(root.toString());
    }
}
