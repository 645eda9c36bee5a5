package dev.syncular.server.http;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.LogCapture;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.QuickstartAdminProfile;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.PullHeader;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * The admin API under {@code <mount>/admin} through real HTTP against real PostgreSQL: every route with a
 * token, every route refused without one or with a wrong one (§10.1 JSON), the audit line of each call (no
 * token in it, the request id on it), and the OpenAPI document at {@code /q/openapi}. The app
 * ({@link QuickstartAdminProfile}) runs in its own PostgreSQL schema with a retention policy that lets a pruning pass
 * remove commits at once.
 */
@QuarkusTest
@OwnApp
@TestProfile(QuickstartAdminProfile.class)
class AdminApiTest {
    static final String TOKEN = QuickstartAdminProfile.ADMIN_TOKEN;

    @Inject
    SchemaWindow window;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    /** A request carrying {@link #TOKEN}. */
    static RequestSpecification admin() {
        return given().header("Authorization", "Bearer " + TOKEN);
    }

    private SyncTestClient client(String partition, String actor, String list) {
        return new SyncTestClient(
                        window.current(),
                        new HttpTransport("http://localhost:" + port, partition),
                        actor,
                        actor + "-" + UUID.randomUUID())
                .subscribe("todos", "todos", Map.of("list_id", List.of(list)));
    }

    private static Map<String, Object> todo(String id, String list, String title) {
        return Map.of("id", id, "list_id", list, "title", title, "done", false, "position", 1L, "updated_at_ms", 0L);
    }

    /**
     * A partition where alice (list l1) pushed t1, t2 and t3 (then updated t1), a conflicting and a rejected
     * commit, and bootstrapped by reference (a published segment); bob registered list l2 only.
     */
    private record Scene(String partition, SyncTestClient alice, SyncTestClient bob) {}

    private Scene scene() {
        String partition = "admin-" + UUID.randomUUID();
        SyncTestClient alice = client(partition, "alice", "l1");
        alice.accept = PullHeader.ACCEPT_EXTERNAL_ROWS; // referenced rows segments: the segment store holds one
        alice.sync();
        alice.upsert("todos", todo("t1", "l1", "one"), null);
        alice.upsert("todos", todo("t2", "l1", "two"), null);
        alice.upsert("todos", todo("t3", "l1", "three"), null);
        alice.sync();
        long v1 = alice.table("todos").get("t1").version();
        alice.upsert("todos", Map.of("id", "t1", "list_id", "l1", "title", "one!"), v1);
        alice.upsert("todos", Map.of("id", "t1", "list_id", "l1", "title", "one?"), v1);
        alice.upsert("todos", todo("t9", "l1", "ghost"), 5L);
        alice.sync();
        SyncTestClient bob = client(partition, "bob", "l2");
        bob.sync();
        bob.sync();
        return new Scene(partition, alice, bob);
    }

    @Test
    void partitionsListedPagedAndDescribed() {
        Scene s = scene();
        String second = s.partition() + "-b";
        client(second, "carol", "l1").sync();

        JsonPath page = admin().get("/admin/partitions?after=" + s.partition() + "&limit=1")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        assertEquals(1, page.getList("$").size());
        assertEquals(second, page.getString("[0].partition"));

        List<Map<String, Object>> all = admin().get("/admin/partitions?limit=1000")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath()
                .getList("$");
        assertTrue(all.stream().anyMatch(p -> s.partition().equals(p.get("partition"))), all.toString());

        admin().get("/admin/partitions/" + s.partition())
                .then()
                .statusCode(200)
                .body("partition", equalTo(s.partition()))
                .body("logEpoch", equalTo(s.alice().state.logEpoch))
                .body("maxCommitSeq", equalTo(4))
                .body("horizonSeq", equalTo(0))
                .body("rowCounts.todos", equalTo(3));

        admin().get("/admin/partitions/none-" + UUID.randomUUID())
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"));
        admin().get("/admin/partitions?limit=0").then().statusCode(400).body("code", equalTo("sync.invalid_request"));
        admin().get("/admin/partitions?limit=abc").then().statusCode(400).body("code", equalTo("sync.invalid_request"));
    }

    @Test
    void clientsOfAPartitionWithCursorSubscriptionsAndWireVersion() {
        Scene s = scene();
        JsonPath clients = admin().get("/admin/partitions/" + s.partition() + "/clients")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        assertEquals(2, clients.getList("$").size());
        Map<String, Object> alice = clients.getMap("find { it.clientId == '" + s.alice().clientId + "' }");
        assertEquals("alice", alice.get("actorId"));
        // the stored cursor may trail the client's by the rounds of the last few seconds (sync.ClientRecords)
        int cursor = (int) alice.get("cursor");
        assertTrue(cursor >= 3 && cursor <= s.alice().subscriptions.get("todos").cursor, alice.toString());
        assertEquals(3, alice.get("wireVersion"));
        assertNotNull(alice.get("lastSeenAtMs"));
        assertEquals(
                "todos",
                clients.getString("find { it.clientId == '" + s.alice().clientId + "' }.subscriptions[0].table"));
        assertEquals(
                List.of("l2"),
                clients.getList("find { it.clientId == '" + s.bob().clientId + "' }.subscriptions[0].scopes.list_id"));
        admin().get("/admin/partitions/none-" + UUID.randomUUID() + "/clients")
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"));
    }

    @Test
    void aRowWithItsVersionScopesAndTheClientsWhoseSubscriptionsCoverIt() {
        Scene s = scene();
        JsonPath row = admin().get("/admin/partitions/" + s.partition() + "/tables/todos/rows/t1")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        assertEquals("t1", row.getString("rowId"));
        assertEquals("one!", row.getString("values.title"));
        assertEquals(false, row.getBoolean("values.done"));
        assertEquals(2, row.getInt("serverVersion"));
        assertEquals(2, row.getInt("columnVersions.title"));
        assertEquals(1, row.getInt("columnVersions.done"));
        assertEquals(Map.of("list_id", "l1"), row.getMap("scopes"));
        assertEquals(1, row.getList("matchingClients").size(), row.prettify());
        assertEquals(s.alice().clientId, row.getString("matchingClients[0].clientId"));
        assertEquals(List.of("todos"), row.getList("matchingClients[0].subscriptionIds"));

        admin().get("/admin/partitions/" + s.partition() + "/tables/todos/rows/t9")
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"));
        admin().get("/admin/partitions/" + s.partition() + "/tables/nope/rows/t1")
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"));
    }

    @Test
    void theEventTailHoldsRejectionsAndConflictsNewestFirst() {
        Scene s = scene();
        JsonPath events = admin().get("/admin/events?limit=50")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        List<Map<String, Object>> mine = events.getList("findAll { it.partition == '" + s.partition() + "' }");
        assertEquals(2, mine.size(), mine.toString());
        // alice's round pushed the conflict before the rejection: newest first
        assertEquals("rejection", mine.get(0).get("kind"));
        assertEquals("sync.row_missing", mine.get(0).get("code"));
        assertEquals(s.alice().clientId, ((Map<?, ?>) mine.get(0).get("details")).get("clientId"));
        assertEquals("conflict", mine.get(1).get("kind"));
        assertEquals("sync.version_conflict", mine.get(1).get("code"));
        assertTrue((int) mine.get(0).get("seq") > (int) mine.get(1).get("seq"));

        assertEquals(
                1,
                admin().get("/admin/events?limit=1")
                        .then()
                        .statusCode(200)
                        .extract()
                        .jsonPath()
                        .getList("$")
                        .size());
        admin().get("/admin/events?limit=-3").then().statusCode(400).body("code", equalTo("sync.invalid_request"));
    }

    @Test
    void pruneNowAdvancesTheHorizonAndIsCounted() {
        Scene s = scene();
        double before = scrape().value("syncular_pruning_commits_total", Map.of());
        JsonPath pass =
                admin().post("/admin/prune").then().statusCode(200).extract().jsonPath();
        long removed = pass.getLong("removedCommits");
        assertTrue(removed >= 3, pass.prettify()); // keep-newest-commits=1: this partition keeps only commit 4
        assertEquals(removed, Math.round(scrape().value("syncular_pruning_commits_total", Map.of()) - before));
        assertEquals(
                3,
                admin().get("/admin/partitions/" + s.partition())
                        .then()
                        .statusCode(200)
                        .extract()
                        .jsonPath()
                        .getInt("horizonSeq"));
        assertEquals(1, pass.getLong("horizonLagCommits"));
        List<Map<String, Object>> prunes = admin().get("/admin/events")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath()
                .getList("findAll { it.kind == 'prune' }");
        assertFalse(prunes.isEmpty());
        assertEquals((int) removed, ((Map<?, ?>) prunes.get(0).get("details")).get("removedCommits"));
    }

    @Test
    void segmentStoreStatistics() {
        scene();
        JsonPath stats =
                admin().get("/admin/segments").then().statusCode(200).extract().jsonPath();
        assertEquals("postgres", stats.getString("store"));
        assertTrue(stats.getLong("segments") >= 1, stats.prettify());
        assertTrue(stats.getLong("bytes") > 0, stats.prettify());
        assertTrue(stats.getLong("publications") >= stats.getLong("segments"), stats.prettify());
        assertTrue(stats.getLong("livePublications") >= 1, stats.prettify());
    }

    @Test
    void everyRouteRefusesAMissingOrWrongTokenAndEveryCallIsAudited() {
        List<String[]> routes = List.of(
                new String[] {"GET", "/admin/partitions"},
                new String[] {"GET", "/admin/partitions/p1"},
                new String[] {"GET", "/admin/partitions/p1/clients"},
                new String[] {"GET", "/admin/partitions/p1/tables/todos/rows/t1"},
                new String[] {"POST", "/admin/prune"},
                new String[] {"GET", "/admin/segments"},
                new String[] {"GET", "/admin/events"},
                new String[] {"GET", "/admin/checkpoints?partition=p1"},
                new String[] {"POST", "/admin/schema/plan"});
        try (LogCapture audit = LogCapture.of(AdminAccess.AUDIT_CATEGORY, Level.INFO, RequestIds.MDC_KEY)) {
            for (String[] r : routes) {
                for (RequestSpecification refused : List.of(
                        given(),
                        given().header("Authorization", "Bearer wrong"),
                        given().header("Authorization", TOKEN))) {
                    refused.request(r[0], r[1])
                            .then()
                            .statusCode(401)
                            .contentType("application/json")
                            .body("code", equalTo("sync.auth_required"));
                }
            }
            assertEquals(routes.size() * 3, audit.lines.size(), audit.lines.toString());
            assertTrue(audit.lines.stream().allMatch(l -> l.message().contains("status=401 code=sync.auth_required")));

            Response ok = admin().header(RequestIds.HEADER, "audit-" + UUID.randomUUID())
                    .get("/admin/segments");
            ok.then().statusCode(200);
            LogCapture.Line last = audit.lines.get(audit.lines.size() - 1);
            assertEquals("admin GET /admin/segments status=200 code=-", last.message());
            assertEquals(ok.header(RequestIds.HEADER), last.mdc());
            assertTrue(audit.lines.stream()
                    .noneMatch(l -> l.message().contains(TOKEN) || l.message().contains("wrong")));
        }
    }

    @Test
    void theOpenApiDocumentDescribesTheAdminRoutes() {
        given().port(PrometheusScrape.managementTestPort())
                .get("/q/openapi?format=json")
                .then()
                .statusCode(200)
                .body(containsString("\"/admin/partitions/{partition}/tables/{table}/rows/{rowId}\""))
                .body(containsString("\"/admin/prune\""))
                .body(containsString("\"/admin/events\""))
                .body(containsString("\"/admin/checkpoints/declare\""))
                .body(containsString("\"/admin/reactions\""))
                .body(containsString("\"/admin/reactions/{id}/retry\""))
                .body(containsString("\"/admin/schema/plan\""))
                .body(containsString("\"adminToken\""))
                // the conformance host is off by default and refused in prod: none of its routes is served API
                .body(not(containsString("__conformance")));
    }

    private static PrometheusScrape scrape() {
        return PrometheusScrape.scrape();
    }
}
