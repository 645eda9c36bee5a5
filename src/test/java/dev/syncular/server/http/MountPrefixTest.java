package dev.syncular.server.http;

import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code syncular.mount} moves the protocol routes (build-time, via quarkus.rest.path) and leaves /q alone. */
@QuarkusTest
@TestProfile(MountPrefixTest.Mounted.class)
class MountPrefixTest {

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
        // Outside the JAX-RS application path: Vert.x's plain 404.
        Ssp2.raw()
                .contentType(Ssp2.CT)
                .body(new byte[] {1})
                .post("/sync")
                .then()
                .statusCode(404);
    }

    @Test
    void healthStaysPut() {
        Ssp2.raw().get("/q/health/live").then().statusCode(200);
    }
}
