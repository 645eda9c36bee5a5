package dev.syncular.server.console;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.testsupport.OperationsAppProfile;
import dev.syncular.server.testsupport.OwnApp;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/**
 * The console's remote operations page (REMOTE.md) against real calls: the fixture document's registered
 * {@code listTodos} answered once and refused once over {@code POST /operations}, then seen in headless Chromium
 * with its call and error counts and the refusal's code.
 */
@QuarkusTest
@OwnApp
@TestProfile(OperationsAppProfile.class)
class ConsoleOperationsTest {
    static final String TOKEN = OperationsAppProfile.ADMIN_TOKEN;
    static final String LIST_TODOS =
            "sha256:e9b6c4c011d5a7a670e72d9bf8f1929457bd6b8efce11c44e6edf95212fddaf8/listTodos";
    static final String CT = "application/vnd.syncular.operations.v1+json";

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private static Response query(String partition, String params) {
        return given().contentType(CT)
                .header("x-actor-id", "reader")
                .header("x-syncular-partition", partition)
                .body("{\"t\":\"object\",\"v\":[[\"revision\",{\"t\":\"number\",\"v\":1}],"
                        + "[\"kind\",{\"t\":\"string\",\"v\":\"query\"}],"
                        + "[\"clientId\",{\"t\":\"string\",\"v\":\"ops-client\"}],"
                        + "[\"operationId\",{\"t\":\"string\",\"v\":\"" + LIST_TODOS + "\"}],"
                        + "[\"params\"," + params + "]]}")
                .post("/operations");
    }

    @Test
    void theRegisteredQueriesWithTheirCallsAndErrors() {
        String partition = "console-ops-" + UUID.randomUUID();
        Response ok = query(partition, "{\"t\":\"object\",\"v\":[[\"listId\",{\"t\":\"string\",\"v\":\"l1\"}]]}");
        assertEquals(200, ok.statusCode(), ok.asString());
        // a parameter of the wrong type: answered with an operation error
        Response refused = query(partition, "{\"t\":\"object\",\"v\":[[\"listId\",{\"t\":\"number\",\"v\":7}]]}");
        assertEquals(200, refused.statusCode(), refused.asString());

        try (ConsoleBrowser b = new ConsoleBrowser("http://localhost:" + port + "/console")) {
            b.signIn(TOKEN);
            b.open("/operations");
            WebElement row = b.until(d -> d.findElement(By.cssSelector("tr[data-operation='" + LIST_TODOS + "']")));
            String text = row.getText();
            assertTrue(text.contains("query"), text);
            java.util.List<WebElement> cells = row.findElements(By.tagName("td"));
            assertTrue(Long.parseLong(cells.get(3).getText()) >= 2, text);
            assertTrue(Long.parseLong(cells.get(4).getText()) >= 1, text);
            assertTrue(cells.get(5).getText().contains("operation."), text);
            b.screenshot("operations");
        }
    }
}
