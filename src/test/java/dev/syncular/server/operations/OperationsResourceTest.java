package dev.syncular.server.operations;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OperationsAppProfile;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.SyncTestClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /operations} through the running app over real HTTP on PostgreSQL (REMOTE.md §2, §2.1, §4, §5, §7):
 * the fixture document's {@code listTodos} with both activation variants, partition isolation under hostile SQL
 * shapes, the §2.1 refusals, {@code result_too_large}, type normalization and bad input answered precisely. Rows
 * are written through {@code POST /sync} pushes. Requests and responses are built and read here with Jackson
 * trees, independently of the server's codec.
 */
@QuarkusTest
@OwnApp
@TestProfile(OperationsAppProfile.class)
class OperationsResourceTest {
    static final String CT = "application/vnd.syncular.operations.v1+json";
    static final String FIXTURE_ID =
            "sha256:e9b6c4c011d5a7a670e72d9bf8f1929457bd6b8efce11c44e6edf95212fddaf8/listTodos";
    static final Path DIR = OperationsAppProfile.DIR;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    static String hostilePrefix;

    @Inject
    SchemaWindow window;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Inject
    MeterRegistry registry;

    String partitionA;
    String partitionB;

    @BeforeEach
    void seed() throws Exception {
        if (hostilePrefix == null) {
            hostilePrefix = QueryIrLoader.documentId(Files.readAllBytes(DIR.resolve("hostile.queries.ir.json")));
        }
        partitionA = "ops-a-" + UUID.randomUUID();
        partitionB = "ops-b-" + UUID.randomUUID();
        push(
                partitionA,
                todo("a1", "l1", "milk", 2, true),
                todo("a2", "l1", "bread", 1, false),
                todo("a3", "l2", "eggs", 1, false));
        push(partitionB, todo("b1", "l1", "secret", 1, false), todo("b2", "l1", "' OR 1=1 --", 2, false));
    }

    private void push(String partition, Map<String, Object>... rows) {
        SyncTestClient c = new SyncTestClient(
                window.current(),
                new HttpTransport("http://localhost:" + port, partition),
                "writer",
                "writer-" + UUID.randomUUID());
        List<String> ids = new ArrayList<>();
        for (Map<String, Object> r : rows) {
            ids.add(c.upsert("todos", r, null));
        }
        c.syncUntilIdle();
        for (String id : ids) {
            assertTrue(SyncTestClient.applied(c.result(id)), "seed push applied: " + c.result(id));
        }
    }

    private static Map<String, Object> todo(String id, String list, String title, long position, boolean done) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("list_id", list);
        m.put("title", title);
        m.put("done", done);
        m.put("position", position);
        m.put("updated_at_ms", 1_700_000_000_123L);
        m.put("attachment", null);
        return m;
    }

    // ------------------------------------------------------------------ tagged JSON, built and read by hand

    static ObjectNode str(String s) {
        return F.objectNode().put("t", "string").put("v", s);
    }

    static ObjectNode num(double d) {
        ObjectNode o = F.objectNode().put("t", "number");
        if (d == Math.rint(d)) {
            o.put("v", (long) d);
        } else {
            o.put("v", d);
        }
        return o;
    }

    static ObjectNode obj(Object... kv) {
        ArrayNode pairs = F.arrayNode();
        for (int i = 0; i < kv.length; i += 2) {
            pairs.add(F.arrayNode().add((String) kv[i]).add((JsonNode) kv[i + 1]));
        }
        ObjectNode o = F.objectNode().put("t", "object");
        o.set("v", pairs);
        return o;
    }

    static ObjectNode query(String operationId, ObjectNode params) {
        return obj(
                "revision",
                num(1),
                "kind",
                str("query"),
                "clientId",
                str("ops-client"),
                "operationId",
                str(operationId),
                "params",
                params);
    }

    /** The decoded tagged value as plain Java (numbers as Double, integers as Long, objects as ordered maps). */
    static Object plain(JsonNode n) {
        String t = n.get("t").asText();
        return switch (t) {
            case "null" -> null;
            case "boolean" -> n.get("v").booleanValue();
            case "number" -> n.get("v").doubleValue();
            case "string" -> n.get("v").textValue();
            case "integer" -> Long.parseLong(n.get("v").textValue());
            case "bytes" -> Base64.getDecoder().decode(n.get("v").textValue());
            case "array" -> {
                List<Object> l = new ArrayList<>();
                n.get("v").forEach(x -> l.add(plain(x)));
                yield l;
            }
            case "object" -> {
                Map<String, Object> m = new LinkedHashMap<>();
                n.get("v").forEach(p -> m.put(p.get(0).textValue(), plain(p.get(1))));
                yield m;
            }
            default -> throw new AssertionError("unknown tag " + t);
        };
    }

    Response post(String actor, String partition, byte[] body) {
        return given().contentType(CT)
                .header("x-actor-id", actor)
                .header("x-syncular-partition", partition)
                .body(body)
                .post("/operations");
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> call(String actor, String partition, JsonNode request) throws Exception {
        Response r = post(actor, partition, JSON.writeValueAsBytes(request));
        assertEquals(200, r.statusCode(), r.asString());
        assertEquals(CT, r.contentType());
        return (Map<String, Object>) plain(JSON.readTree(r.asByteArray()));
    }

    Map<String, Object> hostile(String name, String partition) throws Exception {
        return call("reader", partition, query(hostilePrefix + "/" + name, obj()));
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> rows(Map<String, Object> response) {
        assertEquals("query", response.get("kind"), response.toString());
        return (List<Map<String, Object>>) response.get("rows");
    }

    static List<Object> column(Map<String, Object> response, String key) {
        List<Object> out = new ArrayList<>();
        for (Map<String, Object> row : rows(response)) {
            out.add(row.get(key));
        }
        return out;
    }

    static void assertError(Map<String, Object> response, String code) {
        assertEquals("error", response.get("kind"), response.toString());
        assertEquals(code, response.get("code"), response.toString());
        assertEquals(false, response.get("retryable"));
        assertEquals(1.0, response.get("revision"));
    }

    // ------------------------------------------------------------------------------------------ tests

    @Test
    void fixtureQueryRunsBothVariantsWithTypedRowsAndMaxCommitSeq() throws Exception {
        Map<String, Object> all = call("reader", partitionA, query(FIXTURE_ID, obj("listId", str("l1"))));
        assertEquals(FIXTURE_ID, all.get("operationId"));
        assertEquals(1.0, all.get("revision"));
        assertEquals(List.of("a2", "a1"), column(all, "id"), "order by position, id; l2 and partition B excluded");
        Map<String, Object> first = rows(all).get(0);
        assertEquals(
                List.of("id", "listId", "title", "done", "position", "updatedAtMs", "attachment"),
                new ArrayList<>(first.keySet()),
                "the result metadata's langNames, in order");
        assertEquals("l1", first.get("listId"));
        assertEquals(false, first.get("done"));
        assertEquals(1.0, first.get("position"));
        assertEquals(1.700000000123E12, first.get("updatedAtMs"));
        assertEquals(null, first.get("attachment"));
        assertTrue(first.containsKey("attachment"));
        assertEquals(true, rows(all).get(1).get("done"));
        double seq = (Double) all.get("maxCommitSeq");
        assertTrue(seq >= 1, "the partition's commits are counted: " + seq);

        Map<String, Object> filtered =
                call("reader", partitionA, query(FIXTURE_ID, obj("listId", str("l1"), "q", str("mil"))));
        assertEquals(List.of("a1"), column(filtered, "id"), "activation mask 1: the title filter");
        assertEquals(seq, filtered.get("maxCommitSeq"));

        Map<String, Object> inB = call("reader", partitionB, query(FIXTURE_ID, obj("listId", str("l1"))));
        assertEquals(List.of("b1", "b2"), column(inB, "id"));
    }

    @Test
    void hostileShapesNeverLeaveThePartition() throws Exception {
        assertEquals(List.of("a1", "a2", "a3"), column(hostile("allTodos", partitionA), "id"));
        assertEquals(List.of("l1", "l1", "l2"), column(hostile("allTodos", partitionA), "listId"));
        for (String name : List.of("aliased", "aliasedAs", "quoted", "qualifiedColumns", "cte", "subquery")) {
            assertEquals(List.of("a1", "a2", "a3"), column(hostile(name, partitionA), "id"), name);
            assertEquals(List.of("b1", "b2"), column(hostile(name, partitionB), "id"), name);
        }
        Map<String, Object> self = hostile("selfJoin", partitionA);
        assertEquals(List.of("a1", "a1", "a2", "a2", "a3"), column(self, "id"));
        assertEquals(List.of("a1", "a2", "a1", "a2", "a3"), column(self, "other"));
        assertEquals(List.of("a1", "a1", "a2", "a2", "a3", "a3"), column(hostile("twice", partitionA), "id"));
        assertEquals(List.of(3.0), column(hostile("countAll", partitionA), "n"));
        assertEquals(List.of(2.0), column(hostile("countAll", partitionB), "n"));
        // a request value is only ever a bind parameter: SQL in it matches nothing, in A or anywhere
        Map<String, Object> injected =
                call("reader", partitionA, query(hostilePrefix + "/injection", obj("title", str("' OR 1=1 --"))));
        assertEquals(List.of(), rows(injected));
        assertEquals(
                List.of("b2"),
                column(
                        call(
                                "reader",
                                partitionB,
                                query(hostilePrefix + "/injection", obj("title", str("' OR 1=1 --")))),
                        "id"));
        // an unknown partition sees nothing and maxCommitSeq 0
        Map<String, Object> empty = hostile("allTodos", "ops-empty-" + UUID.randomUUID());
        assertEquals(List.of(), rows(empty));
        assertEquals(0.0, empty.get("maxCommitSeq"));
    }

    @Test
    void scopedQueriesAreCheckedAgainstCoverageBeforeSql() throws Exception {
        assertEquals(
                List.of("a1", "a2"),
                column(call("writer", partitionA, query(hostilePrefix + "/byList", obj("listId", str("l1")))), "id"));
        // l3 is not among the actor's allowed scopes
        assertError(
                call("writer", partitionA, query(hostilePrefix + "/byList", obj("listId", str("l3")))),
                "operation.forbidden");
        for (String name :
                List.of("noCoverage", "duplicateCoverage", "extraCoverage", "incompleteCoverage", "emptyUnits")) {
            assertError(
                    call("writer", partitionA, query(hostilePrefix + "/" + name, obj("listId", str("l1")))),
                    "operation.invalid_request");
        }
        // the fixture's listTodos is a plain query (no sync query coverage): registered scoped it fails closed;
        // here it is privileged, and an actor the authorizer does not allow is forbidden
        assertError(call("writer", partitionA, query(FIXTURE_ID, obj("listId", str("l1")))), "operation.forbidden");
    }

    @Test
    void resultTooLargeAndNormalizationFailures() throws Exception {
        assertError(hostile("allTodosCapped", partitionA), "operation.result_too_large");
        assertEquals(
                List.of("b1", "b2"), column(hostile("allTodosCapped", partitionB), "id"), "exactly maxRows is fine");
        assertError(hostile("badType", partitionA), "operation.query_failed");
        assertError(hostile("nullForNonNullable", partitionA), "operation.query_failed");
        assertError(hostile("badSql", partitionA), "operation.query_failed");
    }

    @Test
    void badRequestsAreAnsweredPrecisely() throws Exception {
        String good = JSON.writeValueAsString(query(FIXTURE_ID, obj("listId", str("l1"))));
        assertError(
                call("reader", partitionA, query("sha256:00/listTodos", obj("listId", str("l1")))),
                "operation.unknown");
        assertError(call("reader", partitionA, query(FIXTURE_ID, obj())), "operation.invalid_request");
        assertError(
                call("reader", partitionA, query(FIXTURE_ID, obj("listId", str("l1"), "nope", str("x")))),
                "operation.invalid_request");
        assertError(call("reader", partitionA, query(FIXTURE_ID, obj("listId", num(5)))), "operation.invalid_request");
        ObjectNode command = obj(
                "revision",
                num(1),
                "kind",
                str("command"),
                "clientId",
                str("c"),
                "operationId",
                str("x"),
                "requestId",
                str("r1"),
                "params",
                obj());
        assertError(call("reader", partitionA, command), "operation.unknown");
        ObjectNode reserved = obj(
                "revision",
                num(1),
                "kind",
                str("query"),
                "clientId",
                str("[\"remote-command\",\"x\"]"),
                "operationId",
                str(FIXTURE_ID),
                "params",
                obj("listId", str("l1")));
        assertError(call("reader", partitionA, reserved), "sync.invalid_client_id");
        List<String> bad = List.of(
                good.replace("\"t\":\"string\"", "\"t\":\"str\""), // unknown tag
                good.replaceFirst("\\{\"t\":\"number\",\"v\":1}", "{\"t\":\"integer\",\"v\":\"01\"}"), // non-canonical
                good.replaceFirst("\\{\"t\":\"number\",\"v\":1}", "{\"t\":\"integer\",\"v\":\"-0\"}"),
                good.replaceFirst("\\{\"t\":\"number\",\"v\":1}", "{\"t\":\"integer\",\"v\":\"9223372036854775808\"}"),
                good.replaceFirst("\\{\"t\":\"number\",\"v\":1}", "{\"t\":\"number\",\"v\":\"1\"}"),
                good.replace("{\"t\":\"string\",\"v\":\"l1\"}", "{\"t\":\"bytes\",\"v\":\"AAE\"}"), // unpadded
                good.replace(
                        "{\"t\":\"string\",\"v\":\"l1\"}", "{\"t\":\"bytes\",\"v\":\"AAF=\"}"), // non-canonical bits
                good.replace("{\"t\":\"string\",\"v\":\"l1\"}", "{\"t\":\"bytes\",\"v\":\"A*E=\"}"),
                good.replace(
                        "{\"t\":\"string\",\"v\":\"l1\"}", "{\"t\":\"string\",\"v\":\"l1\",\"x\":1}"), // extra member
                good.replace("{\"t\":\"string\",\"v\":\"l1\"}", "{\"t\":\"null\",\"v\":null}"), // null with v
                good.replace("[\"listId\",", "[\"listId\",{\"t\":\"null\"}],[\"listId\","), // duplicate key
                good + " {}", // trailing data
                "{\"t\":\"object\",\"v\":[",
                "[]",
                deep(200), // deep nesting
                deep(40));
        for (String body : bad) {
            assertTrue(!body.equals(good), "each case changes the request");
            assertError(call(body), "operation.invalid_request");
        }
        // invalid UTF-8
        Response r = post("reader", partitionA, new byte[] {'{', (byte) 0xff, '}'});
        assertEquals(200, r.statusCode());
        assertEquals("operation.invalid_request", plainMap(r).get("code"));
    }

    private double answered(String operation, String outcome) {
        Timer t = registry.find("syncular.operations")
                .tag("operation", operation)
                .tag("binding", "http")
                .tag("outcome", outcome)
                .timer();
        return t == null ? 0 : t.count();
    }

    @Test
    void everyAnswerIsCountedByOperationIdAndOutcome() throws Exception {
        double ok = answered(FIXTURE_ID, "ok");
        double forbidden = answered(FIXTURE_ID, "operation.forbidden");
        double unknown = answered("unregistered", "operation.unknown");
        double undecodable = answered("unregistered", "operation.invalid_request");
        call("reader", partitionA, query(FIXTURE_ID, obj("listId", str("l1"))));
        call("writer", partitionA, query(FIXTURE_ID, obj("listId", str("l1"))));
        call("reader", partitionA, query("sha256:00/listTodos", obj()));
        call("{");
        assertEquals(ok + 1, answered(FIXTURE_ID, "ok"));
        assertEquals(forbidden + 1, answered(FIXTURE_ID, "operation.forbidden"));
        assertEquals(unknown + 1, answered("unregistered", "operation.unknown"), "an unregistered id is never a tag");
        assertEquals(undecodable + 1, answered("unregistered", "operation.invalid_request"));
        assertTrue(
                registry.find("syncular.operations")
                                .tag("operation", FIXTURE_ID)
                                .timer()
                                .totalTime(TimeUnit.NANOSECONDS)
                        > 0,
                "latency recorded");
    }

    @Test
    void httpLevelRefusalsComeBeforeDecoding() {
        Response wrongType = given().contentType("application/json")
                .header("x-actor-id", "reader")
                .body("{}")
                .post("/operations");
        assertEquals(415, wrongType.statusCode());
        Response noAuth = given().contentType(CT).body("{}").post("/operations");
        assertEquals(401, noAuth.statusCode());
        assertEquals("sync.auth_required", noAuth.jsonPath().getString("code"));
        byte[] huge = new byte[2 * 1024 * 1024];
        Arrays.fill(huge, (byte) ' ');
        Response tooLarge = post("reader", partitionA, huge);
        assertEquals(413, tooLarge.statusCode());
    }

    private Map<String, Object> call(String body) throws Exception {
        Response r = post("reader", partitionA, body.getBytes(StandardCharsets.UTF_8));
        assertEquals(200, r.statusCode(), r.asString());
        return plainMap(r);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> plainMap(Response r) {
        try {
            return (Map<String, Object>) plain(JSON.readTree(r.asByteArray()));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** A query whose params nest arrays {@code levels} deep. */
    private static String deep(int levels) throws Exception {
        JsonNode inner = str("x");
        for (int i = 0; i < levels; i++) {
            ObjectNode a = F.objectNode().put("t", "array");
            a.set("v", F.arrayNode().add(inner));
            inner = a;
        }
        return JSON.writeValueAsString(query(FIXTURE_ID, obj("listId", inner)));
    }
}
