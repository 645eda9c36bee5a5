package dev.syncular.server.testsupport;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The app of the Appendix B scenario tests: the notes schema ({@code src/test/resources/schema/notes.json}) in a
 * PostgreSQL schema of its own, scopes from the test's {@link GrantTable}, the per-actor fairness limits off (the
 * scenarios' concurrency tests idempotency and races, not fairness: {@code FairnessTest} covers it) and a blob size
 * cap the blob scenarios probe. One app for {@code http.HttpSyncScenariosTest}, {@code http.HttpBlobScenariosTest}
 * and the {@code scenarios} package: each distinct profile restarts the app. Every test works in a partition of its
 * own.
 */
public class ScenarioAppProfile implements QuarkusTestProfile {
    /** {@code syncular.blobs.max-bytes}. */
    public static final int BLOB_MAX_BYTES = 64 * 1024;

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of(
                "syncular.schema.path",
                Path.of("src/test/resources/schema/notes.json").toAbsolutePath().toString(),
                "syncular.storage.pg-schema",
                "sync_e2e_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10),
                "syncular.fairness.max-rounds-per-actor",
                "0",
                "syncular.fairness.max-push-operations-per-actor",
                "0",
                "syncular.blobs.max-bytes",
                String.valueOf(BLOB_MAX_BYTES));
    }

    @Override
    public Set<Class<?>> getEnabledAlternatives() {
        return Set.of(GrantTable.class);
    }
}
