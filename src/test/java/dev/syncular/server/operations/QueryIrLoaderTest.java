package dev.syncular.server.operations;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Registration of the typegen queries IR (REMOTE.md §2): the fixture document's operation id and variants, and
 * every refusal at start-up with its one line — version 3 (regenerate), a plan that does not match its SQL, an
 * unknown table, missing/empty/duplicate result columns, several commands, binds that do not match.
 */
class QueryIrLoaderTest {
    static final Path DIR = Path.of("src/test/resources/operations");
    static final ObjectMapper JSON = new ObjectMapper();
    static final QueryIrLoader.Registration REG = new QueryIrLoader.Registration(Set.of(), 1000, Map.of());

    static CompiledSchema schema() throws Exception {
        return SchemaLoader.load(DIR.resolve("demo-react.syncular.ir.json"));
    }

    static byte[] fixture() throws Exception {
        return Files.readAllBytes(DIR.resolve("demo-react.syncular.queries.ir.json"));
    }

    @Test
    void fixtureDocumentRegistersListTodosUnderTheGeneratedId() throws Exception {
        List<QueryDefinition> qs = QueryIrLoader.load(fixture(), "fixture", schema(), REG);
        assertEquals(1, qs.size());
        QueryDefinition q = qs.get(0);
        assertEquals("sha256:e9b6c4c011d5a7a670e72d9bf8f1929457bd6b8efce11c44e6edf95212fddaf8/listTodos", q.id());
        assertEquals(2, q.statements().size());
        assertEquals(List.of(List.of("q")), q.conditions());
        assertEquals(QueryDefinition.Access.SCOPED, q.access());
        assertEquals(List.of(), q.coverage(), "a plain query carries no sync query coverage: scoped, it fails closed");
        assertEquals(7, q.columns().size());
        assertEquals("listId", q.columns().get(1).langName());
    }

    @Test
    void rewriteBindsThePartitionAndKeepsTheNameAsAlias() throws Exception {
        QueryDefinition q =
                QueryIrLoader.load(fixture(), "fixture", schema(), REG).get(0);
        String sql = PartitionRewrite.rewrite(q.statements().get(1), schema(), t -> "\"s\".\"sync_rows_" + t + "\"");
        assertEquals(
                "SELECT * FROM (select id, list_id AS listId, title, done, position, updated_at_ms AS updatedAtMs,"
                        + " attachment from (SELECT \"id\", \"list_id\", \"title\", \"done\", \"position\", \"updated_at_ms\","
                        + " \"attachment\" FROM \"s\".\"sync_rows_todos\" WHERE \"_sync_partition\" = $1) AS todos where"
                        + " todos.list_id = $2 and ( title like '%' || $3 || '%') order by position, id)"
                        + " AS \"_syncular_registered_query\" LIMIT $4",
                sql);
        String inactive = PartitionRewrite.rewrite(q.statements().get(0), schema(), t -> "x");
        assertTrue(inactive.contains("todos.list_id = $2 and TRUE order by"), inactive);
    }

    @Test
    void version3IsRefusedWithOneLineSayingToRegenerate() throws Exception {
        String doc =
                new String(fixture(), StandardCharsets.UTF_8).replace("\"queryIrVersion\": 4", "\"queryIrVersion\": 3");
        QueryIrException e = assertThrows(
                QueryIrException.class,
                () -> QueryIrLoader.load(doc.getBytes(StandardCharsets.UTF_8), "app.queries.ir.json", schema(), REG));
        assertTrue(
                e.getMessage().contains("queryIrVersion 3") && e.getMessage().contains("regenerate"), e.getMessage());
        assertTrue(!e.getMessage().contains("\n"), "one line");
    }

    @Test
    void refusals() throws Exception {
        refused(
                q -> ((ObjectNode) q.at("/syql/plan/statements/0/relations/0")).put("start", 98),
                "does not match its SQL");
        refused(
                q -> ((ObjectNode) q.at("/syql/plan/statements/1/relations/0")).put("end", 103),
                "does not match its SQL");
        refused(q -> ((ArrayNode) q.at("/syql/plan/statements/0/relations")).removeAll(), "is not planned");
        refused(q -> ((ObjectNode) q.at("/syql/plan/statements/0")).remove("relations"), "regenerate");
        refused(q -> ((ArrayNode) q.get("tables")).removeAll().add("notes"), "does not have");
        refused(q -> ((ArrayNode) q.get("columns")).removeAll(), "no result columns");
        refused(q -> q.remove("columns"), "no result columns");
        refused(q -> ((ArrayNode) q.get("columns")).add(q.get("columns").get(0).deepCopy()), "twice");
        refused(q -> ((ArrayNode) q.at("/syql/plan/statements/0/binds")).removeAll(), "placeholders");
        refused(
                q -> {
                    ObjectNode s = (ObjectNode) q.at("/syql/plan/statements/0");
                    s.put("positionalSql", s.get("positionalSql").asText() + "; delete from todos");
                },
                "more than one SQL command");
        refused(q -> ((ObjectNode) q.at("/syql/plan/statements/1")).put("activationMask", 0), "activationMask");
    }

    @Test
    void aCteReusingATableNameFailsClosed() throws Exception {
        refused(
                q -> {
                    ObjectNode s = (ObjectNode) q.at("/syql/plan/statements/0");
                    String sql =
                            "with todos as (select 1) " + s.get("positionalSql").asText();
                    s.put("positionalSql", sql);
                    ((ObjectNode) s.at("/relations/0")).put("start", 99 + 25).put("end", 104 + 25);
                },
                "is not planned");
    }

    @Test
    void wildcardGrantsAVariableAndCoverageStillMustBeComplete() throws Exception {
        byte[] hostile = Files.readAllBytes(DIR.resolve("hostile.queries.ir.json"));
        List<QueryDefinition> qs = QueryIrLoader.load(hostile, "hostile", schema(), REG);
        QueryDefinition byList =
                qs.stream().filter(q -> q.name().equals("byList")).findFirst().orElseThrow();
        QueryDefinition none = qs.stream()
                .filter(q -> q.name().equals("noCoverage"))
                .findFirst()
                .orElseThrow();
        Map<String, OperationValue> params = Map.of("listId", new OperationValue.Text("any-list"));
        ScopeCoverage.check(byList, schema(), params, Map.of("list_id", List.of("*")));
        OperationException forbidden = assertThrows(
                OperationException.class,
                () -> ScopeCoverage.check(byList, schema(), params, Map.of("list_id", List.of("other"))));
        assertEquals(OperationErrorCode.FORBIDDEN, forbidden.code());
        OperationException invalid = assertThrows(
                OperationException.class,
                () -> ScopeCoverage.check(none, schema(), params, Map.of("list_id", List.of("*"))));
        assertEquals(OperationErrorCode.INVALID_REQUEST, invalid.code());
    }

    private void refused(Consumer<ObjectNode> edit, String expected) throws Exception {
        ObjectNode doc = (ObjectNode) JSON.readTree(fixture());
        edit.accept((ObjectNode) doc.get("queries").get(0));
        byte[] bytes = JSON.writeValueAsBytes(doc);
        QueryIrException e =
                assertThrows(QueryIrException.class, () -> QueryIrLoader.load(bytes, "app", schema(), REG));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
        assertTrue(!e.getMessage().contains("\n"), "one line");
    }
}
