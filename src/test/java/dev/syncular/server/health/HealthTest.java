package dev.syncular.server.health;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;

import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

@QuarkusTest
class HealthTest {

    @Test
    void livenessIsUp() {
        given().when()
                .get("/q/health/live")
                .then()
                .statusCode(200)
                .body("status", equalTo("UP"))
                .body("checks.name", hasItem("syncular"));
    }

    @Test
    void overallHealthIsUp() {
        given().when()
                .get("/q/health")
                .then()
                .log()
                .ifValidationFails()
                .statusCode(200)
                .body("status", equalTo("UP"));
    }
}
