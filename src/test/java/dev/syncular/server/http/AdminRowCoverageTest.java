package dev.syncular.server.http;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.testsupport.GrantTable;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.SyncTestClient;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * The admin row view ({@code GET /admin/partitions/{p}/tables/{t}/rows/{id}}) through real HTTP rounds and real
 * PostgreSQL: coverage comes from the effective scopes (§3.2 rule 4: requested ∩ allowed) each client's last pulling
 * round recorded, not from the requested scopes alone, and every client that does not cover the row says which
 * scope did not match. Scope resolution is host-controlled (the §3.2 {@code resolveScopes} seam).
 */
@QuarkusTest
@OwnApp
@TestProfile(AdminRowCoverageTest.Grants.class)
class AdminRowCoverageTest {
    static final String TOKEN = "admin-" + UUID.randomUUID();

    public static class Grants implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "syncular.admin.token",
                    TOKEN,
                    "syncular.storage.pg-schema",
                    "sync_cover_"
                            + UUID.randomUUID().toString().replace("-", "").substring(0, 10));
        }

        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(GrantTable.class);
        }
    }

    @Inject
    SchemaWindow window;

    @Inject
    GrantTable grants;

    @Inject
    SyncStorage storage;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private SyncTestClient client(String partition, String actor, List<String> lists) {
        return new SyncTestClient(
                        window.current(),
                        new HttpTransport("http://localhost:" + port, partition),
                        actor,
                        actor + "-" + UUID.randomUUID())
                .subscribe("todos", "todos", Map.of("list_id", lists));
    }

    @Test
    void coverageFollowsTheAllowedScopesAndNamesTheScopeThatDidNotMatch() {
        String partition = "cover-" + UUID.randomUUID();
        grants.grant(partition, "alice", Map.of("list_id", List.of("l1")));
        grants.grant(partition, "bob", Map.of("list_id", List.of("l2")));
        grants.grant(partition, "carol", Map.of("list_id", List.of("*")));
        // dave has no grant: the resolver fails, his pulls are revoked (§3.2)
        SyncTestClient alice = client(partition, "alice", List.of("l1"));
        alice.sync();
        String push = alice.upsert(
                "todos",
                Map.of("id", "t1", "list_id", "l1", "title", "one", "done", false, "position", 1L, "updated_at_ms", 0L),
                null);
        alice.sync();
        assertTrue(SyncTestClient.applied(alice.result(push)), alice.results.toString());
        // bob requests exactly what alice requests, but is not allowed l1: his subscription is revoked
        SyncTestClient bob = client(partition, "bob", List.of("l1"));
        bob.sync(); // the first round only learns the log epoch (§2.1)
        bob.sync();
        SyncTestClient carol = client(partition, "carol", List.of("l2"));
        carol.sync(); // the first round only learns the log epoch (§2.1)
        carol.sync();
        SyncTestClient dave = client(partition, "dave", List.of("l1"));
        dave.sync(); // the first round only learns the log epoch (§2.1)
        dave.sync();
        // a record written before effective scopes were recorded: requested scopes only
        String legacy = "erin-" + UUID.randomUUID();
        storage.upsertClient(new ClientRecord(
                        partition,
                        legacy,
                        "erin",
                        -1,
                        System.currentTimeMillis(),
                        "[{\"id\":\"todos\",\"schemaVersion\":1,\"scopes\":{\"list_id\":[\"l1\"]},\"table\":\"todos\"}]",
                        3,
                        1))
                .await()
                .atMost(Duration.ofSeconds(10));

        JsonPath row = given().header("Authorization", "Bearer " + TOKEN)
                .get("/admin/partitions/" + partition + "/tables/todos/rows/t1")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();

        List<Map<String, Object>> matching = row.getList("matchingClients");
        assertEquals(2, matching.size(), row.prettify());
        Map<String, Object> a = row.getMap("matchingClients.find { it.clientId == '" + alice.clientId + "' }");
        assertEquals("effective", a.get("basis"), row.prettify());
        assertEquals(List.of("todos"), a.get("subscriptionIds"));
        Map<String, Object> e = row.getMap("matchingClients.find { it.clientId == '" + legacy + "' }");
        assertEquals("requested", e.get("basis"), row.prettify());

        assertEquals(3, row.getList("notCoveringClients").size(), row.prettify());
        String b = "notCoveringClients.find { it.clientId == '" + bob.clientId + "' }";
        assertEquals("bob", row.getString(b + ".actorId"));
        assertEquals("effective", row.getString(b + ".basis"));
        assertEquals("scope_not_allowed", row.getString(b + ".subscriptions[0].reason"));
        assertEquals("list_id", row.getString(b + ".subscriptions[0].scopeKey"));
        assertEquals("l1", row.getString(b + ".subscriptions[0].rowValue"));
        assertEquals(List.of(), row.getList(b + ".subscriptions[0].values"));

        String c = "notCoveringClients.find { it.clientId == '" + carol.clientId + "' }";
        assertEquals("scope_not_requested", row.getString(c + ".subscriptions[0].reason"));
        assertEquals("list_id", row.getString(c + ".subscriptions[0].scopeKey"));
        assertEquals(List.of("l2"), row.getList(c + ".subscriptions[0].values"));

        String d = "notCoveringClients.find { it.clientId == '" + dave.clientId + "' }";
        assertEquals("scopes_unresolved", row.getString(d + ".subscriptions[0].reason"));

        // bob is allowed l1 from his next round on: the record follows, and so does the row view
        grants.grant(partition, "bob", Map.of("list_id", List.of("l1", "l2")));
        bob.subscribe("todos", "todos", Map.of("list_id", List.of("l1"))); // the revocation dropped it (§3.3)
        bob.syncUntilIdle();
        assertEquals(1, bob.table("todos").size(), "bob's subscription is active again and bootstrapped t1");
        JsonPath after = given().header("Authorization", "Bearer " + TOKEN)
                .get("/admin/partitions/" + partition + "/tables/todos/rows/t1")
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
        assertEquals(
                "effective",
                after.getString("matchingClients.find { it.clientId == '" + bob.clientId + "' }.basis"),
                after.prettify());
        assertEquals(2, after.getList("notCoveringClients").size(), after.prettify());
    }
}
