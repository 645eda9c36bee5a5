package dev.syncular.server.testsupport;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Configuration of the packaged artifact a {@code @QuarkusIntegrationTest} starts (the jar here, the native
 * executable with {@code -Dnative}; the {@code prod} profile), handed over as system properties: the test
 * PostgreSQL ({@link TestPostgres}) in a storage schema of its own (dropped at the end), segments and blobs in a
 * fresh bucket of the signature-checking S3 server ({@link TestS3}), the notes schema, an admin token, a signing
 * key, and dev header authentication (explicitly enabled, as the prod profile requires).
 */
public final class PackagedServer implements QuarkusTestResourceLifecycleManager {
    public static final String ADMIN_TOKEN = "it-admin-" + UUID.randomUUID();
    public static final String SCHEMA_PATH =
            Path.of("src/test/resources/schema/notes.json").toAbsolutePath().toString();
    private static final String PG_SCHEMA =
            "it_pkg_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private static volatile Map<String, String> config;

    /** The configuration the packaged server runs with (for another process of the same deployment). */
    public static Map<String, String> config() {
        Map<String, String> c = config;
        if (c == null) {
            throw new IllegalStateException("the PackagedServer resource has not started");
        }
        return c;
    }

    @Override
    public Map<String, String> start() {
        Map<String, String> c = new HashMap<>(TestS3.quarkusConfig());
        c.put("quarkus.datasource.reactive.url", TestPostgres.url());
        c.put("quarkus.datasource.username", TestPostgres.user());
        c.put("quarkus.datasource.password", TestPostgres.password());
        c.put("syncular.storage.pg-schema", PG_SCHEMA);
        c.put("syncular.schema.path", SCHEMA_PATH);
        c.put("syncular.dev-auth.enabled", "true");
        c.put("syncular.admin.token", ADMIN_TOKEN);
        c.put("syncular.signed-urls.key", "it-packaged-signing-key-0123456789abcdef");
        c.put("syncular.segments.store", "s3");
        c.put("syncular.blobs.store", "s3");
        c.put("syncular.s3.bucket", TestS3.newBucket());
        c.put("syncular.s3.key-prefix", "it/");
        c.put("syncular.s3.presign-ttl", "5m");
        // the management interface (/q/metrics, /q/openapi) on the test's management port, not the fixed 9000
        c.put("quarkus.management.port", String.valueOf(PrometheusScrape.managementTestPort()));
        config = Map.copyOf(c);
        return config;
    }

    @Override
    public void stop() {
        TestPostgres.dropSchema(PG_SCHEMA);
    }
}
