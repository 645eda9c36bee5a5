package dev.syncular.server.http;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.LogCapture;
import dev.syncular.server.testsupport.SyncTestClient;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * Request ids ({@link RequestIds}): every response carries {@code X-Request-Id} — the caller's when sane, else a
 * fresh one — and the log lines of a round carry the same id in the MDC, including one logged after the
 * round's PostgreSQL reads (a client id bound to another actor, §1.5, refused with
 * {@code sync.invalid_client_id}). Without {@code syncular.admin.token} the admin API does not exist (404).
 */
@QuarkusTest
class RequestIdTest {
    @Inject
    SchemaWindow window;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Test
    void aSaneIdIsEchoedAnInsaneOrMissingOneReplaced() {
        String mine = "req-" + UUID.randomUUID();
        given().header(RequestIds.HEADER, mine)
                .get("/q/health/live")
                .then()
                .statusCode(200)
                .header(RequestIds.HEADER, mine);
        String generated =
                given().get("/q/health/live").then().statusCode(200).extract().header(RequestIds.HEADER);
        assertTrue(generated.matches("[0-9a-f]{32}"), generated);
        String replaced = given().header(RequestIds.HEADER, "has spaces and \"quotes\"")
                .get("/q/health/live")
                .then()
                .statusCode(200)
                .extract()
                .header(RequestIds.HEADER);
        assertTrue(replaced.matches("[0-9a-f]{32}"), replaced);
        String tooLong = "x".repeat(129);
        assertNotEquals(
                tooLong,
                given().header(RequestIds.HEADER, tooLong).get("/q/health/live").header(RequestIds.HEADER));
        assertNotEquals(generated, given().get("/q/health/live").header(RequestIds.HEADER));
    }

    @Test
    void theLogLineOfAFailingRoundCarriesTheRequestId() {
        String partition = "reqid-" + UUID.randomUUID();
        String clientId = "shared-" + UUID.randomUUID();
        SyncTestClient alice = new SyncTestClient(
                        window.current(), new HttpTransport("http://localhost:" + port, partition), "alice", clientId)
                .subscribe("todos", "todos", Map.of("list_id", List.of("l1")));
        alice.sync();
        alice.sync(); // the client record binds the client id to alice
        SyncTestClient mallory = new SyncTestClient(window.current(), null, "mallory", clientId);
        mallory.state.logEpoch = alice.state.logEpoch;
        String id = "round-" + UUID.randomUUID();
        try (LogCapture log = LogCapture.of(ErrorMapper.class.getName(), Level.FINE, RequestIds.MDC_KEY)) {
            Response r = given().header("x-actor-id", "mallory")
                    .header("x-syncular-partition", partition)
                    .header(RequestIds.HEADER, id)
                    .contentType(HttpTransport.CONTENT_TYPE)
                    .body(mallory.buildRequest().encode())
                    .post("/sync");
            r.then().statusCode(400).header(RequestIds.HEADER, id).body("code", equalTo("sync.invalid_client_id"));
            List<LogCapture.Line> lines =
                    log.lines.stream().filter(l -> id.equals(l.mdc())).toList();
            assertEquals(1, lines.size(), log.lines.toString());
            assertEquals(
                    "request answered 400 sync.invalid_client_id", lines.get(0).message());
        }
    }

    @Test
    void withoutATokenTheAdminApiDoesNotExist() {
        given().header("Authorization", "Bearer anything")
                .get("/admin/partitions")
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"));
        given().post("/admin/prune").then().statusCode(404).body("code", equalTo("sync.not_found"));
    }
}
