package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.storage.ChangeToWrite;
import dev.syncular.server.storage.CommitQuery;
import dev.syncular.server.storage.CommitWindow;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.storage.SyncStorageContract;
import dev.syncular.server.testsupport.TestPostgres;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.pgclient.PgBuilder;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.PoolOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Runs the {@link SyncStorageContract} against a real PostgreSQL ({@code SYNCULAR_TEST_PG_URL},
 * {@code SYNCULAR_TEST_PG_USER}, {@code SYNCULAR_TEST_PG_PASSWORD} as {@code .ci/run} exports them, else
 * the embedded PostgreSQL of {@link TestPostgres}), plus the PostgreSQL-specific §2.4 readiness and upgrade checks. Every storage lives in its
 * own fresh PostgreSQL schema, dropped after the class.
 */
class PostgresSyncStorageTest extends SyncStorageContract {
    private static Vertx vertx;
    private static Pool pool;
    private final List<String> createdSchemas = new ArrayList<>();
    private String mainSchema;

    private static synchronized Pool pool() {
        if (pool == null) {
            PgConnectOptions options = PgConnectOptions.fromUri(TestPostgres.url())
                    .setUser(TestPostgres.user())
                    .setPassword(TestPostgres.password())
                    .setCachePreparedStatements(true);
            vertx = Vertx.vertx();
            pool = PgBuilder.pool().with(new PoolOptions().setMaxSize(8)).connectingTo(options).using(vertx).build();
        }
        return pool;
    }

    private String freshSchemaName() {
        String name = "sync_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        createdSchemas.add(name);
        return name;
    }

    private PostgresSyncStorage newStorage() {
        return new PostgresSyncStorage(pool(), freshSchemaName());
    }

    @Override
    protected SyncStorage createStorage() {
        PostgresSyncStorage s = newStorage();
        mainSchema = s.pgSchema();
        return s;
    }

    @Override
    protected Map<String, Long> countAllTables() {
        return countTables(mainSchema);
    }

    private Map<String, Long> countTables(String pgSchema) {
        List<String> names = new ArrayList<>();
        for (Row r : await(pool().preparedQuery("SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1")
                .execute(Tuple.of(pgSchema)))) {
            names.add(r.getString(0));
        }
        assertTrue(names.size() >= 11, "every storage table exists: " + names);
        Map<String, Long> counts = new TreeMap<>();
        for (String n : names) {
            counts.put(n, await(pool().query("SELECT count(*) FROM \"" + pgSchema + "\".\"" + n + "\"").execute()).iterator().next().getLong(0));
        }
        return counts;
    }

    @AfterAll
    void dropSchemas() {
        try {
            for (String s : createdSchemas) {
                await(pool().query("DROP SCHEMA IF EXISTS \"" + s + "\" CASCADE").execute());
            }
        } finally {
            if (pool != null) {
                await(pool.close());
                await(vertx.close());
                pool = null;
                vertx = null;
            }
        }
    }

    private void sql(String pgSchema, String statement) {
        await(pool().query(statement.replace("$S", "\"" + pgSchema + "\"")).execute());
    }

    private List<String> catalog(String pgSchema) {
        List<String> out = new ArrayList<>();
        for (Row r : await(pool().preparedQuery("SELECT table_name || '.' || column_name || ':' || data_type || ':' || is_nullable"
                        + " FROM information_schema.columns WHERE table_schema = $1 ORDER BY 1")
                .execute(Tuple.of(pgSchema)))) {
            out.add(r.getString(0));
        }
        return out;
    }

    private String marker(String pgSchema) {
        Row r = await(pool().query("SELECT schema_version || '|' || layouts FROM \"" + pgSchema + "\".sync_schema").execute()).iterator().next();
        return r.getString(0);
    }

    /** Opens a fresh storage, applies {@code schema}, tampers with it, and expects the same-version refusal. */
    private StorageException refusal(Consumer<String> tamper, CompiledSchema reopenWith) {
        PostgresSyncStorage first = newStorage();
        await(first.ensureSchema(schema));
        tamper.accept(first.pgSchema());
        List<String> catalogBefore = catalog(first.pgSchema());
        String markerBefore = marker(first.pgSchema());
        StorageException e = storageFailure(new PostgresSyncStorage(pool(), first.pgSchema()).ensureSchema(reopenWith));
        assertEquals(catalogBefore, catalog(first.pgSchema()), "a refused open writes no DDL");
        assertEquals(markerBefore, marker(first.pgSchema()), "a refused open writes no rows");
        assertFalse(e.getMessage().contains("tasks") || e.getMessage().contains("_sync_"), "the message never names tables or columns");
        return e;
    }

    private static Map<String, Object> details(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    // ---- §2.4 same-version storage readiness --------------------------------------------------------

    @Test
    void storedLayoutMismatchWhenPersistedLayoutDiffers() {
        StorageException e = refusal(s -> sql(s, "UPDATE $S.sync_schema SET layouts = replace(layouts,"
                + " '{\"name\":\"title\",\"type\":\"string\",\"nullable\":true}', '{\"name\":\"title\",\"type\":\"json\",\"nullable\":true}')"), schema);
        assertEquals(StorageException.STORED_LAYOUT_MISMATCH, e.code());
        assertEquals(details("table", "tasks", "column", "title"), e.details());
    }

    @Test
    void storedLayoutMismatchWhenRunningSchemaChangesWithoutAVersionBump() {
        CompiledSchema changed = SchemaLoader.parse(SCHEMA_JSON.replace(
                "{ \"name\": \"body\", \"type\": \"string\", \"nullable\": true }",
                "{ \"name\": \"body\", \"type\": \"string\", \"nullable\": false }"));
        StorageException e = refusal(s -> {}, changed);
        assertEquals(StorageException.STORED_LAYOUT_MISMATCH, e.code());
        assertEquals(details("table", "notes", "column", "body"), e.details());
    }

    @Test
    void physicalMismatchOnInternalColumnType() {
        String table = PostgresSyncStorage.rowTableName("tasks");
        StorageException e = refusal(s -> sql(s, "ALTER TABLE $S." + table + " ALTER COLUMN _sync_server_version TYPE integer"), schema);
        assertEquals(StorageException.PHYSICAL_LAYOUT_MISMATCH, e.code());
        assertEquals(details("table", "tasks", "column", "_sync_server_version", "reason", "type", "expected", "bigint", "actual", "integer"), e.details());
    }

    @Test
    void physicalMismatchOnInternalColumnNullability() {
        String table = PostgresSyncStorage.rowTableName("notes");
        StorageException e = refusal(s -> sql(s, "ALTER TABLE $S." + table + " ALTER COLUMN _sync_payload SET NOT NULL"), schema);
        assertEquals(details("table", "notes", "column", "_sync_payload", "reason", "nullability", "expected", "nullable", "actual", "not_null"), e.details());
    }

    @Test
    void physicalMismatchOnDroppedAppColumn() {
        String table = PostgresSyncStorage.rowTableName("tasks");
        StorageException e = refusal(s -> sql(s, "ALTER TABLE $S." + table + " DROP COLUMN score"), schema);
        assertEquals(StorageException.PHYSICAL_LAYOUT_MISMATCH, e.code());
        assertEquals(details("table", "tasks", "column", "score", "reason", "missing_column"), e.details());
    }

    @Test
    void physicalMismatchOnMissingColumnVersions() {
        String table = PostgresSyncStorage.rowTableName("tasks");
        StorageException e = refusal(s -> sql(s, "ALTER TABLE $S." + table + " DROP COLUMN _sync_column_versions"), schema);
        assertEquals(details("table", "tasks", "column", "_sync_column_versions", "reason", "missing_column"), e.details());
    }

    @Test
    void physicalMismatchOnMissingTable() {
        String table = PostgresSyncStorage.rowTableName("notes");
        StorageException e = refusal(s -> sql(s, "DROP TABLE $S." + table), schema);
        assertEquals(details("table", "notes", "reason", "missing_table"), e.details());
    }

    @Test
    void physicalMismatchOnPrimaryKey() {
        String table = PostgresSyncStorage.rowTableName("tasks");
        StorageException e = refusal(s -> {
            sql(s, "ALTER TABLE $S." + table + " DROP CONSTRAINT " + table + "_pkey");
            sql(s, "ALTER TABLE $S." + table + " ADD PRIMARY KEY (_sync_row_id)");
        }, schema);
        assertEquals(details("table", "tasks", "reason", "primary_key"), e.details());
    }

    @Test
    void appColumnTypesAreAnsweredByThePersistedLayouts() {
        PostgresSyncStorage first = newStorage();
        await(first.ensureSchema(schema));
        sql(first.pgSchema(), "ALTER TABLE $S." + PostgresSyncStorage.rowTableName("tasks") + " ALTER COLUMN title DROP NOT NULL");
        await(new PostgresSyncStorage(pool(), first.pgSchema()).ensureSchema(schema));
    }

    // ---- schema versions ---------------------------------------------------------------------------

    @Test
    void newerStoredVersionIsNotReady() {
        PostgresSyncStorage first = newStorage();
        await(first.ensureSchema(SchemaLoader.parse(SCHEMA_JSON.replace("\"version\": 1", "\"version\": 2"))));
        StorageException e = storageFailure(new PostgresSyncStorage(pool(), first.pgSchema()).ensureSchema(schema));
        assertEquals(StorageException.SCHEMA_NOT_READY, e.code());
    }

    @Test
    void additiveUpgradeAddsColumnsAndKeepsOldPayloadsReadable() {
        PostgresSyncStorage v1 = newStorage();
        await(v1.ensureSchema(schema));
        String p = "p-upgrade";
        await(v1.touchPartition(p, 1L));
        Object[] note = {1L, "P1", "hello"};
        await(v1.inPartitionTransaction(p, tx -> tx.appendCommit("a", "c", "cc", 1L,
                        List.of(ChangeToWrite.upsert("notes", "1", 1, Map.of("project_id", "P1"), note)))
                .call(s -> tx.upsertRow("notes", new StoredRow("1", 1, note, new long[3], Map.of("project_id", "P1"))))));

        String v2Json = SCHEMA_JSON.replace("\"version\": 1", "\"version\": 2").replace(
                "{ \"name\": \"body\", \"type\": \"string\", \"nullable\": true }",
                "{ \"name\": \"body\", \"type\": \"string\", \"nullable\": true },\n"
                        + "{ \"name\": \"pinned\", \"type\": \"boolean\", \"nullable\": true }");
        v2Json = v2Json.replace("  ]\n}", "  ,{ \"name\": \"tags\", \"columns\": [ { \"name\": \"id\", \"type\": \"string\", \"nullable\": false },"
                + " { \"name\": \"project_id\", \"type\": \"string\", \"nullable\": false } ], \"primaryKey\": \"id\","
                + " \"scopes\": [\"project:{project_id}\"] } ]\n}");
        CompiledSchema v2schema = SchemaLoader.parse(v2Json);
        PostgresSyncStorage v2 = new PostgresSyncStorage(pool(), v1.pgSchema());
        await(v2.ensureSchema(v2schema));
        assertTrue(marker(v1.pgSchema()).startsWith("2|"));
        assertTrue(catalog(v1.pgSchema()).contains(PostgresSyncStorage.rowTableName("notes") + ".pinned:boolean:YES"));
        assertTrue(catalog(v1.pgSchema()).contains(PostgresSyncStorage.rowTableName("tags") + ".id:text:NO"));
        await(new PostgresSyncStorage(pool(), v1.pgSchema()).ensureSchema(v2schema)); // same version now verifies

        CommitWindow w = await(v2.readCommits(p, new CommitQuery("notes", Map.of("project_id", Set.of("P1")), 0, 1, 10)));
        assertRowEquals(new Object[] {1L, "P1", "hello", null}, w.commits().get(0).changes().get(0).row());
        StoredRow row = await(v2.readRows(p, "notes", List.of("1"))).get("1");
        assertRowEquals(new Object[] {1L, "P1", "hello", null}, row.values());

        CompiledSchema incompatible = SchemaLoader.parse(v2Json.replace("\"version\": 2", "\"version\": 3")
                .replace("{ \"name\": \"body\", \"type\": \"string\", \"nullable\": true },", "{ \"name\": \"body\", \"type\": \"integer\", \"nullable\": true },"));
        StorageException e = storageFailure(new PostgresSyncStorage(pool(), v1.pgSchema()).ensureSchema(incompatible));
        assertEquals(StorageException.UNSUPPORTED_MIGRATION, e.code());
        assertTrue(marker(v1.pgSchema()).startsWith("2|"), "a failed upgrade changes nothing");
    }

    @Test
    void referenceQuickstartFixtureInstalls() {
        String override = System.getProperty("syncular.reference.dir");
        Path ref = override != null && !override.isBlank() ? Path.of(override) : Path.of("..", "shared", "reference");
        Path fixture = ref.resolve(Path.of("fixtures", "schema-ir", "quickstart.syncular.ir.json"));
        Assumptions.assumeTrue(Files.isRegularFile(fixture), "reference fixture not found");
        CompiledSchema quickstart = SchemaLoader.load(fixture);
        PostgresSyncStorage s = newStorage();
        await(s.ensureSchema(quickstart));
        await(new PostgresSyncStorage(pool(), s.pgSchema()).ensureSchema(quickstart));
        assertTrue(catalog(s.pgSchema()).contains(PostgresSyncStorage.rowTableName("todos") + ".done:boolean:NO"));
    }

    @Test
    void longTableNamesStayWithinTheIdentifierLimit() {
        String a = PostgresSyncStorage.rowTableName("x".repeat(63));
        String b = PostgresSyncStorage.rowTableName("x".repeat(62) + "y");
        assertTrue(a.length() <= 63 && b.length() <= 63);
        assertFalse(a.equals(b));
        assertEquals("sync_rows_tasks", PostgresSyncStorage.rowTableName("tasks"));
    }
}
