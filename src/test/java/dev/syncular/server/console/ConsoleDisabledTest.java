package dev.syncular.server.console;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

/**
 * Without {@code syncular.admin.token} there is no admin API and no console: every console path is 404
 * {@code sync.not_found} (§10.1 JSON), the sign-in form, the assets and the event stream included.
 */
@QuarkusTest
class ConsoleDisabledTest {

    @Test
    void everyConsolePathIsNotFoundWithoutTheAdminToken() {
        for (String path : new String[] {
            "/console",
            "/console/sign-in",
            "/console/overview",
            "/console/partitions",
            "/console/tenants",
            "/console/assets/console.js",
            "/console/events/stream"
        }) {
            given().redirects().follow(false).get(path).then().statusCode(404).body("code", equalTo("sync.not_found"));
        }
        given().contentType("application/x-www-form-urlencoded")
                .body("token=anything")
                .post("/console/sign-in")
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"));
    }
}
