package dev.syncular.server.conformance;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.NotesAppProfile;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Lease;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.RespHeader;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * The conformance capabilities {@code leases} (§7.3, Appendix B scenario 15), {@code backup-restore} (§2.1 restore
 * with log-epoch rotation, §8.3 {@code reset-required}) and {@code idempotency-fault} (§6.3
 * {@code sync.idempotency_cache_miss}) through the running conformance host, real PostgreSQL and real sockets.
 */
@QuarkusTest
@TestProfile(NotesAppProfile.class)
class ConformanceRecoveryTest {
    static final String NOTES = ConformanceHostTest.NOTES;
    static final long START = 1_000_000L;
    static final long TTL = 60_000L;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private String create(String partition, String extra) {
        return given().contentType("application/json")
                .body("{\"schema\":" + NOTES + ",\"partition\":\"" + partition + "\",\"nowMs\":" + START + extra + "}")
                .post("/__conformance/instances")
                .then()
                .statusCode(200)
                .extract()
                .path("id");
    }

    /** A fresh instance where alice is allowed project p1. */
    private String createForAlice(String partition, String extra) {
        String id = create(partition, extra);
        call(id, "setAllowedScopes", "[\"alice\",{\"project_id\":[\"p1\"]}]");
        return id;
    }

    private static JsonPath call(String id, String method, String args) {
        return given().contentType("application/json")
                .body("{\"args\":" + args + "}")
                .post("/__conformance/instances/" + id + "/call/" + method)
                .then()
                .statusCode(200)
                .extract()
                .jsonPath();
    }

    private SyncTestClient client(String id, String actor) {
        return new SyncTestClient(
                        SchemaLoader.parse(NOTES),
                        new HttpTransport("http://localhost:" + port + "/__conformance/instances/" + id, null),
                        actor,
                        actor + "-client")
                .subscribe("s", "notes", Map.of("project_id", List.of("p1")));
    }

    private static Map<String, Object> note(String id) {
        return Map.of("id", id, "project_id", "p1", "body", new byte[] {1});
    }

    /** The {@code LEASE} frame of a response: §7.3.2 at most one, right after {@code RESP_HEADER}; or null. */
    private static Lease lease(Message m) {
        Lease found = null;
        for (int i = 0; i < m.frames().size(); i++) {
            if (m.frames().get(i) instanceof Lease l) {
                assertEquals(1, i, "LEASE immediately follows RESP_HEADER (§7.3.2)");
                assertNull(found, "at most one LEASE per response");
                found = l;
            }
        }
        return found;
    }

    private static HttpFailure refused(SyncTestClient c, int status, String code) {
        HttpFailure f = assertThrows(HttpFailure.class, c::sync);
        assertEquals(status, f.status);
        assertTrue(f.body.contains("\"code\":\"" + code + "\""), f.body);
        return f;
    }

    private static List<String> serverRows(String id) {
        return call(id, "readRows", "[\"notes\"]").getList("result.rowId");
    }

    @Test
    void capabilitiesNameTheRecoveryFeatures() {
        List<String> caps = given().get("/__conformance/capabilities")
                .then()
                .statusCode(200)
                .extract()
                .path("capabilities");
        assertTrue(caps.containsAll(List.of("leases", "backup-restore", "idempotency-fault")), caps.toString());
    }

    /** An instance with leases ({@link #TTL}) where alice synced twice: the epoch, then a round that issued a lease. */
    private String leasedAlice(String partition, SyncTestClient[] out) {
        String id = createForAlice(partition, ",\"leases\":{\"ttlMs\":" + TTL + "}");
        SyncTestClient alice = client(id, "alice");
        alice.sync();
        assertNotNull(lease(alice.sync()));
        out[0] = alice;
        return id;
    }

    /**
     * Appendix B.15 (a): an authorized round carries a {@code LEASE} frame ({@code expiresAtMs} = issued + TTL), none on
     * the epoch-acquisition answer; a later authorized round slides the same {@code leaseId} and extends the window
     * (§7.3.2, §7.3.3).
     */
    @Test
    void B15a_leaseIssuedAndSlidOnAuthorizedRounds() {
        String id = createForAlice("leases-a", ",\"leases\":{\"ttlMs\":" + TTL + "}");
        SyncTestClient alice = client(id, "alice");
        alice.sync(); // §2.1 epoch acquisition: an early answer, no lease
        assertNull(lease(alice.lastResponse));
        Lease first = lease(alice.sync());
        assertNotNull(first, "an authorized round carries a LEASE frame");
        assertEquals(START + TTL, first.expiresAtMs());
        call(id, "advanceClock", "[10000]");
        Lease slid = lease(alice.sync());
        assertEquals(first.leaseId(), slid.leaseId(), "a refresh slides the same handle");
        assertEquals(START + 10_000 + TTL, slid.expiresAtMs());
        call(id, "close", "[]");
    }

    /**
     * Appendix B.15 (b): with the resolver in an outage (a signal, not a throw) an offline write applies under the
     * lease, bounded by its scopes, and the lease is not refreshed; past the TTL the round fails request-level with
     * {@code sync.auth_lease_required} (401), nothing applied or purged and the write still queued; an actor that
     * never held a lease gets the same; recovery to a live resolver drains the write and slides the same lease.
     */
    @Test
    void B15b_outageServedByTheLeaseThenExpired() {
        SyncTestClient[] c = new SyncTestClient[1];
        String id = leasedAlice("leases-b", c);
        SyncTestClient alice = c[0];
        Lease first = lease(alice.lastResponse);
        call(id, "setResolverOutage", "[true]");
        alice.upsert("notes", note("n1"), null);
        Message leased = alice.sync();
        assertNull(lease(leased), "a lease-authorized round does not refresh the lease");
        assertTrue(SyncTestClient.applied(alice.results.values().iterator().next()));
        assertEquals(List.of("n1"), serverRows(id));
        // the leased scopes still bound writes (§3.4): project p2 is not in the lease
        String denied = alice.upsert("notes", Map.of("id", "x", "project_id", "p2", "body", new byte[] {2}), null);
        alice.sync();
        assertEquals(CommitStatus.REJECTED, alice.result(denied).status());
        // past expiresAtMs (the virtual clock): the round fails request-level, nothing applied, nothing purged
        call(id, "advanceClock", "[" + TTL + "]");
        String queued = alice.upsert("notes", note("n2"), null);
        HttpFailure required = refused(alice, 401, "sync.auth_lease_required");
        assertTrue(required.body.contains("\"category\":\"auth-required\""), required.body);
        assertTrue(required.body.contains("\"retryable\":true"), required.body);
        assertEquals(List.of("n1"), serverRows(id));
        assertEquals(1, alice.outbox.size(), "the write stays queued");
        assertEquals(List.of("n1"), List.copyOf(alice.table("notes").keySet()), "no local data purged");
        // another actor never held a lease: required, too
        call(id, "setAllowedScopes", "[\"bob\",{\"project_id\":[\"p1\"]}]");
        SyncTestClient bob = client(id, "bob");
        bob.sync();
        refused(bob, 401, "sync.auth_lease_required");
        // recovery to a live resolver drains the write and slides the (unrevoked) lease again
        call(id, "setResolverOutage", "[false]");
        alice.syncUntilIdle();
        assertTrue(SyncTestClient.applied(alice.result(queued)));
        assertEquals(List.of("n1", "n2"), serverRows(id));
        assertEquals(first.leaseId(), lease(alice.lastResponse).leaseId());
        call(id, "close", "[]");
    }

    /**
     * Appendix B.15 (c): the host revokes the lease; a leased round fails with {@code sync.auth_lease_revoked} and the
     * synced rows survive (unlike a §3.3 scope revocation); recovery mints a fresh lease id — the revoked handle never
     * resurrects — which authorizes the next outage's rounds (§7.3.4). An unknown lease id is 404.
     */
    @Test
    void B15c_revocationStopsSyncingNotLocalData() {
        SyncTestClient[] c = new SyncTestClient[1];
        String id = leasedAlice("leases-c", c);
        SyncTestClient alice = c[0];
        alice.upsert("notes", note("n1"), null);
        alice.upsert("notes", note("n2"), null);
        alice.syncUntilIdle();
        Lease held = lease(alice.lastResponse);
        call(id, "revokeLease", "[\"" + held.leaseId() + "\"]");
        call(id, "setResolverOutage", "[true]");
        refused(alice, 401, "sync.auth_lease_revoked");
        assertEquals(List.of("n1", "n2"), List.copyOf(alice.table("notes").keySet()));
        call(id, "setResolverOutage", "[false]");
        Lease fresh = lease(alice.sync());
        assertNotEquals(held.leaseId(), fresh.leaseId(), "a revoked handle never resurrects");
        call(id, "setResolverOutage", "[true]");
        alice.upsert("notes", note("n3"), null);
        alice.sync(); // the fresh lease authorizes
        assertEquals(List.of("n1", "n2", "n3"), serverRows(id));
        given().contentType("application/json")
                .body("{\"args\":[\"lease_unknown\"]}")
                .post("/__conformance/instances/" + id + "/call/revokeLease")
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"));
        call(id, "close", "[]");
    }

    /**
     * Appendix B.15 (d): without {@code leases} no LEASE frame ever, and an outage is an ordinary resolver failure
     * (§7.3.3 zero-config).
     */
    @Test
    void B15d_featureOffEmitsNothing() {
        String id = createForAlice("no-leases", "");
        SyncTestClient alice = client(id, "alice");
        alice.upsert("notes", note("n1"), null);
        alice.syncUntilIdle();
        assertEquals(List.of("n1"), serverRows(id));
        for (Frame f : alice.sync().frames()) {
            assertTrue(!(f instanceof Lease), "no LEASE frame with the feature off");
        }
        call(id, "setResolverOutage", "[true]");
        alice.sync(); // no lease authorization: the subscription revokes as for any resolver failure (§3.2)
        assertEquals(0, alice.table("notes").size());
        given().contentType("application/json")
                .body("{\"args\":[\"x\"]}")
                .post("/__conformance/instances/" + id + "/call/revokeLease")
                .then()
                .statusCode(404);
        call(id, "close", "[]");
    }

    /** §2.1 backup restore: storage back to the capture, the epoch rotated, HTTP clients reset, sockets told. */
    @Test
    void restoreRotatesTheLogEpoch() throws Exception {
        String id = createForAlice("restore", "");
        SyncTestClient alice = client(id, "alice");
        alice.upsert("notes", note("n1"), null);
        alice.syncUntilIdle();
        String before = alice.state.logEpoch;
        call(id, "captureBackup", "[]");
        alice.upsert("notes", note("n2"), null);
        alice.syncUntilIdle();
        assertEquals(2, call(id, "getMaxCommitSeq", "[]").getLong("result"));

        RealtimeSocket socket = RealtimeSocket.connect(
                URI.create("ws://localhost:" + port + "/__conformance/instances/" + id
                        + "/realtime?actorId=alice&clientId=" + alice.clientId),
                Map.of());
        assertEquals("{\"$conformance\":\"connected\"}", socket.texts.poll(30, TimeUnit.SECONDS));
        socket.nextEvent("hello");

        call(id, "restoreBackup", "[]");
        JsonNode wake = socket.nextEvent("sync").get("data");
        assertEquals("reset-required", wake.get("reason").asText(), "§8.3: every session of the partition resets");
        assertEquals(1, call(id, "getMaxCommitSeq", "[]").getLong("result"));
        assertEquals(List.of("n1"), serverRows(id));

        // the next round presents the old epoch: the reset response with the new one, and no other work (§2.1)
        Message reset = alice.sync();
        RespHeader h = (RespHeader) reset.frames().get(0);
        assertTrue(h.resetRequired());
        assertNotEquals(before, h.logEpoch());
        assertEquals(1, reset.frames().size());
        alice.syncUntilIdle();
        assertEquals(List.of("n1"), List.copyOf(alice.table("notes").keySet()), "re-bootstrapped from the restore");
        // nothing to restore without a capture on a fresh instance
        String other = create("restore-none", "");
        given().contentType("application/json")
                .body("{\"args\":[]}")
                .post("/__conformance/instances/" + other + "/call/restoreBackup")
                .then()
                .statusCode(404)
                .body("code", equalTo("sync.not_found"));
        call(other, "close", "[]");
        call(id, "close", "[]");
    }

    /**
     * §2.1 with §7.3: a restore brings back the lease records of the backup's time, so a lease the host revoked
     * after the capture is unrevoked in the restored store. The epoch rotation that follows every restore retires
     * every lease issued before it: during an outage the revived lease authorizes nothing (401
     * {@code sync.auth_lease_required}, reason {@code log_epoch_rotated}; local data untouched, §7.3.5), and the
     * next live round issues a lease under a fresh id, never the revived handle, which then serves the outage.
     */
    @Test
    void aRestoreCannotReviveARevokedLease() {
        String id = createForAlice("restore-lease", ",\"leases\":{\"ttlMs\":" + TTL + "}");
        SyncTestClient alice = client(id, "alice");
        alice.upsert("notes", note("n1"), null);
        alice.syncUntilIdle();
        Lease held = lease(alice.sync());
        assertNotNull(held);
        call(id, "captureBackup", "[]");
        call(id, "revokeLease", "[\"" + held.leaseId() + "\"]");
        call(id, "setResolverOutage", "[true]");
        refused(alice, 401, "sync.auth_lease_revoked"); // revoked in the live store

        call(id, "restoreBackup", "[]"); // the revocation is lost with the restore; the epoch rotates
        Message reset = alice.sync(); // the old epoch: the reset answer, which needs no authorization (§2.1)
        assertTrue(((RespHeader) reset.frames().get(0)).resetRequired());
        HttpFailure refusal = refused(alice, 401, "sync.auth_lease_required");
        assertTrue(refusal.body.contains("\"reason\":\"log_epoch_rotated\""), refusal.body);
        String queued = alice.upsert("notes", note("n2"), null);
        refused(alice, 401, "sync.auth_lease_required");
        assertEquals(List.of("n1"), serverRows(id), "nothing applied on the revived lease");

        call(id, "setResolverOutage", "[false]");
        alice.syncUntilIdle();
        assertTrue(SyncTestClient.applied(alice.result(queued)));
        Lease fresh = lease(alice.lastResponse);
        assertNotNull(fresh);
        assertNotEquals(held.leaseId(), fresh.leaseId(), "a live round after the rotation never slides the old handle");
        call(id, "setResolverOutage", "[true]");
        alice.upsert("notes", note("n3"), null);
        alice.sync(); // the lease of the new epoch serves the outage
        assertEquals(List.of("n1", "n2", "n3"), serverRows(id));
        call(id, "close", "[]");
    }

    private RealtimeSocket socket(String id, String actor, String clientId) throws InterruptedException {
        RealtimeSocket socket = RealtimeSocket.connect(
                URI.create("ws://localhost:" + port + "/__conformance/instances/" + id + "/realtime?actorId=" + actor
                        + "&clientId=" + clientId),
                Map.of());
        assertEquals("{\"$conformance\":\"connected\"}", socket.texts.poll(30, TimeUnit.SECONDS));
        return socket;
    }

    /**
     * §7.3.3 for realtime (§8.1): a connection opened while the host signals an outage registers its subscriptions
     * from the client's valid lease, as a round authorizes from it, so a commit written meanwhile (itself
     * lease-authorized) arrives as a §8.2 delta. Without a valid lease (revoked) the registrations stay empty
     * and the connection is told to sync ({@code hello.requiresSync}).
     */
    @Test
    void realtimeRegistrationsDuringAnOutageComeFromTheLease() throws Exception {
        String id = createForAlice("rt-lease", ",\"leases\":{\"ttlMs\":" + TTL + "}");
        SyncTestClient reader = client(id, "alice");
        SyncTestClient writer = new SyncTestClient(
                        SchemaLoader.parse(NOTES),
                        new HttpTransport("http://localhost:" + port + "/__conformance/instances/" + id, null),
                        "alice",
                        "alice-writer")
                .subscribe("s", "notes", Map.of("project_id", List.of("p1")));
        reader.syncUntilIdle();
        writer.syncUntilIdle();
        Lease held = lease(reader.sync());
        assertNotNull(held, "a live round issued the reader's lease");
        assertNotNull(lease(writer.sync()));

        call(id, "setResolverOutage", "[true]");
        RealtimeSocket socket = socket(id, "alice", reader.clientId);
        JsonNode hello = socket.nextEvent("hello").get("data");
        assertFalse(hello.get("requiresSync").asBoolean(), "registered from the lease, at the head of the log");
        writer.upsert("notes", note("n1"), null);
        writer.sync(); // lease-authorized
        assertTrue(SyncTestClient.applied(writer.results.values().iterator().next()));
        CommitFrame commit = (CommitFrame) socket.nextDelta().frames().stream()
                .filter(f -> f instanceof CommitFrame)
                .findFirst()
                .orElseThrow();
        assertEquals("n1", commit.changes().get(0).rowId());
        socket.ws.sendClose(1000, "done").join();

        // a revoked lease registers nothing (§3.3: a failed authorization revokes): the socket is told to sync
        call(id, "revokeLease", "[\"" + held.leaseId() + "\"]");
        RealtimeSocket revoked = socket(id, "alice", reader.clientId);
        assertTrue(revoked.nextEvent("hello").get("data").get("requiresSync").asBoolean());
        revoked.ws.sendClose(1000, "done").join();
        call(id, "close", "[]");
    }

    /** §6.3: a failed idempotency lookup answers the retryable cache miss, applies nothing, persists nothing. */
    @Test
    void idempotencyLookupFault() {
        String id = createForAlice("idem", "");
        SyncTestClient alice = client(id, "alice");
        alice.syncUntilIdle();
        String commitId = alice.upsert("notes", note("n1"), null);
        PushCommit commit = alice.outbox.get(0);
        call(id, "failNextIdempotencyLookup", "[]");
        alice.sync();
        PushResult miss = alice.result(commitId);
        assertEquals(CommitStatus.REJECTED, miss.status());
        assertNull(miss.commitSeq());
        OpResult.Error error = (OpResult.Error) miss.results().get(0);
        assertEquals("sync.idempotency_cache_miss", error.code());
        assertTrue(error.retryable());
        assertEquals(0, call(id, "getMaxCommitSeq", "[]").getLong("result"), "nothing applied under the miss");
        // the identical retry applies: the miss was not persisted as the commit's outcome
        alice.outbox.add(commit);
        alice.sync();
        assertTrue(SyncTestClient.applied(alice.result(commitId)));
        assertEquals(1, call(id, "getMaxCommitSeq", "[]").getLong("result"));
        call(id, "close", "[]");
    }
}
