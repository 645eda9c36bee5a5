package dev.syncular.server.console;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.http.AdminAccess;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.ConsoleSession;
import dev.syncular.server.storage.ConsoleSessionStorage;
import dev.syncular.server.testsupport.AdminRecoveryProfile;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.LogCapture;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.Readiness;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestWebhook.Answer;
import dev.syncular.server.testsupport.WebhookResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebElement;

/**
 * The operator console in a real headless Chromium against the running app and real PostgreSQL: sign in with the
 * admin token; a partition created by a real sync round shows up; a client's lag bar grows after another client's
 * push; the row inspector names the covering client and why another is not; a checkpoint declared through the
 * console (after its warning) takes readiness down and activating it brings readiness back; a dead-lettered
 * reaction is retried against a real webhook; the live event stream shows a conflict as it happens. Plain HTTP
 * checks the refusals: no session, a forged or missing CSRF token, a wrong token, and the cookie, header and
 * audit rules. Every page is saved as a screenshot under {@code target/console-screenshots/}. The app
 * ({@link AdminRecoveryProfile}) is shared with the admin recovery and throttle tests; its reaction rule and webhook
 * are this class's.
 */
@QuarkusTest
@OwnApp
@TestProfile(AdminRecoveryProfile.class)
class ConsoleTest {
    static final String TOKEN = AdminRecoveryProfile.ADMIN_TOKEN;
    static final String SCHEMA = AdminRecoveryProfile.PG_SCHEMA;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Inject
    SchemaWindow window;

    @Inject
    Pool pool;

    @Inject
    ConsoleSessionStorage sessions;

    @AfterEach
    void resetWebhook() {
        WebhookResource.hook.reset();
    }

    private String base() {
        return "http://localhost:" + port + "/console";
    }

    private SyncTestClient client(String partition, String actor, String list) {
        SyncTestClient c = new SyncTestClient(
                        window.current(),
                        new HttpTransport("http://localhost:" + port, partition),
                        actor,
                        actor + "-" + UUID.randomUUID())
                .subscribe("todos", "todos", Map.of("list_id", List.of(list)));
        c.syncUntilIdle();
        return c;
    }

    private static Map<String, Object> todo(String id, String list, String title, boolean done) {
        return Map.of("id", id, "list_id", list, "title", title, "done", done, "position", 1L, "updated_at_ms", 0L);
    }

    @Test
    void signInShowsThePartitionOfARealRoundAndTheLagBarMovesAfterAPush() {
        String partition = "console-lag-" + UUID.randomUUID();
        SyncTestClient alice = client(partition, "alice", "l1");
        SyncTestClient bob = client(partition, "bob", "l1");
        alice.upsert("todos", todo("t1", "l1", "one", false), null);
        alice.syncUntilIdle();
        bob.syncUntilIdle();

        try (ConsoleBrowser b = new ConsoleBrowser(base())) {
            b.signIn(TOKEN);
            assertEquals("Overview", b.find("main h1").getText());
            assertEquals(
                    5, b.driver.findElements(By.cssSelector("figure.chart")).size());

            b.open("/partitions");
            b.find("#q").sendKeys(partition);
            b.find("#search").click();
            // the search's page, not the unfiltered one it replaces (whose row would go stale under the test)
            String rowText = b.until(d -> d.getCurrentUrl().contains("q=")
                    ? d.findElement(By.cssSelector("tr[data-partition='" + partition + "']"))
                            .getText()
                    : null);
            assertTrue(rowText.contains(partition), rowText);
            b.screenshot("partitions");

            b.until(d -> {
                d.findElement(By.cssSelector("tr[data-partition='" + partition + "'] a"))
                        .click();
                return true;
            });
            b.until(d -> d.findElement(By.id("partition-id")).getText().equals(partition));
            assertEquals("1", b.text("#max-commit-seq"));
            String bobBar = "tr[data-client='" + bob.clientId + "'] svg.lagbar";
            // the stored cursor (§4.5) may trail the client's by a few seconds (sync.ClientRecords): read it
            long lag = Long.parseLong(b.attr(bobBar, "data-lag"));
            assertTrue(lag <= 1, () -> "bob's lag: " + clients(partition));

            // alice pushes two more commits; bob does not pull: his bar grows by two commits
            alice.upsert("todos", todo("t2", "l1", "two", false), null);
            alice.syncUntilIdle();
            alice.upsert("todos", todo("t3", "l1", "three", false), null);
            alice.syncUntilIdle();
            String grown = String.valueOf(lag + 2);
            b.reloadUntil(
                    d -> grown.equals(d.findElement(By.cssSelector(bobBar)).getAttribute("data-lag")));
            assertEquals("3", b.text("#max-commit-seq"));
            String percent = String.valueOf(Math.round(100.0 * (lag + 2) / 3));
            assertEquals(percent, b.attr(bobBar, "data-lag-percent"));
            assertEquals(
                    percent,
                    b.attr(bobBar + " rect.fill", "width"),
                    "the bar's width is the lag's share of the partition's commits");
            b.screenshot("partition");

            // the epoch rotation is behind a confirmation
            b.find("#rotate-epoch").click();
            b.until(d -> d.findElement(By.id("confirmation")));
            b.screenshot("rotate-epoch-confirmation");
            String before = epoch(partition);
            b.find("#confirm").click();
            b.until(d -> d.findElement(By.id("notice")).getText().startsWith("log epoch rotated"));
            assertFalse(before.equals(epoch(partition)), "the epoch rotated");

            b.open("/operations");
            b.until(d -> d.findElement(By.id("operations")));
            b.screenshot("operations-none-registered");

            // the overview's series: this pod's own meters, sampled every few seconds; the rounds above show up
            b.open("/overview");
            b.reloadUntil(d -> {
                WebElement rounds = d.findElement(By.id("chart-rounds"));
                return Integer.parseInt(rounds.getAttribute("data-samples")) >= 2
                        && Double.parseDouble(rounds.getAttribute("data-max")) > 0;
            });
            assertFalse(b.find("#chart-rounds polyline").getAttribute("points").isEmpty());
            assertEquals("UP", b.attr("#serve-gate", "data-status"));
            b.screenshot("overview");
        }
    }

    private static String clients(String partition) {
        return given().header("Authorization", "Bearer " + TOKEN)
                .get("/admin/partitions/" + partition + "/clients")
                .asString();
    }

    private String epoch(String partition) {
        return given().header("Authorization", "Bearer " + TOKEN)
                .get("/admin/partitions/" + partition)
                .then()
                .statusCode(200)
                .extract()
                .path("logEpoch");
    }

    @Test
    void theRowInspectorShowsTheCoveringClientAndWhyNotTheOthers() {
        String partition = "console-row-" + UUID.randomUUID();
        SyncTestClient alice = client(partition, "alice", "l1");
        SyncTestClient carol = client(partition, "carol", "l2");
        alice.upsert("todos", todo("t1", "l1", "inspected", false), null);
        alice.syncUntilIdle();
        carol.syncUntilIdle();

        try (ConsoleBrowser b = new ConsoleBrowser(base())) {
            b.signIn(TOKEN);
            b.open("/rows");
            b.find("#partition").sendKeys(partition);
            b.find("#rowId").sendKeys("t1");
            b.find("#inspect").click();
            WebElement covering =
                    b.until(d -> d.findElement(By.cssSelector("#covering tr[data-client='" + alice.clientId + "']")));
            assertTrue(covering.getText().contains("alice"), covering.getText());
            WebElement not = b.find("#not-covering tr[data-client='" + carol.clientId + "']");
            assertTrue(not.getText().contains("scope_not_requested"), not.getText());
            assertTrue(not.getText().contains("list_id = l1"), not.getText());
            assertTrue(b.find("#columns").getText().contains("inspected"));
            assertTrue(
                    b.find("#touching").getText().contains(alice.clientId),
                    b.find("#touching").getText());
            b.screenshot("row-inspector");
        }
    }

    @Test
    void aCheckpointDeclaredThroughTheConsoleTakesReadinessDownUntilItIsActivated() {
        String partition = "console-cp-" + UUID.randomUUID();
        client(partition, "alice", "l1");
        Readiness.await(200, Duration.ofSeconds(30));

        try (ConsoleBrowser b = new ConsoleBrowser(base())) {
            b.signIn(TOKEN);
            b.open("/checkpoints");
            b.find("#declare-partition").sendKeys(partition);
            b.find("#declare-name").sendKeys("fill");
            b.find("#declare").click();
            WebElement warning = b.until(d -> d.findElement(By.id("confirm-warning")));
            assertTrue(warning.getText().contains("No running build declares this checkpoint"), warning.getText());
            b.screenshot("checkpoint-declare-warning");
            b.find("#confirm").click();
            b.until(d -> d.findElement(By.id("notice")).getText().startsWith("declared fill"));
            Readiness.await(503, Duration.ofSeconds(30));

            WebElement pending = b.find("#pending tr[data-checkpoint='" + partition + "/fill']");
            assertTrue(pending.getText().contains("declared"), pending.getText());
            b.screenshot("checkpoints");
            b.open("/overview");
            b.until(d -> "DOWN".equals(d.findElement(By.id("serve-gate")).getAttribute("data-status")));
            assertTrue(b.text("#pending").contains(partition));

            b.open("/checkpoints?partition=" + partition);
            b.find("#pending tr[data-checkpoint='" + partition + "/fill'] button.activate")
                    .click();
            b.until(d -> d.findElement(By.id("notice")).getText().equals("activation of fill: activated"));
            assertEquals(
                    "activated",
                    b.find("#of-partition tr[data-checkpoint='" + partition + "/fill']")
                            .getAttribute("data-state"));
            Readiness.await(200, Duration.ofSeconds(30));
            b.open("/overview");
            b.until(d -> "UP".equals(d.findElement(By.id("serve-gate")).getAttribute("data-status")));
        }
    }

    /** A stray declaration (no build carries it) abandoned from the console: readiness comes back, nothing left. */
    @Test
    void aStrayCheckpointAbandonedThroughTheConsoleGivesReadinessBack() {
        String partition = "console-abandon-" + UUID.randomUUID();
        client(partition, "alice", "l1");
        Readiness.await(200, Duration.ofSeconds(30));
        given().header("Authorization", "Bearer " + TOKEN)
                .contentType("application/json")
                .body("{\"partition\":\"" + partition + "\",\"name\":\"stray\",\"schemaVersion\":1}")
                .post("/admin/checkpoints/declare")
                .then()
                .statusCode(200);
        Readiness.await(503, Duration.ofSeconds(30));

        try (ConsoleBrowser b = new ConsoleBrowser(base())) {
            b.signIn(TOKEN);
            b.open("/checkpoints");
            b.find("#pending tr[data-checkpoint='" + partition + "/stray'] button.abandon")
                    .click();
            WebElement title = b.until(d -> d.findElement(By.id("confirm")));
            assertTrue(b.text("#confirmation h2").contains("Abandon checkpoint stray"), b.text("#confirmation h2"));
            b.screenshot("checkpoint-abandon-confirmation");
            title.click();
            b.until(d -> d.findElement(By.id("notice")).getText().equals("abandoned stray"));
            Readiness.await(200, Duration.ofSeconds(30));
            b.open("/checkpoints?partition=" + partition);
            assertTrue(
                    b.driver
                            .findElements(By.cssSelector("#of-partition tr[data-checkpoint='" + partition + "/stray']"))
                            .isEmpty(),
                    "the abandoned checkpoint is gone");
        }
    }

    @Test
    void aDeadLetteredReactionIsRetriedAgainstARealWebhook() {
        String partition = "console-reaction-" + UUID.randomUUID();
        WebhookResource.hook.answer(r -> r.body().contains(partition) ? new Answer(500, "", null) : Answer.ok("{}"));
        SyncTestClient alice = client(partition, "alice", "l1");
        alice.upsert("todos", todo("t1", "l1", "finish", true), null);
        alice.syncUntilIdle();

        try (ConsoleBrowser b = new ConsoleBrowser(base())) {
            b.signIn(TOKEN);
            String dead = "/reactions?status=dead-letter&partition=" + partition;
            b.open(dead);
            WebElement row =
                    b.reloadUntil(d -> d.findElement(By.cssSelector("#reactions tr[data-status='dead-letter']")));
            assertTrue(row.getText().contains("reaction.http_error"), row.getText());
            String id = row.getAttribute("data-reaction");
            b.screenshot("reactions");

            WebhookResource.hook.answer(r -> Answer.ok("{}"));
            int before = WebhookResource.hook.received.size();
            row.findElement(By.cssSelector("button.retry")).click();
            b.until(d -> d.findElement(By.id("notice")).getText().equals("reaction " + id + " is pending again"));
            b.open("/reactions?status=completed&partition=" + partition);
            b.reloadUntil(d -> d.findElement(By.cssSelector("#reactions tr[data-reaction='" + id + "']")));
            assertTrue(WebhookResource.hook.received.size() > before, "the webhook was called again");
        }
    }

    @Test
    void liveEventsStreamAConflictAsItHappens() {
        String partition = "console-events-" + UUID.randomUUID();
        SyncTestClient alice = client(partition, "alice", "l1");
        alice.upsert("todos", todo("t1", "l1", "one", false), null);
        alice.syncUntilIdle();

        try (ConsoleBrowser b = new ConsoleBrowser(base())) {
            b.signIn(TOKEN);
            b.open("/events?partition=" + partition);
            b.until(d -> d.findElement(By.id("stream-state")).getText().equals("streaming"));
            alice.upsert("todos", todo("t1", "l1", "stale", false), 0L); // stale base version: a conflict (§6.2)
            alice.syncUntilIdle();
            WebElement e = b.until(d -> d.findElement(By.cssSelector("#events tr[data-kind='conflict']")));
            assertEquals(partition, e.getAttribute("data-partition"));
            b.screenshot("live-events");
        }
    }

    /**
     * Issue 48: a schema change pasted into the Schema plan page (the quickstart schema with a nullable column added)
     * is laid out as the route plans it — allowed, its statement listed — and the Stalest clients page renders this
     * pod's view; both saved as screenshots.
     */
    @Test
    void theSchemaPlanPageLaysOutAnAdditiveChangeAndTheStalestPageRenders() throws Exception {
        client("console-plan-" + UUID.randomUUID(), "alice", "l1");
        ObjectNode doc;
        try (var in = ConsoleTest.class.getResourceAsStream("/schema/quickstart.syncular.ir.json")) {
            doc = (ObjectNode) new ObjectMapper().readTree(in);
        }
        int next = doc.get("schemaVersion").asInt() + 1;
        doc.put("schemaVersion", next);
        ((ArrayNode) doc.get("schemaVersions"))
                .addObject()
                .put("version", next)
                .putArray("migrations")
                .add("0002_todo_notes");
        ((ArrayNode) doc.get("tables").get(0).get("columns"))
                .addObject()
                .put("name", "notes")
                .put("type", "string")
                .put("nullable", true);

        try (ConsoleBrowser b = new ConsoleBrowser(base())) {
            b.signIn(TOKEN);
            b.open("/schema-plan");
            ((JavascriptExecutor) b.driver)
                    .executeScript("arguments[0].value = arguments[1];", b.find("#document"), doc.toString());
            b.find("#plan").click();
            b.until(d -> d.findElement(By.id("plan-result")));
            assertEquals("true", b.attr("#plan-result", "data-allowed"), b.text("#plan-result"));
            assertTrue(b.text("#ddl").contains("notes"), b.text("#ddl"));
            b.screenshot("schema-plan");

            b.open("/stalest");
            b.until(d -> d.findElement(By.id("stalest-clients")));
            b.screenshot("stalest-clients");
        }
    }

    /**
     * Issue 45: a session is bound to the admin token it was opened under. One opened while the deployment ran with
     * another token (the one just rotated away) is unknown here: its pages go to the sign-in form, its actions and
     * its event stream are refused; the same session id under this pod's token is live.
     */
    @Test
    void aSessionOpenedUnderAnotherAdminTokenIsOver() {
        long now = System.currentTimeMillis();
        String id = "rotated-session-" + UUID.randomUUID();
        String oldToken = "the-admin-token-before-rotation-" + UUID.randomUUID();
        sessions.createConsoleSession(
                        new ConsoleSession(ConsoleAccess.hash(oldToken, id), "admin-token", "csrf", now, now + 60_000),
                        now)
                .await()
                .atMost(Duration.ofSeconds(10));
        given().cookie(ConsoleAccess.COOKIE, id)
                .redirects()
                .follow(false)
                .get("/console/overview")
                .then()
                .statusCode(303)
                .header("Location", org.hamcrest.Matchers.endsWith("/console/sign-in"));
        given().cookie(ConsoleAccess.COOKIE, id)
                .contentType("application/x-www-form-urlencoded")
                .body("csrf=csrf")
                .post("/console/prune")
                .then()
                .statusCode(401);
        given().cookie(ConsoleAccess.COOKIE, id)
                .get("/console/events/stream")
                .then()
                .statusCode(401);
        sessions.createConsoleSession(
                        new ConsoleSession(ConsoleAccess.hash(TOKEN, id), "admin-token", "csrf", now, now + 60_000),
                        now)
                .await()
                .atMost(Duration.ofSeconds(10));
        given().cookie(ConsoleAccess.COOKIE, id).get("/console/overview").then().statusCode(200);
    }

    /** Issue 45: an open event stream ends once its session is signed out (looked up again every 2 s). */
    @Test
    void anEventStreamEndsWhenItsSessionIsSignedOut() throws Exception {
        long now = System.currentTimeMillis();
        String id = "streaming-session-" + UUID.randomUUID();
        sessions.createConsoleSession(
                        new ConsoleSession(ConsoleAccess.hash(TOKEN, id), "admin-token", "csrf", now, now + 600_000),
                        now)
                .await()
                .atMost(Duration.ofSeconds(10));
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        java.util.concurrent.CompletableFuture<java.net.http.HttpResponse<String>> stream;
        try (LogCapture audit = LogCapture.of(AdminAccess.AUDIT_CATEGORY, Level.INFO, "requestId")) {
            stream = http.sendAsync(
                    java.net.http.HttpRequest.newBuilder(
                                    java.net.URI.create("http://localhost:" + port + "/console/events/stream"))
                            .header("Cookie", ConsoleAccess.COOKIE + "=" + id)
                            .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            // the gate let the stream in (its audit line) before the session ends
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (audit.lines.stream()
                    .noneMatch(l -> l.message().contains("GET /console/events/stream by=admin-token status=200"))) {
                assertTrue(System.nanoTime() < deadline, "the stream was let in: " + audit.lines);
                assertTrue(!stream.isDone(), "the stream is open");
                Thread.onSpinWait();
            }
        }
        given().cookie(ConsoleAccess.COOKIE, id)
                .contentType("application/x-www-form-urlencoded")
                .body("csrf=csrf")
                .redirects()
                .follow(false)
                .post("/console/sign-out")
                .then()
                .statusCode(303);
        // without the re-check the stream ran until the session's expiry, ten minutes away
        assertEquals(200, stream.get(30, java.util.concurrent.TimeUnit.SECONDS).statusCode());
    }

    @Test
    void aSessionStoredByAnyPodIsLiveUntilItExpires() {
        // what another pod's sign-in leaves in the shared table: this pod honours it
        long now = System.currentTimeMillis();
        String other = "another-pods-session-" + UUID.randomUUID();
        sessions.createConsoleSession(
                        new ConsoleSession(
                                ConsoleAccess.hash(TOKEN, other),
                                "admin-token",
                                "csrf-" + UUID.randomUUID(),
                                now,
                                now + 60_000),
                        now)
                .await()
                .atMost(Duration.ofSeconds(10));
        given().cookie(ConsoleAccess.COOKIE, other)
                .get("/console/overview")
                .then()
                .statusCode(200);
        // an expired one is not read, wherever it was created
        String expired = "expired-session-" + UUID.randomUUID();
        sessions.createConsoleSession(
                        new ConsoleSession(
                                ConsoleAccess.hash(TOKEN, expired), "admin-token", "csrf", now - 60_000, now - 1),
                        now - 60_000)
                .await()
                .atMost(Duration.ofSeconds(10));
        given().cookie(ConsoleAccess.COOKIE, expired)
                .redirects()
                .follow(false)
                .get("/console/overview")
                .then()
                .statusCode(303);
        given().cookie(ConsoleAccess.COOKIE, expired)
                .contentType("application/x-www-form-urlencoded")
                .body("csrf=csrf")
                .post("/console/prune")
                .then()
                .statusCode(401);
    }

    /** Signs in over plain HTTP; the item is the session cookie's value. */
    private static String session() {
        Response r = given().redirects()
                .follow(false)
                .contentType("application/x-www-form-urlencoded")
                .body("token=" + TOKEN)
                .post("/console/sign-in");
        assertEquals(303, r.statusCode(), r.asString());
        return r.getCookie(ConsoleAccess.COOKIE);
    }

    /** The session's CSRF token, as a page carries it. */
    private static String csrf(String session) {
        String html = given().cookie(ConsoleAccess.COOKIE, session)
                .get("/console/overview")
                .then()
                .statusCode(200)
                .extract()
                .asString();
        int at = html.indexOf("data-csrf=\"") + 11;
        return html.substring(at, html.indexOf('"', at));
    }

    @Test
    void refusedWithoutASessionOrWithAForgedCsrfToken() throws Exception {
        try (LogCapture audit = LogCapture.of(AdminAccess.AUDIT_CATEGORY, Level.INFO, "requestId")) {
            // no session: pages go to the sign-in form, actions and the event stream are refused
            given().redirects()
                    .follow(false)
                    .get("/console/partitions")
                    .then()
                    .statusCode(303)
                    .header("Location", org.hamcrest.Matchers.endsWith("/console/sign-in"));
            given().contentType("application/x-www-form-urlencoded")
                    .body("csrf=x")
                    .post("/console/prune")
                    .then()
                    .statusCode(401)
                    .body("code", org.hamcrest.Matchers.equalTo("sync.auth_required"));
            given().get("/console/events/stream").then().statusCode(401);
            given().cookie(ConsoleAccess.COOKIE, "forged-session")
                    .redirects()
                    .follow(false)
                    .get("/console/overview")
                    .then()
                    .statusCode(303);

            // a wrong token does not sign in
            given().contentType("application/x-www-form-urlencoded")
                    .body("token=wrong")
                    .post("/console/sign-in")
                    .then()
                    .statusCode(401)
                    .header("Set-Cookie", org.hamcrest.Matchers.nullValue());

            // the session cookie: HttpOnly, SameSite=Strict, on the console's path, expiring
            Response signIn = given().redirects()
                    .follow(false)
                    .contentType("application/x-www-form-urlencoded")
                    .body("token=" + TOKEN)
                    .post("/console/sign-in");
            String setCookie = signIn.header("Set-Cookie");
            assertTrue(setCookie.contains("HttpOnly"), setCookie);
            assertTrue(setCookie.contains("SameSite=Strict"), setCookie);
            assertTrue(setCookie.contains("Path=/console"), setCookie);
            assertTrue(setCookie.contains("Max-Age=1800"), setCookie);
            assertTrue(setCookie.contains("Secure"), setCookie);
            String session = signIn.getCookie(ConsoleAccess.COOKIE);
            assertNotNull(session);

            // stored hashed, in PostgreSQL (every pod reads the same table), never as the id itself
            long stored = pool.preparedQuery("SELECT count(*) FROM \"" + SCHEMA
                            + "\".sync_console_sessions WHERE id_hash = $1 AND principal = 'admin-token'")
                    .execute(Tuple.of(io.vertx.core.buffer.Buffer.buffer(ConsoleAccess.hash(TOKEN, session))))
                    .await()
                    .atMost(Duration.ofSeconds(10))
                    .iterator()
                    .next()
                    .getLong(0);
            assertEquals(1, stored);

            // a forged or missing CSRF token: 403 before the action runs
            for (String body : List.of("csrf=forged", "", "csrf=")) {
                given().cookie(ConsoleAccess.COOKIE, session)
                        .contentType("application/x-www-form-urlencoded")
                        .body(body)
                        .post("/console/prune")
                        .then()
                        .statusCode(403)
                        .body("code", org.hamcrest.Matchers.equalTo("sync.forbidden"))
                        .body("details.reason", org.hamcrest.Matchers.equalTo("csrf_token_invalid"));
            }
            given().cookie(ConsoleAccess.COOKIE, session)
                    .header(ConsoleAccess.CSRF_HEADER, "forged")
                    .contentType("application/x-www-form-urlencoded")
                    .post("/console/reactions/retry")
                    .then()
                    .statusCode(403);
            // the session's own token passes (header or field)
            String csrf = csrf(session);
            given().cookie(ConsoleAccess.COOKIE, session)
                    .redirects()
                    .follow(false)
                    .contentType("application/x-www-form-urlencoded")
                    .body("csrf=" + csrf)
                    .post("/console/prune")
                    .then()
                    .statusCode(303);

            // every console response carries the strict CSP
            Response page = given().cookie(ConsoleAccess.COOKIE, session).get("/console/partitions");
            assertEquals(ConsoleHeaders.CSP, page.header("Content-Security-Policy"));
            assertTrue(page.header("Content-Security-Policy").contains("frame-ancestors 'none'"));
            assertEquals("no-store", page.header("Cache-Control"));
            assertEquals(ConsoleHeaders.CSP, given().get("/console/sign-in").header("Content-Security-Policy"));
            assertEquals(
                    ConsoleHeaders.CSP,
                    given().get("/console/assets/console.js").header("Content-Security-Policy"));
            given().get("/console/assets/secret.txt").then().statusCode(404);

            // sign-out ends the session everywhere: its row is gone
            given().cookie(ConsoleAccess.COOKIE, session)
                    .redirects()
                    .follow(false)
                    .contentType("application/x-www-form-urlencoded")
                    .body("csrf=" + csrf)
                    .post("/console/sign-out")
                    .then()
                    .statusCode(303);
            given().cookie(ConsoleAccess.COOKIE, session)
                    .redirects()
                    .follow(false)
                    .get("/console/overview")
                    .then()
                    .statusCode(303);

            LogCapture.Line prune = audit.await(
                    l -> l.message().startsWith("console POST /console/prune by=admin-token status=303"),
                    Duration.ofSeconds(10));
            assertNotNull(prune);
            assertTrue(audit.lines.stream()
                    .anyMatch(l -> l.message()
                            .equals("console POST /console/prune by=admin-token status=403" + " code=sync.forbidden")));
            assertTrue(audit.lines.stream()
                    .anyMatch(l -> l.message()
                            .equals("console POST /console/prune by=- status=401" + " code=sync.auth_required")));
            assertTrue(
                    audit.lines.stream()
                            .noneMatch(l -> l.message().contains(TOKEN)
                                    || l.message().contains(session)
                                    || l.message().contains(csrf)),
                    "no token, session id or CSRF token in the audit log");
        }
    }
}
