package dev.syncular.server.http;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.NotesAppProfile;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.SyncTestClient;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.IntPredicate;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.hamcrest.Matchers;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

/**
 * The serve gate bound to Kubernetes readiness (§2.4): {@code /q/health/ready} polled through a checkpoint's
 * whole lifecycle — UP, DOWN while a checkpoint this process did not declare is pending, UP after
 * activation — with {@code POST /sync} answering 503 {@code sync.schema_not_ready} exactly while readiness
 * is DOWN. The checkpoint is driven through the admin API.
 */
@QuarkusTest
@TestProfile(NotesAppProfile.class)
public class ServeGateLifecycleTest {
    static final String TOKEN = NotesAppProfile.ADMIN_TOKEN;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    /** Polls readiness until its HTTP status satisfies {@code expected} or the deadline passes. */
    private static Response readinessUntil(IntPredicate expected) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        Response r;
        do {
            r = given().get("/q/health/ready");
            if (expected.test(r.statusCode())) {
                return r;
            }
        } while (System.nanoTime() < deadline);
        throw new AssertionError("readiness stayed " + r.statusCode() + ": " + r.asString());
    }

    private static Response admin(String path, String json) {
        return given().header("Authorization", "Bearer " + TOKEN)
                .contentType("application/json")
                .body(json)
                .post("/admin/checkpoints" + path);
    }

    private SyncTestClient client(String partition) {
        return new SyncTestClient(
                        SyncScenariosContract.SCHEMA,
                        new HttpTransport("http://localhost:" + port, partition),
                        "alice",
                        "c-" + UUID.randomUUID())
                .subscribe("notes", "notes", Map.of("project_id", List.of("p1")));
    }

    @Test
    void readinessFollowsTheCheckpointLifecycle() {
        String partition = "tenant-" + UUID.randomUUID();
        SyncTestClient c = client(partition);
        c.syncUntilIdle();
        readinessUntil(s -> s == 200);

        admin("/declare", "{\"partition\":\"" + partition + "\",\"name\":\"fill\",\"schemaVersion\":1}")
                .then()
                .statusCode(200)
                .body("state", equalTo("declared"));
        Response down = readinessUntil(s -> s == 503);
        assertTrue(down.asString().contains("fill"), down.asString());
        HttpFailure refused = Assertions.assertThrows(HttpFailure.class, c::sync);
        assertEquals(503, refused.status);
        assertTrue(refused.body.contains("sync.schema_not_ready"), refused.body);
        assertTrue(refused.body.contains(partition), refused.body);
        given().header("x-actor-id", "alice")
                .header("x-syncular-partition", partition)
                .contentType(HttpTransport.CONTENT_TYPE)
                .body(c.buildRequest().encode())
                .post("/sync")
                .then()
                .statusCode(503)
                .header("Retry-After", Matchers.notNullValue());

        Response claimed =
                admin("/claim", "{\"partition\":\"" + partition + "\",\"name\":\"fill\",\"schemaVersion\":1}");
        claimed.then().statusCode(200).body("state", equalTo("backfilling"));
        long epoch = claimed.jsonPath().getLong("ownerEpoch");
        admin(
                        "/advance",
                        "{\"partition\":\"" + partition + "\",\"name\":\"fill\",\"ownerEpoch\":" + epoch
                                + ",\"watermark\":0,\"observedRows\":0}")
                .then()
                .statusCode(200)
                .body("advanced", equalTo(true));
        // Still DOWN while backfilling, then activation flips it.
        readinessUntil(s -> s == 503);
        admin(
                        "/activate",
                        "{\"partition\":\"" + partition + "\",\"name\":\"fill\",\"ownerEpoch\":" + epoch
                                + ",\"watermark\":0,\"sourceTables\":[\"notes\"]}")
                .then()
                .statusCode(200)
                .body("result", equalTo("activated"));
        readinessUntil(s -> s == 200);
        c.syncUntilIdle();

        given().port(PrometheusScrape.managementTestPort())
                .get("/q/metrics")
                .then()
                .statusCode(200)
                .body(containsString("syncular_serve_gate_refusals_total{reason=\"checkpoint_pending\"}"))
                .body(containsString("syncular_checkpoints_pending"));
        // the refusals are in this pod's event tail, with their partition
        List<Map<String, Object>> refusals = given().header("Authorization", "Bearer " + TOKEN)
                .get("/admin/events")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath()
                .getList("findAll { it.kind == 'gate_refusal' && it.partition == '" + partition + "' }");
        assertTrue(refusals.size() >= 2, refusals.toString());
        assertEquals("sync.schema_not_ready", refusals.get(0).get("code"));
        assertEquals("checkpoint_pending", ((Map<?, ?>) refusals.get(0).get("details")).get("reason"));
    }

    /**
     * A declaration no running build carries holds every pod's readiness down until it is abandoned: abandoning
     * removes it (the gate and readiness return, rounds are served), a second abandon is 404
     * {@code checkpoint_not_found}, an activated checkpoint cannot be abandoned (409 {@code checkpoint_activated}),
     * and a body without the schema version is 400 with nothing removed.
     */
    @Test
    void anAbandonedCheckpointStopsHoldingTheGate() {
        String partition = "tenant-" + UUID.randomUUID();
        SyncTestClient c = client(partition);
        c.syncUntilIdle();
        readinessUntil(s -> s == 200);
        String stray = "{\"partition\":\"" + partition + "\",\"name\":\"stray\",\"schemaVersion\":1}";
        admin("/declare", stray).then().statusCode(200).body("state", equalTo("declared"));
        readinessUntil(s -> s == 503);

        admin("/abandon", "{\"partition\":\"" + partition + "\",\"name\":\"stray\"}")
                .then()
                .statusCode(400)
                .body("code", equalTo("sync.invalid_request"));
        readinessUntil(s -> s == 503); // nothing removed
        admin("/abandon", stray)
                .then()
                .statusCode(200)
                .body("abandoned", equalTo(true))
                .body("name", equalTo("stray"))
                .body("state", equalTo("declared"));
        readinessUntil(s -> s == 200);
        c.syncUntilIdle();
        admin("/abandon", stray)
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"))
                .body("details.reason", equalTo("sync.storage.checkpoint_not_found"));

        String kept = "{\"partition\":\"" + partition + "\",\"name\":\"kept\",\"schemaVersion\":1}";
        admin("/declare", kept).then().statusCode(200);
        long epoch = admin("/claim", kept).jsonPath().getLong("ownerEpoch");
        admin(
                        "/activate",
                        "{\"partition\":\"" + partition + "\",\"name\":\"kept\",\"ownerEpoch\":" + epoch
                                + ",\"watermark\":0,\"sourceTables\":[\"notes\"]}")
                .then()
                .statusCode(200)
                .body("result", equalTo("activated"));
        admin("/abandon", kept)
                .then()
                .statusCode(409)
                .body("details.reason", equalTo("sync.storage.checkpoint_activated"));
        readinessUntil(s -> s == 200);
    }

    @Test
    void adminApiRequiresTheCredential() {
        given().contentType("application/json")
                .body("{}")
                .post("/admin/checkpoints/declare")
                .then()
                .statusCode(401)
                .body("code", equalTo("sync.auth_required"));
        given().header("Authorization", "Bearer wrong")
                .get("/admin/checkpoints?partition=x")
                .then()
                .statusCode(401);
        given().header("Authorization", "Bearer " + TOKEN)
                .get("/admin/checkpoints?partition=none")
                .then()
                .statusCode(200)
                .body("size()", equalTo(0));
        admin("/claim", "{\"partition\":\"none\",\"name\":\"missing\",\"schemaVersion\":1}")
                .then()
                .statusCode(404);
        admin("/declare", "{\"partition\":\"none\"}")
                .then()
                .statusCode(400)
                .body("code", equalTo("sync.invalid_request"));
        // Liveness never depends on the gate.
        given().get("/q/health/live").then().statusCode(200);
        given().get("/q/health/started").then().statusCode(200).body(containsString("schema-migration"));
    }
}
