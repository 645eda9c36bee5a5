package dev.syncular.server.conformance;

import static io.restassured.RestAssured.given;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

/** Off by default: without {@code syncular.conformance.enabled=true} every host route is 404. */
@QuarkusTest
class ConformanceDisabledTest {
    @Test
    void routesAreAbsent() {
        given().get("/__conformance/capabilities").then().statusCode(404);
        given().contentType("application/json")
                .body("{}")
                .post("/__conformance/instances")
                .then()
                .statusCode(404);
    }
}
