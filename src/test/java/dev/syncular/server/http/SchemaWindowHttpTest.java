package dev.syncular.server.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.RespHeader;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * §9 schema window by configuration: the packaged server started with {@code syncular.schema.path} = version 2
 * (one appended nullable column, {@code tasks.note}) and {@code syncular.schema.window} = the version-1 document
 * serves a version-1 and a version-2 client side by side, over real HTTP and PostgreSQL. Each pulls rows in its own
 * codec; an old client's insert leaves the new column null, its update leaves it untouched (§9 "new nullable columns
 * are null on insert and absent on update"); a version outside the window gets the §1.6 floor naming the window's
 * oldest version as required and the current one as latest.
 */
@QuarkusTest
@OwnApp
@TestProfile(SchemaWindowHttpTest.TwoVersions.class)
class SchemaWindowHttpTest {
    static final Path DIR = Path.of("src/test/resources/schema/window");
    static final CompiledSchema V1 = SchemaLoader.load(DIR.resolve("v1.syncular.ir.json"));
    static final CompiledSchema V2 = SchemaLoader.load(DIR.resolve("v2.syncular.ir.json"));

    /** Configured the way docs/SCHEMA.md says: the current document and the older one in the window. */
    public static class TwoVersions implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> m = new HashMap<>();
            m.put(
                    "syncular.schema.path",
                    DIR.resolve("v2.syncular.ir.json").toAbsolutePath().toString());
            m.put(
                    "syncular.schema.window",
                    DIR.resolve("v1.syncular.ir.json").toAbsolutePath().toString());
            m.put(
                    "syncular.storage.pg-schema",
                    "sync_window_"
                            + UUID.randomUUID().toString().replace("-", "").substring(0, 10));
            return m;
        }
    }

    @Inject
    SchemaWindow window;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private String partition;

    @BeforeEach
    void freshPartition() {
        partition = "tenant-" + UUID.randomUUID();
    }

    private SyncTestClient client(CompiledSchema schema, String actor) {
        return new SyncTestClient(
                        schema,
                        new HttpTransport("http://localhost:" + port, partition),
                        actor,
                        actor + "-" + UUID.randomUUID())
                .subscribe("tasks", "tasks", Map.of("list_id", List.of("l1")));
    }

    private static RespHeader header(Message m) {
        for (Frame f : m.frames()) {
            if (f instanceof RespHeader h) {
                return h;
            }
        }
        throw new AssertionError("no RESP_HEADER in " + m.frames());
    }

    @Test
    void theConfiguredWindowIsServed() {
        assertEquals(List.of(2, 1), window.versions());
        assertEquals(V2, window.current());
    }

    @Test
    void versionOneAndVersionTwoClientsSyncSideBySideThroughAnAdditiveChange() {
        SyncTestClient oldApp = client(V1, "alice");
        SyncTestClient newApp = client(V2, "bob");
        oldApp.syncUntilIdle();
        newApp.syncUntilIdle();
        assertNull(header(oldApp.lastResponse).requiredSchemaVersion(), "version 1 is in the window: no floor");

        // An old build inserts: the column it does not know is null for everyone.
        String insert =
                oldApp.upsert("tasks", Map.of("id", "t1", "list_id", "l1", "title", "buy milk", "done", false), null);
        oldApp.syncUntilIdle();
        assertEquals(CommitStatus.APPLIED, oldApp.result(insert).status(), String.valueOf(oldApp.result(insert)));
        newApp.syncUntilIdle();
        SyncTestClient.LocalRow seenByNew = newApp.table("tasks").get("t1");
        assertArrayEquals(new Object[] {"t1", "l1", "buy milk", false, null}, seenByNew.values());

        // A new build fills the new column; the old build receives the row through its own codec (4 columns).
        String note = newApp.upsert(
                "tasks", Map.of("id", "t1", "note", "2 litres", "title", "buy oat milk"), seenByNew.version());
        newApp.syncUntilIdle();
        assertEquals(CommitStatus.APPLIED, newApp.result(note).status(), String.valueOf(newApp.result(note)));
        oldApp.syncUntilIdle();
        SyncTestClient.LocalRow seenByOld = oldApp.table("tasks").get("t1");
        assertArrayEquals(new Object[] {"t1", "l1", "buy oat milk", false}, seenByOld.values());

        // The old build updates a column it knows: the new column is absent from its push, so it keeps its value.
        String done = oldApp.upsert("tasks", Map.of("id", "t1", "done", true), seenByOld.version());
        oldApp.syncUntilIdle();
        assertEquals(CommitStatus.APPLIED, oldApp.result(done).status(), String.valueOf(oldApp.result(done)));
        newApp.syncUntilIdle();
        assertArrayEquals(
                new Object[] {"t1", "l1", "buy oat milk", true, "2 litres"},
                newApp.table("tasks").get("t1").values());

        // A fresh install of the old build bootstraps in its own codec.
        SyncTestClient reinstalled = client(V1, "carol");
        reinstalled.syncUntilIdle();
        assertArrayEquals(
                new Object[] {"t1", "l1", "buy oat milk", true},
                reinstalled.table("tasks").get("t1").values());
    }

    @Test
    void aVersionOutsideTheWindowGetsTheFloorNamingTheOldestServedVersion() throws IOException {
        String v3 = Files.readString(DIR.resolve("v2.syncular.ir.json"))
                .replace("\"schemaVersion\": 2", "\"schemaVersion\": 3")
                .replace("\"version\": 2", "\"version\": 3");
        CompiledSchema future = SchemaLoader.parse(v3);
        assertEquals(3, future.version());
        SyncTestClient unknown = client(future, "dave");
        RespHeader h = header(unknown.sync());
        assertEquals(1, h.requiredSchemaVersion(), "§9: the floor names the window's oldest served version");
        assertEquals(2, h.latestSchemaVersion(), "§9: and the current version as latest");
        assertTrue(unknown.table("tasks").isEmpty(), "nothing else is processed (§1.6)");
    }
}
