package dev.syncular.server.observability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.segments.memory.InMemorySegmentStore;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.sync.EngineParts;
import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.EngineTransport;
import dev.syncular.server.testsupport.LogCapture;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.wire.SubscriptionStatus;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/**
 * §3.2: a failing scope resolver revokes the request's subscriptions — so an authorization outage makes
 * clients purge their data. That stays, but it is no longer silent (issue #17): every failure is counted in
 * {@code syncular.scope_resolver.failures} and logged with its cause, at most once per interval. Through the
 * engine on real PostgreSQL storage.
 */
class ScopeResolverFailuresTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void aFailingResolverIsCountedAndLoggedNotJustRevoked() {
        Vertx vertx = Vertx.vertx();
        Pool pool = TestPostgres.pool(vertx, 4);
        PostgresSyncStorage storage = new PostgresSyncStorage(
                pool,
                "sync_resolver_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10),
                PostgresSyncStorage.Settings.DEFAULTS);
        LogCapture log = LogCapture.of(ScopeResolverFailures.class.getName(), Level.INFO, "requestId");
        try {
            storage.ensureSchema(SyncScenariosContract.SCHEMA).await().atMost(WAIT);
            SimpleMeterRegistry meters = new SimpleMeterRegistry();
            ScopeResolverFailures failures = new ScopeResolverFailures(meters);
            ScopeResolver outage =
                    (actor, partition) -> Uni.createFrom().failure(new IllegalStateException("authz service down"));
            SyncEngine engine = new SyncEngine(EngineParts.builder(
                            SchemaWindow.single(SyncScenariosContract.SCHEMA),
                            storage,
                            new InMemorySegmentStore(),
                            failures.observe(outage))
                    .build());
            String partition = "p-" + UUID.randomUUID();
            SyncTestClient client = new SyncTestClient(
                            SyncScenariosContract.SCHEMA,
                            new EngineTransport(engine, partition, Map.of()),
                            "alice",
                            "c-" + UUID.randomUUID())
                    .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
            client.sync(); // the log epoch
            for (int i = 0; i < 3; i++) {
                client.subscriptions.get("notes-p1").status = null; // asks again, as after a re-subscribe
                client.sync();
                assertEquals(
                        SubscriptionStatus.REVOKED,
                        client.subscriptions.get("notes-p1").status,
                        "§3.2 unchanged: revoked");
            }
            assertEquals(
                    3.0,
                    meters.get("syncular.scope_resolver.failures").counter().count(),
                    "every failure counted");
            assertEquals(1, log.lines.size(), "logged once per interval: " + log.lines);
            assertInstanceOf(IllegalStateException.class, log.lines.get(0).thrown(), "with its cause");
        } finally {
            log.close();
            pool.query("DROP SCHEMA IF EXISTS \"" + storage.pgSchema() + "\" CASCADE")
                    .execute()
                    .await()
                    .atMost(WAIT);
            pool.close().await().atMost(WAIT);
            vertx.close().await().atMost(WAIT);
        }
    }
}
