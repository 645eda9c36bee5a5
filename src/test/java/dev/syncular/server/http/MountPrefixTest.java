package dev.syncular.server.http;

import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.RealtimeSocket;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.net.URI;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * {@code syncular.mount} moves every protocol route under the mount (§1.1), read at start-up ({@link MountRoute}):
 * the REST routes and the realtime socket answer under it, the same paths outside it are 404 (§10.1 JSON), and
 * {@code /q} stays where it is. The packaged app, built without a mount, takes one at start-up: {@code
 * config.PackagedAppIT#theMountIsChosenAtStartUp}.
 */
@QuarkusTest
@OwnApp
@TestProfile(MountPrefixTest.Mounted.class)
class MountPrefixTest {

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    public static class Mounted implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("syncular.mount", "/api/sync/");
        }
    }

    @Test
    void routesMoveUnderTheMount() {
        // Reaching authentication (401) proves the route matched; content type is checked first (415).
        Ssp2.raw()
                .contentType(Ssp2.CT)
                .body(new byte[] {1})
                .post("/api/sync/sync")
                .then()
                .statusCode(401)
                .body("code", equalTo("sync.auth_required"));
        Ssp2.raw().get("/api/sync/segments/sha256:00").then().statusCode(401);
        Ssp2.raw()
                .get("/api/sync/blobs/sha256:" + "0".repeat(64))
                .then()
                .statusCode(401)
                .body("code", equalTo("sync.auth_required"));
    }

    @Test
    void theSamePathsOutsideTheMountDoNotExist() {
        Ssp2.raw()
                .contentType(Ssp2.CT)
                .body(new byte[] {1})
                .post("/sync")
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"));
        Ssp2.raw().get("/segments/sha256:00").then().statusCode(404).body("code", equalTo("sync.not_found"));
        Ssp2.raw().get("/api/syncx/sync").then().statusCode(404).body("code", equalTo("sync.not_found"));
        // a dot segment does not climb out of the mount and back in
        Ssp2.raw().get("/api/sync/../sync").then().statusCode(404);
    }

    @Test
    void theRealtimeSocketOpensUnderTheMountOnly() throws Exception {
        Map<String, String> headers = Map.of("x-actor-id", "alice", "x-syncular-partition", "mount");
        RealtimeSocket s = RealtimeSocket.connect(
                URI.create("ws://localhost:" + port + "/api/sync/realtime?clientId=c-" + UUID.randomUUID()), headers);
        s.nextEvent("hello");
        s.ws.abort();
        assertThrows(
                CompletionException.class,
                () -> RealtimeSocket.connect(
                        URI.create("ws://localhost:" + port + "/realtime?clientId=c-" + UUID.randomUUID()), headers));
    }

    @Test
    void healthStaysPut() {
        Ssp2.raw().get("/q/health/live").then().statusCode(200);
    }
}
