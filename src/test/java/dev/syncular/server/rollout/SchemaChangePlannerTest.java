package dev.syncular.server.rollout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaException;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.testsupport.ScratchSchemas;
import dev.syncular.server.wire.Json;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The plan against a real storage in a scratch PostgreSQL schema, for the storage decisions the HTTP test
 * ({@code boot.SchemaPlanHttpTest}) does not reach: a storage that holds nothing yet (every table created), the
 * running schema itself (nothing to do), an older version than the stored one (refused: the pods would stay unready).
 */
class SchemaChangePlannerTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @RegisterExtension
    static final ScratchSchemas SCRATCH = ScratchSchemas.open(2);

    private static final String V1 = "{\"version\":1,\"tables\":[{\"name\":\"t\",\"primaryKey\":\"id\",\"columns\":["
            + "{\"name\":\"id\",\"type\":\"string\",\"nullable\":false}],\"scopes\":[\"k:{id}\"]}]}";
    private static final String V2 = "{\"version\":2,\"tables\":[{\"name\":\"t\",\"primaryKey\":\"id\",\"columns\":["
            + "{\"name\":\"id\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"n\",\"type\":\"integer\",\"nullable\":true}],\"scopes\":[\"k:{id}\"]}]}";

    private static JsonNode plan(PostgresSyncStorage storage, CompiledSchema running, String doc) throws Exception {
        return new SchemaChangePlanner(
                        storage, SchemaWindow.single(running), Set.of("yjs-doc"), System::currentTimeMillis)
                .plan(Json.readTree(doc), List.of(), 30)
                .await()
                .atMost(WAIT);
    }

    @Test
    void anEmptyStorageCreatesEveryTableAndTheRunningSchemaChangesNothing() throws Exception {
        PostgresSyncStorage storage =
                new PostgresSyncStorage(SCRATCH.pool, SCRATCH.fresh("plan_"), PostgresSyncStorage.Settings.DEFAULTS);
        CompiledSchema v1 = SchemaLoader.parse(V1);
        JsonNode fresh = plan(storage, v1, V1);
        assertTrue(fresh.get("allowed").asBoolean(), fresh.toString());
        assertEquals("create", fresh.get("storage").get("action").asText());
        assertEquals(0, fresh.get("storedSchemaVersion").asInt());
        assertTrue(fresh.get("storage").get("ddl").get(0).get("sql").asText().startsWith("CREATE TABLE"));
        assertEquals(0, fresh.get("clients").get("versions").size(), "no client records yet");

        storage.ensureSchema(v1).await().atMost(WAIT);
        JsonNode same = plan(storage, v1, V1);
        assertTrue(same.get("allowed").asBoolean());
        assertEquals("unchanged", same.get("storage").get("action").asText());
        assertEquals(0, same.get("storage").get("ddl").size());
        assertFalse(same.get("serveGate").get("migrates").asBoolean());
    }

    @Test
    void aVersionOlderThanTheStoredOneIsRefused() throws Exception {
        PostgresSyncStorage storage =
                new PostgresSyncStorage(SCRATCH.pool, SCRATCH.fresh("plan_"), PostgresSyncStorage.Settings.DEFAULTS);
        CompiledSchema v2 = SchemaLoader.parse(V2);
        storage.ensureSchema(v2).await().atMost(WAIT);
        JsonNode older = plan(storage, v2, V1);
        assertFalse(older.get("allowed").asBoolean());
        assertEquals(
                StorageException.SCHEMA_NOT_READY,
                older.get("refusal").get("code").asText());
        assertEquals(2, older.get("refusal").get("details").get("storedVersion").asInt());
        assertEquals("refused", older.get("storage").get("action").asText());
    }

    @Test
    void aDocumentThatDoesNotCompileIsAPlanNotAllowedNamingTheRule() throws Exception {
        PostgresSyncStorage storage =
                new PostgresSyncStorage(SCRATCH.pool, SCRATCH.fresh("plan_"), PostgresSyncStorage.Settings.DEFAULTS);
        CompiledSchema v1 = SchemaLoader.parse(V1);
        for (String doc : List.of(
                "{}",
                "{\"version\":-1,\"tables\":[]}",
                "{\"version\":1e30,\"tables\":[]}",
                "{\"version\":2,\"tables\":\"t\"}",
                "{\"version\":2,\"tables\":[{\"name\":\"t\"}]}",
                "{\"irVersion\":7}",
                V2.replace("\"integer\"", "\"no-such-type\""))) {
            JsonNode plan = plan(storage, v1, doc);
            assertFalse(plan.get("allowed").asBoolean(), doc);
            assertEquals(SchemaException.CODE, plan.get("refusal").get("code").asText(), doc);
            assertTrue(plan.get("refusal").get("details").hasNonNull("reason"), doc);
        }
    }

    @Test
    void aBodyThatIsNoJsonObjectIsBadInputNotAPlan() {
        PostgresSyncStorage storage =
                new PostgresSyncStorage(SCRATCH.pool, SCRATCH.fresh("plan_"), PostgresSyncStorage.Settings.DEFAULTS);
        SchemaException e = assertThrows(SchemaException.class, () -> plan(storage, SchemaLoader.parse(V1), "[1]"));
        assertEquals(SchemaChangePlanner.INVALID_DOCUMENT, e.reason());
    }
}
