package dev.syncular.server.operations;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OperationsAppProfile;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.pgclient.PgConnectOptions;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Remote queries (REMOTE.md §2) read from a streaming hot standby (docs/SCALING.md, "Reads from replicas") when it
 * has replayed the partition through every commit the pod heard announced: served there (counted), and with replay
 * paused a query after a push answers from the primary, with the pushed row, never without it again.
 */
@QuarkusTest
@OwnApp
@TestProfile(OperationsReplicaTest.Profile.class)
class OperationsReplicaTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String CT = OperationsResourceTest.CT;
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * The remote-operations app without its admin API ({@link OperationsAppProfile#base()}) in a storage schema of its
     * own, reading from the standby.
     */
    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> m = OperationsAppProfile.base();
            m.put("syncular.storage.pg-schema", "operations_replica_test");
            m.put("syncular.storage.replicas", TestPostgres.replicaUrl());
            m.put("syncular.storage.replica-max-lag", "1h");
            m.put("syncular.storage.replica-check-interval", "200ms");
            return m;
        }
    }

    @Inject
    SchemaWindow window;

    @Inject
    MeterRegistry registry;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private static Vertx vertx;
    private static Pool standby;

    @BeforeAll
    static void standbyPool() {
        vertx = Vertx.vertx();
        standby = TestPostgres.replicaPool(vertx, 1);
    }

    @AfterAll
    static void close() {
        TestPostgres.resumeReplay(standby);
        standby.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }

    private static String standbyName() {
        PgConnectOptions o = PgConnectOptions.fromUri(TestPostgres.replicaUrl());
        return o.getHost() + ":" + o.getPort() + "/" + o.getDatabase();
    }

    private double reads(String outcome) {
        Counter c = registry.find("syncular.replica.reads")
                .tag("replica", standbyName())
                .tag("outcome", outcome)
                .counter();
        return c == null ? 0 : c.count();
    }

    private boolean inRotation() {
        Gauge g = registry.find("syncular.replica.in.rotation")
                .tag("replica", standbyName())
                .gauge();
        return g != null && g.value() == 1.0;
    }

    private static void until(String what, BooleanSupplier done) {
        long end = System.nanoTime() + WAIT.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > end) {
                throw new AssertionError("not within " + WAIT + ": " + what);
            }
        }
    }

    private void push(String partition, String id) {
        SyncTestClient c = new SyncTestClient(
                window.current(),
                new HttpTransport("http://localhost:" + port, partition),
                "writer",
                "writer-" + UUID.randomUUID());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("list_id", "l1");
        m.put("title", "t-" + id);
        m.put("done", false);
        m.put("position", 1L);
        m.put("updated_at_ms", 1_700_000_000_123L);
        m.put("attachment", null);
        String commit = c.upsert("todos", m, null);
        c.syncUntilIdle();
        assertTrue(SyncTestClient.applied(c.result(commit)), "push applied: " + c.result(commit));
    }

    @SuppressWarnings("unchecked")
    private List<Object> ids(String partition) {
        try {
            Response r = given().contentType(CT)
                    .header("x-actor-id", "reader")
                    .header("x-syncular-partition", partition)
                    .body(JSON.writeValueAsBytes(OperationsResourceTest.query(
                            OperationsResourceTest.FIXTURE_ID,
                            OperationsResourceTest.obj("listId", OperationsResourceTest.str("l1")))))
                    .post("/operations");
            assertEquals(200, r.statusCode(), r.asString());
            JsonNode tree = JSON.readTree(r.asByteArray());
            return OperationsResourceTest.column((Map<String, Object>) OperationsResourceTest.plain(tree), "id");
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void queriesAreServedByTheStandbyAndNeverMissAnAnnouncedCommit() {
        String partition = "ops-replica-" + UUID.randomUUID();
        push(partition, "a1");
        until("the standby is in rotation", this::inRotation);
        double served = reads("served");
        until("a query served by the standby", () -> ids(partition).contains("a1") && reads("served") > served);

        TestPostgres.pauseReplay(standby);
        try {
            double behind = reads("behind");
            push(partition, "a2");
            // replay is paused, so a2 can only come from the primary: once this pod heard a2 announced, every query
            // passes the standby over
            until("a2 answered while replay is paused", () -> ids(partition).contains("a2"));
            assertTrue(reads("behind") > behind, "the paused standby was passed over");
            for (int i = 0; i < 20; i++) {
                assertTrue(ids(partition).contains("a2"), "query " + i + " went back before a2");
            }
        } finally {
            TestPostgres.resumeReplay(standby);
        }
        double again = reads("served");
        until("served by the standby again", () -> ids(partition).contains("a2") && reads("served") > again);
    }
}
