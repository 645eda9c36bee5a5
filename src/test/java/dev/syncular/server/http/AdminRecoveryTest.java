package dev.syncular.server.http;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.AdminRecoveryProfile;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Lease;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.RespHeader;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * The production app's recovery routes through real HTTP, real PostgreSQL and a real realtime socket: the §2.1
 * backup-restore log-epoch rotation ({@code POST <mount>/admin/partitions/{p}/rotate-epoch}: clients reset on their
 * next request, realtime sessions get {@code reset-required}) and §7.3.4 lease revocation
 * ({@code POST <mount>/admin/partitions/{p}/leases/{leaseId}/revoke}) with leases enabled by configuration
 * ({@link AdminRecoveryProfile}).
 */
@QuarkusTest
@OwnApp
@TestProfile(AdminRecoveryProfile.class)
class AdminRecoveryTest {
    @Inject
    SchemaWindow window;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    /** A request carrying the app's admin token. */
    static RequestSpecification admin() {
        return given().header("Authorization", "Bearer " + AdminRecoveryProfile.ADMIN_TOKEN);
    }

    private SyncTestClient client(String partition, String actor) {
        return new SyncTestClient(
                        window.current(),
                        new HttpTransport("http://localhost:" + port, partition),
                        actor,
                        actor + "-" + UUID.randomUUID())
                .subscribe("todos", "todos", Map.of("list_id", List.of("l1")));
    }

    private static Map<String, Object> todo(String id) {
        return Map.of("id", id, "list_id", "l1", "title", id, "done", false, "position", 1L, "updated_at_ms", 0L);
    }

    private static Lease lease(Message m) {
        for (Frame f : m.frames()) {
            if (f instanceof Lease l) {
                return l;
            }
        }
        return null;
    }

    @Test
    void leaseIssuedByConfigurationAndRevokedByTheOperator() {
        String partition = "lease-" + UUID.randomUUID();
        SyncTestClient alice = client(partition, "alice");
        alice.sync();
        long before = System.currentTimeMillis();
        Lease lease = lease(alice.sync());
        assertNotNull(lease, "syncular.leases.enabled: an authorized round carries a LEASE (§7.3.3)");
        assertTrue(lease.expiresAtMs() >= before + 3_600_000L
                && lease.expiresAtMs() <= System.currentTimeMillis() + 3_600_000L);
        assertEquals(lease.leaseId(), lease(alice.sync()).leaseId(), "refresh slides the same handle");

        String route = "/admin/partitions/" + partition + "/leases/" + lease.leaseId() + "/revoke";
        given().post(route).then().statusCode(401).body("code", equalTo("sync.auth_required"));
        admin().post(route)
                .then()
                .statusCode(200)
                .body("revoked", equalTo(true))
                .body("leaseId", equalTo(lease.leaseId()));
        admin().post(route).then().statusCode(200); // idempotent
        admin().post("/admin/partitions/" + partition + "/leases/lease_nope/revoke")
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"));
        // the live resolver is reachable: the next round re-issues under a fresh id (§7.3.4)
        Lease fresh = lease(alice.sync());
        assertNotEquals(lease.leaseId(), fresh.leaseId(), "a revoked handle never resurrects");
    }

    @Test
    void epochRotationResetsClientsAndRealtimeSessions() throws Exception {
        String partition = "restore-" + UUID.randomUUID();
        SyncTestClient alice = client(partition, "alice");
        alice.upsert("todos", todo("t1"), null);
        alice.syncUntilIdle();
        String epoch = alice.state.logEpoch;
        RealtimeSocket socket =
                RealtimeSocket.connect("http://localhost:" + port + "/", partition, "alice", alice.clientId);
        socket.nextEvent("hello");
        admin().get("/admin/partitions/" + partition + "/clients")
                .then()
                .statusCode(200)
                .body("size()", equalTo(1));

        String route = "/admin/partitions/" + partition + "/rotate-epoch";
        given().post(route).then().statusCode(401);
        JsonPath rotated = admin().post(route).then().statusCode(200).extract().jsonPath();
        assertEquals(epoch, rotated.getString("previousLogEpoch"));
        assertNotEquals(epoch, rotated.getString("logEpoch"));
        assertEquals(1, rotated.getLong("maxCommitSeq"));
        // every session of the partition, on every pod (PostgreSQL NOTIFY), is told to reset (§8.3)
        assertEquals(
                "reset-required",
                socket.nextEvent("sync").get("data").get("reason").asText());
        // client cursor records are gone (§2.1)
        admin().get("/admin/partitions/" + partition + "/clients")
                .then()
                .statusCode(200)
                .body("size()", equalTo(0));

        // the old epoch gets the reset response with the new epoch and no other work
        alice.upsert("todos", todo("t2"), null);
        Message reset = alice.sync();
        RespHeader h = (RespHeader) reset.frames().get(0);
        assertTrue(h.resetRequired());
        assertEquals(rotated.getString("logEpoch"), h.logEpoch());
        assertEquals(1, reset.frames().size());
        // then the client re-bootstraps and replays its outbox in the new continuity
        alice.syncUntilIdle();
        assertEquals(List.of("t1", "t2"), List.copyOf(alice.table("todos").keySet()));
        admin().post("/admin/partitions/no-such-" + UUID.randomUUID() + "/rotate-epoch")
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"));
    }
}
