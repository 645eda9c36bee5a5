package dev.syncular.server.testsupport;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;

/**
 * One running app for the test classes that need only the notes schema, their own storage schema and the admin
 * API ({@code CliCommitsTest}, {@code ServeGateLifecycleTest}, {@code HostileRequestsTest},
 * {@code BackfillCommandTest}), and for the conformance host's classes ({@code ConformanceHostTest},
 * {@code ConformanceRecoveryTest}, {@code CrdtColumnsTest}, {@code ValidatorsTest}): each distinct Quarkus test
 * profile builds and restarts the app, and these differ only in properties the others never touch (the blob size cap
 * and the response cap that {@code HostileRequestsTest} probes, an admin token, the {@code /__conformance} routes,
 * whose instances bring their own schema, storage, limits and realtime hub). Every test works in a partition, or a
 * conformance instance, of its own; the storage schema is fixed for the JVM ({@link #PG_SCHEMA}).
 */
public class NotesAppProfile implements QuarkusTestProfile {
    public static final String SCHEMA =
            Path.of("src/test/resources/schema/notes.json").toAbsolutePath().toString();
    public static final String ADMIN_TOKEN = "admin-" + UUID.randomUUID();
    /** {@code syncular.storage.pg-schema}: one value for the JVM, however often Quarkus reads the overrides. */
    public static final String PG_SCHEMA =
            "sync_notes_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    /** {@code syncular.blobs.max-bytes}. */
    public static final int BLOB_MAX_BYTES = 1024 * 1024;

    /**
     * The notes schema served from a storage schema of its own, {@code prefix} and ten random hex digits: the two
     * settings every app on the notes schema needs, for profiles of their own.
     */
    public static Map<String, String> notesIn(String prefix) {
        return Map.of(
                "syncular.schema.path",
                SCHEMA,
                "syncular.storage.pg-schema",
                prefix + UUID.randomUUID().toString().replace("-", "").substring(0, 10));
    }

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> m = new java.util.HashMap<>(notesIn("sync_notes_"));
        m.putAll(Map.of(
                "syncular.storage.pg-schema",
                PG_SCHEMA,
                // the conformance host's routes (docs/CONFORMANCE.md); ConformanceDisabledTest keeps "off by default"
                "syncular.conformance.enabled",
                "true",
                "syncular.admin.token",
                ADMIN_TOKEN,
                "syncular.blobs.max-bytes",
                String.valueOf(BLOB_MAX_BYTES),
                "syncular.limits.max-response-bytes",
                "64K"));
        return m;
    }
}
