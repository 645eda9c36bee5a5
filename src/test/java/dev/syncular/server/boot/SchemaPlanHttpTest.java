package dev.syncular.server.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.cli.SyncularCli;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.segments.memory.InMemorySegmentStore;
import dev.syncular.server.storage.CheckpointDeclaration;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.sync.EngineParts;
import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.testsupport.EngineTransport;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Json;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.RespHeader;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * {@code POST /admin/schema/plan} against a running deployment, each plan then checked against what applying the
 * change really does. The app serves schema 2 with schema 1 in its window (two recorded clients: alice on version 1,
 * bob on version 2, three tasks in one partition). Applying a change is what a pod of the new build does at start-up:
 * a storage on the same PostgreSQL schema ensured at the new schema (the start-up migration) and an engine serving
 * the window start-up builds from the configured documents ({@link EngineProducer#window}); both recorded clients
 * then sync through it. The cases run in order on the one storage: a refused change (nothing applied), an additive
 * change, one that leaves the version-1 client outside the window, one that needs a backfill.
 */
@QuarkusTest
@OwnApp
@TestProfile(SchemaPlanHttpTest.Profile.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SchemaPlanHttpTest {
    static final Path DIR = Path.of("src/test/resources/schema/window");
    static final Path V1 = DIR.resolve("v1.syncular.ir.json");
    static final Path V2 = DIR.resolve("v2.syncular.ir.json");
    static final String TOKEN = "admin-" + UUID.randomUUID();
    static final String PG_SCHEMA =
            "sync_plan_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    static final String PARTITION = "tenant-" + UUID.randomUUID();
    private static final Duration WAIT = Duration.ofSeconds(60);

    /** Schema 2 current, schema 1 in the window, the admin API on, a storage schema of its own. */
    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "syncular.schema.path",
                    V2.toAbsolutePath().toString(),
                    "syncular.schema.window",
                    V1.toAbsolutePath().toString(),
                    "syncular.storage.pg-schema",
                    PG_SCHEMA,
                    "syncular.admin.token",
                    TOKEN);
        }
    }

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Inject
    ScopeResolver resolver;

    private static Vertx vertx;
    private static Pool pool;
    private static Path docs;
    private static final String ALICE = "alice-" + UUID.randomUUID();
    private static final String BOB = "bob-" + UUID.randomUUID();
    private static String logEpoch;
    private static boolean seeded;
    private static int bobRows;

    @BeforeAll
    static void open() throws Exception {
        vertx = Vertx.vertx();
        pool = TestPostgres.pool(vertx, 2);
        docs = Files.createTempDirectory("schema-plan");
    }

    @AfterAll
    static void close() {
        pool.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }

    private SyncTestClient client(CompiledSchema schema, SyncTestClient.Transport t, String actor, String id) {
        return new SyncTestClient(schema, t, actor, id).subscribe("tasks", "tasks", Map.of("list_id", List.of("l1")));
    }

    /** Alice on version 1 writes three tasks; bob on version 2 reads them: two client records, one per version. */
    private void seed() {
        if (seeded) {
            return;
        }
        HttpTransport http = new HttpTransport("http://localhost:" + port, PARTITION);
        SyncTestClient alice = client(SchemaLoader.load(V1), http, "alice", ALICE);
        alice.syncUntilIdle();
        for (String id : List.of("t1", "t2", "t3")) {
            alice.upsert("tasks", Map.of("id", id, "list_id", "l1", "title", "task " + id, "done", false), null);
        }
        // a fourth task in another list, outside every recorded subscription's scopes
        alice.upsert("tasks", Map.of("id", "t9", "list_id", "l2", "title", "task t9", "done", false), null);
        alice.syncUntilIdle();
        SyncTestClient bob = client(SchemaLoader.load(V2), http, "bob", BOB);
        bob.syncUntilIdle();
        bobRows = bob.table("tasks").size();
        assertEquals(3, bobRows);
        logEpoch = bob.state.logEpoch;
        seeded = true;
    }

    // ---------------------------------------------------------------- documents

    /** Schema 2's document with {@code version}, its history and extra columns or tables. */
    private static ObjectNode document(int version, List<Integer> history) throws Exception {
        ObjectNode doc = (ObjectNode) Json.readTree(Files.readString(V2));
        doc.put("schemaVersion", version);
        ArrayNode h = doc.putArray("schemaVersions");
        for (int v : history) {
            h.addObject().put("version", v).putArray("migrations").add("m" + v);
        }
        return doc;
    }

    private static ObjectNode table(ObjectNode doc, String name) {
        for (JsonNode t : doc.get("tables")) {
            if (t.get("name").asText().equals(name)) {
                return (ObjectNode) t;
            }
        }
        throw new AssertionError(name);
    }

    private static void column(ObjectNode doc, String table, String name, String type, boolean nullable) {
        ((ArrayNode) table(doc, table).get("columns"))
                .addObject()
                .put("name", name)
                .put("type", type)
                .put("nullable", nullable);
    }

    private static void uniqueIndex(ObjectNode doc, String table, String name, String... columns) {
        ObjectNode t = table(doc, table);
        ArrayNode indexes = t.has("indexes") ? (ArrayNode) t.get("indexes") : t.putArray("indexes");
        ArrayNode cols =
                indexes.addObject().put("name", name).put("unique", true).putArray("columns");
        for (String c : columns) {
            cols.add(c);
        }
    }

    /**
     * Version 3: a nullable column and a unique index on tasks (built concurrently, the table holds rows), a new
     * table tags with a unique index (created with it).
     */
    private static ObjectNode additive() throws Exception {
        ObjectNode doc = document(3, List.of(1, 2, 3));
        column(doc, "tasks", "priority", "integer", true);
        uniqueIndex(doc, "tasks", "tasks_title", "list_id", "title");
        ObjectNode tags = ((ArrayNode) doc.get("tables")).addObject();
        tags.put("name", "tags").put("primaryKey", "id");
        ArrayNode cols = tags.putArray("columns");
        cols.addObject().put("name", "id").put("type", "string").put("nullable", false);
        cols.addObject().put("name", "list_id").put("type", "string").put("nullable", false);
        cols.addObject().put("name", "label").put("type", "string").put("nullable", false);
        tags.putArray("scopes")
                .addObject()
                .put("pattern", "list:{list_id}")
                .put("variable", "list_id")
                .put("column", "list_id");
        uniqueIndex(doc, "tags", "tags_label", "list_id", "label");
        return doc;
    }

    /** Version 4: a nullable column on tags; its history no longer lists version 1. */
    private static ObjectNode dropsVersionOne() throws Exception {
        ObjectNode doc = additive();
        doc.put("schemaVersion", 4);
        ArrayNode h = doc.putArray("schemaVersions");
        for (int v : List.of(2, 3, 4)) {
            h.addObject().put("version", v).putArray("migrations").add("m" + v);
        }
        column(doc, "tags", "color", "string", true);
        return doc;
    }

    /** Version 5: a not-null column appended to tasks, whose three rows need a backfill. */
    private static ObjectNode needsBackfill() throws Exception {
        ObjectNode doc = dropsVersionOne();
        doc.put("schemaVersion", 5);
        ArrayNode h = doc.putArray("schemaVersions");
        for (int v : List.of(1, 2, 3, 4, 5)) {
            h.addObject().put("version", v).putArray("migrations").add("m" + v);
        }
        column(doc, "tasks", "estimate", "integer", false);
        return doc;
    }

    private static Path write(String name, JsonNode doc) throws Exception {
        Path p = docs.resolve(name);
        Files.writeString(p, doc.toString());
        return p;
    }

    // ---------------------------------------------------------------- the route

    private HttpResponse<String> post(String query, String body, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(
                        URI.create("http://localhost:" + port + "/admin/schema/plan" + query))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode plan(JsonNode doc, String query) throws Exception {
        HttpResponse<String> r = post(query, doc.toString(), TOKEN);
        assertEquals(200, r.statusCode(), r.body());
        return Json.readTree(r.body());
    }

    private static List<String> sql(JsonNode statements) {
        List<String> out = new ArrayList<>();
        statements.forEach(s -> out.add(s.get("sql").asText()));
        return out;
    }

    private static List<Integer> ints(JsonNode array) {
        List<Integer> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asInt()));
        return out;
    }

    private static JsonNode version(JsonNode plan, int v) {
        for (JsonNode n : plan.get("clients").get("versions")) {
            if (n.get("schemaVersion").asInt() == v) {
                return n;
            }
        }
        throw new AssertionError("no clients of version " + v + " in " + plan);
    }

    private static String enc(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }

    /** Signs in to the console with the admin token and posts the schema plan form {@code form}. */
    private String consolePlan(String form, int status) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        String base = "http://localhost:" + port + "/console";
        HttpResponse<String> signIn = http.send(
                HttpRequest.newBuilder(URI.create(base + "/sign-in"))
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .POST(HttpRequest.BodyPublishers.ofString("token=" + enc(TOKEN)))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(303, signIn.statusCode(), signIn.body());
        String cookie = signIn.headers().firstValue("Set-Cookie").orElseThrow().split(";")[0];
        HttpResponse<String> empty = http.send(
                HttpRequest.newBuilder(URI.create(base + "/schema-plan"))
                        .header("Cookie", cookie)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, empty.statusCode(), empty.body());
        Matcher csrf = Pattern.compile("data-csrf=\"([^\"]+)\"").matcher(empty.body());
        assertTrue(csrf.find(), empty.body());
        HttpResponse<String> planned = http.send(
                HttpRequest.newBuilder(URI.create(base + "/schema-plan"))
                        .header("Cookie", cookie)
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .POST(HttpRequest.BodyPublishers.ofString("csrf=" + enc(csrf.group(1)) + "&" + form))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(status, planned.statusCode(), planned.body());
        return planned.body();
    }

    // ---------------------------------------------------------------- applying

    /** A pod of the new build: the storage ensured at {@code next} with {@code declared}, then the engine. */
    private SyncEngine apply(CompiledSchema next, List<Path> window, List<CheckpointDeclaration> declared) {
        PostgresSyncStorage storage = new PostgresSyncStorage(pool, PG_SCHEMA, PostgresSyncStorage.Settings.DEFAULTS);
        storage.ensureSchema(next, declared).await().atMost(WAIT);
        SchemaWindow w = EngineProducer.window(
                next, window.stream().map(p -> p.toAbsolutePath().toString()).toList(), Set.of("yjs-doc"));
        return new SyncEngine(EngineParts.builder(w, storage, new InMemorySegmentStore(), resolver)
                .checkpoints(declared)
                .build());
    }

    /** The recorded clients that the engine refuses with the §1.6 floor, with the version each is told to need. */
    private Map<String, Integer> refusedBy(SyncEngine engine) {
        Map<String, Integer> refused = new TreeMap<>();
        List<String[]> recorded =
                List.of(new String[] {"alice", ALICE, V1.toString()}, new String[] {"bob", BOB, V2.toString()});
        for (String[] c : recorded) {
            SyncTestClient again = client(
                    SchemaLoader.load(Path.of(c[2])), new EngineTransport(engine, PARTITION, Map.of()), c[0], c[1]);
            again.state.logEpoch = logEpoch;
            RespHeader h = header(again.sync());
            if (h.requiredSchemaVersion() != null) {
                refused.put(c[0], h.requiredSchemaVersion());
            }
        }
        return refused;
    }

    private static RespHeader header(Message m) {
        for (Frame f : m.frames()) {
            if (f instanceof RespHeader h) {
                return h;
            }
        }
        throw new AssertionError("no RESP_HEADER in " + m.frames());
    }

    /** The statements the migration ran, as recorded with the marker. */
    private static List<String> appliedDdl() throws Exception {
        Row r = pool.query("SELECT schema_version, applied_ddl FROM \"" + PG_SCHEMA + "\".sync_schema WHERE id = 1")
                .execute()
                .await()
                .atMost(WAIT)
                .iterator()
                .next();
        List<String> out = new ArrayList<>();
        Json.readTree(r.getString(1)).forEach(n -> out.add(n.asText()));
        return out;
    }

    private static int storedVersion() {
        return pool.query("SELECT schema_version FROM \"" + PG_SCHEMA + "\".sync_schema WHERE id = 1")
                .execute()
                .await()
                .atMost(WAIT)
                .iterator()
                .next()
                .getInteger(0);
    }

    // ---------------------------------------------------------------- the cases

    @Test
    @Order(1)
    void badInputIsRefusedWithItsCodeAndNoTokenNoPlan() throws Exception {
        seed();
        HttpResponse<String> noToken = post("", additive().toString(), null);
        assertEquals(401, noToken.statusCode());
        HttpResponse<String> notJson = post("", "{not json", TOKEN);
        assertEquals(400, notJson.statusCode(), notJson.body());
        assertEquals(
                "sync.invalid_request",
                Json.readTree(notJson.body()).get("code").asText());
        HttpResponse<String> array = post("", "[1, 2]", TOKEN);
        assertEquals(400, array.statusCode(), array.body());
        assertEquals(
                "invalid_document",
                Json.readTree(array.body()).get("details").get("reason").asText());
        HttpResponse<String> days = post("?days=0", additive().toString(), TOKEN);
        assertEquals(400, days.statusCode(), days.body());
        HttpResponse<String> checkpoint = post("?checkpoint=nocolon", additive().toString(), TOKEN);
        assertEquals(400, checkpoint.statusCode(), checkpoint.body());

        // a document that does not compile is a change that is not allowed, naming table and column
        ObjectNode broken = additive();
        ((ObjectNode) table(broken, "tasks").get("scopes").get(0)).put("column", "missing");
        JsonNode plan = plan(broken, "");
        assertFalse(plan.get("allowed").asBoolean());
        assertEquals("schema.invalid", plan.get("refusal").get("code").asText());
        assertEquals("tasks", plan.get("refusal").get("details").get("table").asText());
        assertEquals("missing", plan.get("refusal").get("details").get("column").asText());
        assertEquals(2, storedVersion(), "a plan changes nothing");
    }

    @Test
    @Order(2)
    void aRefusedChangeNamesTableAndColumnAndApplyingItFailsTheSame() throws Exception {
        seed();
        ObjectNode doc = document(3, List.of(1, 2, 3));
        ((ObjectNode) table(doc, "tasks").get("columns").get(2)).put("type", "integer"); // title: string -> integer
        JsonNode plan = plan(doc, "");
        assertFalse(plan.get("allowed").asBoolean());
        JsonNode refusal = plan.get("refusal");
        assertEquals(StorageException.UNSUPPORTED_MIGRATION, refusal.get("code").asText());
        assertEquals("tasks", refusal.get("details").get("table").asText());
        assertEquals("title", refusal.get("details").get("column").asText());
        assertEquals("refused", plan.get("storage").get("action").asText());
        assertEquals(0, plan.get("storage").get("ddl").size());
        // the window would serve neither older version: the column changed its definition
        assertEquals(List.of(3), ints(plan.get("window").get("versions")));
        assertEquals(
                "window_column_changed",
                plan.get("window")
                        .get("excluded")
                        .get(0)
                        .get("details")
                        .get("reason")
                        .asText());

        // the same plan through the command line, with the admin token: exit status 1, the refusal on stderr
        Path file = write("v3-refused.json", doc);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = SyncularCli.run(
                new String[] {
                    "--url", "http://localhost:" + port, "--token", TOKEN, "--schema", file.toString(), "schema", "plan"
                },
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(SyncularCli.SERVER_REFUSED, exit, err.toString(StandardCharsets.UTF_8));
        assertEquals(
                refusal, Json.readTree(out.toString(StandardCharsets.UTF_8)).get("refusal"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains(StorageException.UNSUPPORTED_MIGRATION));

        StorageException applied = assertThrows(
                StorageException.class,
                () -> new PostgresSyncStorage(pool, PG_SCHEMA, PostgresSyncStorage.Settings.DEFAULTS)
                        .ensureSchema(SchemaLoader.compile(doc))
                        .await()
                        .atMost(WAIT));
        assertEquals(refusal.get("code").asText(), applied.code());
        assertEquals("tasks", applied.details().get("table"));
        assertEquals("title", applied.details().get("column"));
        assertEquals(2, storedVersion());

        // a unique index over rows that already collide (three tasks of list l1, none done)
        ObjectNode colliding = document(3, List.of(1, 2, 3));
        uniqueIndex(colliding, "tasks", "tasks_done", "list_id", "done");
        JsonNode duplicates = plan(colliding, "");
        assertFalse(duplicates.get("allowed").asBoolean());
        assertEquals(
                StorageException.UNIQUE_INDEX_DUPLICATES,
                duplicates.get("refusal").get("code").asText());
        assertEquals(
                "tasks", duplicates.get("refusal").get("details").get("table").asText());
        assertEquals(
                "tasks_done",
                duplicates.get("refusal").get("details").get("index").asText());
        StorageException collided = assertThrows(
                StorageException.class,
                () -> new PostgresSyncStorage(pool, PG_SCHEMA, PostgresSyncStorage.Settings.DEFAULTS)
                        .ensureSchema(SchemaLoader.compile(colliding))
                        .await()
                        .atMost(WAIT));
        assertEquals(StorageException.UNIQUE_INDEX_DUPLICATES, collided.code());
        assertEquals("tasks_done", collided.details().get("index"));
        assertEquals(2, storedVersion());
    }

    @Test
    @Order(3)
    void anAdditiveChangeRunsTheListedDdlAndRefusesNoClient() throws Exception {
        seed();
        ObjectNode doc = additive();
        JsonNode plan = plan(doc, "?days=7");
        assertTrue(plan.get("allowed").asBoolean(), plan.toString());
        assertTrue(plan.get("refusal").isNull());
        ByteArrayOutputStream cliOut = new ByteArrayOutputStream();
        int exit = SyncularCli.run(
                new String[] {
                    "--url",
                    "http://localhost:" + port,
                    "--token",
                    TOKEN,
                    "--schema",
                    write("v3.json", doc).toString(),
                    "schema",
                    "plan",
                    "--days",
                    "7"
                },
                new PrintStream(cliOut, true, StandardCharsets.UTF_8),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        assertEquals(0, exit);
        assertEquals(
                plan.get("storage").get("ddl"),
                Json.readTree(cliOut.toString(StandardCharsets.UTF_8))
                        .get("storage")
                        .get("ddl"));
        assertEquals(2, plan.get("storedSchemaVersion").asInt());
        assertEquals("upgrade", plan.get("storage").get("action").asText());
        List<String> ddl = sql(plan.get("storage").get("ddl"));
        assertTrue(
                ddl.stream().anyMatch(s -> s.contains("ADD COLUMN IF NOT EXISTS \"priority\" bigint")), ddl.toString());
        assertTrue(ddl.stream().anyMatch(s -> s.startsWith("CREATE UNIQUE INDEX IF NOT EXISTS")), ddl.toString());
        for (JsonNode st : plan.get("storage").get("ddl")) {
            // the existing table's CREATE ... IF NOT EXISTS does nothing; every other statement takes its lock
            boolean noOp = st.get("sql").asText().startsWith("CREATE TABLE")
                    && "tasks".equals(st.get("table").asText());
            assertEquals(noOp, st.get("estimatedMs").asLong() == 0, st.toString());
            assertEquals(!noOp, st.get("blocksWrites").asBoolean(), st.toString());
        }
        // the new table's index comes with it; the one on tasks is built concurrently over its three rows
        JsonNode concurrent = plan.get("storage").get("concurrentDdl");
        assertEquals(1, concurrent.size(), concurrent.toString());
        assertTrue(concurrent.get(0).get("sql").asText().startsWith("CREATE UNIQUE INDEX CONCURRENTLY"));
        assertEquals("tasks", concurrent.get(0).get("table").asText());
        assertEquals(4, concurrent.get(0).get("rows").asLong());
        assertFalse(concurrent.get(0).get("blocksWrites").asBoolean());
        assertTrue(plan.get("storage").get("writesBlockedMs").asLong() > 0);
        assertEquals(List.of(3, 2, 1), ints(plan.get("window").get("versions")));
        assertEquals(1, version(plan, 1).get("clients").asLong());
        assertEquals(1, version(plan, 2).get("clients").asLong());
        assertTrue(version(plan, 1).get("served").asBoolean());
        assertEquals(0, plan.get("clients").get("refusedClients").asLong());
        // tasks gains a column: a client moving to version 3 re-bootstraps the three rows its scopes (list l1) reach,
        // not the fourth of list l2
        JsonNode rebootstrap = version(plan, 2).get("rebootstrap").get(0);
        assertEquals("tasks", rebootstrap.get("table").asText());
        assertEquals(3, rebootstrap.get("rows").asLong());
        assertEquals(bobRows, rebootstrap.get("rows").asLong(), "the rows bob's bootstrap received");
        assertTrue(rebootstrap.get("bytes").asLong() > 0);
        // a nullable column: a backfill is possible, not required
        JsonNode backfill = plan.get("backfills").get(0);
        assertEquals("tasks", backfill.get("table").asText());
        assertFalse(backfill.get("required").asBoolean());
        assertTrue(plan.get("serveGate").get("migrates").asBoolean());
        assertEquals(2, storedVersion(), "a plan changes nothing");

        // the console page, the document pasted: the same plan, laid out
        String page = consolePlan("document=" + enc(doc.toString()) + "&days=7&checkpoints=", 200);
        assertTrue(page.contains("id=\"allowed\""), page);
        assertEquals(ddl.size(), page.split("<tr class=\"statement\">", -1).length - 1, page);
        assertTrue(page.contains("<span id=\"window\">3, 2, 1</span>"), page);
        assertTrue(consolePlan("document=" + enc("{not json") + "&days=7", 400).contains("id=\"plan-error\""));
        assertTrue(
                consolePlan("document=" + enc(doc.toString()) + "&days=0", 400).contains("sync.invalid_request"));
        assertEquals(2, storedVersion(), "a plan changes nothing");

        SyncEngine pod = apply(SchemaLoader.compile(doc), List.of(V2, V1), List.of());
        assertEquals(ddl, appliedDdl(), "the DDL listed is the DDL run");
        String built = concurrent.get(0).get("sql").asText().split(" ")[7].replace("\"", "");
        long valid = pool.preparedQuery("SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                        + " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2"
                        + " AND i.indisvalid")
                .execute(Tuple.of(PG_SCHEMA, built))
                .await()
                .atMost(WAIT)
                .iterator()
                .next()
                .getLong(0);
        assertEquals(1, valid, "the index listed is the index built: " + built);
        assertEquals(Map.of(), refusedBy(pod));
    }

    @Test
    @Order(4)
    void aChangeLeavingOldClientsOutsideTheWindowCountsTheClientsThenRefused() throws Exception {
        seed();
        ObjectNode doc = dropsVersionOne();
        JsonNode plan = plan(doc, "");
        assertTrue(plan.get("allowed").asBoolean(), plan.toString());
        assertEquals(3, plan.get("storedSchemaVersion").asInt());
        // the running pods serve 2 and 1: 2 stays, 1 is not in the new history
        assertEquals(List.of(4, 2), ints(plan.get("window").get("versions")));
        JsonNode excluded = plan.get("window").get("excluded").get(0);
        assertEquals(1, excluded.get("version").asInt());
        assertEquals(
                "window_not_in_history", excluded.get("details").get("reason").asText());
        assertFalse(version(plan, 1).get("served").asBoolean());
        assertEquals(2, version(plan, 1).get("requiredSchemaVersion").asInt());
        assertTrue(version(plan, 2).get("served").asBoolean());
        assertEquals(1, plan.get("clients").get("refusedClients").asLong());
        List<String> ddl = sql(plan.get("storage").get("ddl"));

        // start-up refuses the excluded document for the same rule, and serves the rest
        Path v3 = write("v3.json", additive());
        ConfigurationException refusedDoc = assertThrows(
                ConfigurationException.class,
                () -> EngineProducer.window(
                        SchemaLoader.compile(doc), List.of(V1.toAbsolutePath().toString()), Set.of("yjs-doc")));
        assertTrue(refusedDoc.getMessage().contains("window_not_in_history"), refusedDoc.getMessage());
        SyncEngine pod = apply(SchemaLoader.compile(doc), List.of(v3, V2), List.of());
        assertEquals(ddl, appliedDdl());
        Map<String, Integer> refused = refusedBy(pod);
        assertEquals(Map.of("alice", 2), refused);
        assertEquals(plan.get("clients").get("refusedClients").asLong(), refused.size());
    }

    @Test
    @Order(5)
    void aChangeNeedingABackfillListsItsRowsAndCheckpoint() throws Exception {
        seed();
        ObjectNode doc = needsBackfill();
        JsonNode plan = plan(doc, "?checkpoint=" + PARTITION + ":fill-estimate");
        assertTrue(plan.get("allowed").asBoolean(), plan.toString());
        JsonNode backfill = plan.get("backfills").get(0);
        assertEquals("tasks", backfill.get("table").asText());
        assertEquals(List.of("estimate"), List.of(backfill.get("columns").get(0).asText()));
        assertTrue(backfill.get("required").asBoolean());
        assertEquals(4, backfill.get("rows").asLong(), "every row of the table, in every list");
        JsonNode part = backfill.get("partitions").get(0);
        assertEquals(PARTITION, part.get("partition").asText());
        assertEquals(4, part.get("rows").asLong());
        assertEquals("fill-estimate", part.get("checkpoint").asText());
        assertEquals(
                PARTITION,
                plan.get("serveGate").get("checkpointPartitions").get(0).asText());
        // an appended not-null column: no older version stays in the window
        assertEquals(List.of(5), ints(plan.get("window").get("versions")));
        assertEquals(2, plan.get("clients").get("refusedClients").asLong());
        List<String> ddl = sql(plan.get("storage").get("ddl"));

        CompiledSchema next = SchemaLoader.compile(doc);
        SyncEngine pod = apply(next, List.of(), List.of(new CheckpointDeclaration(PARTITION, "fill-estimate", 5)));
        assertEquals(ddl, appliedDdl());
        Row checkpoint = pool.preparedQuery("SELECT state, schema_version FROM \"" + PG_SCHEMA
                        + "\".sync_backfill_checkpoints WHERE partition_id = $1 AND name = $2")
                .execute(Tuple.of(PARTITION, "fill-estimate"))
                .await()
                .atMost(WAIT)
                .iterator()
                .next();
        assertEquals("declared", checkpoint.getString(0));
        assertEquals(5, checkpoint.getInteger(1));
        Map<String, Integer> refused = refusedBy(pod);
        assertEquals(Map.of("alice", 5, "bob", 5), refused);
        assertEquals(plan.get("clients").get("refusedClients").asLong(), refused.size());
        long nulls = pool.query("SELECT count(*) FROM \"" + PG_SCHEMA + "\".sync_rows_tasks WHERE estimate IS NULL")
                .execute()
                .await()
                .atMost(WAIT)
                .iterator()
                .next()
                .getLong(0);
        assertEquals(backfill.get("rows").asLong(), nulls, "the rows the backfill must fill");
    }
}
