package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.storage.AuthLease;
import dev.syncular.server.storage.AuthLeaseStore;
import dev.syncular.server.testsupport.ScratchSchemas;
import dev.syncular.server.testsupport.TestPostgres;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The PostgreSQL auth lease store (§7.3) on two pools — two pods of one deployment. Issuance and refresh are one
 * statement that decides in SQL whether the handle slides (§7.3.3) or is replaced: after a revocation (§7.3.4), for
 * another actor, or in another log epoch (§2.1); a revocation racing refreshes on the other pod is never undone; a
 * record whose seals do not verify reads as absent and is replaced by the next issuance.
 */
class PostgresAuthLeaseStoreTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final byte[] KEY = "lease-store-test-key-0123456789abcdef".getBytes(StandardCharsets.UTF_8);
    private static final Map<String, List<String>> SCOPES = Map.of("project_id", List.of("p1"));
    private static Vertx vertx;
    private static Pool podA;
    private static Pool podB;
    private static String schema;
    private static AuthLeaseStore a;
    private static AuthLeaseStore b;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        podA = TestPostgres.pool(vertx, 4);
        podB = TestPostgres.pool(vertx, 4);
        schema = "sync_leases_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        PostgresSyncStorage storage = new PostgresSyncStorage(podA, schema, PostgresSyncStorage.Settings.DEFAULTS);
        storage.ensureSchema(ScratchSchemas.ONE_TABLE).await().atMost(WAIT);
        a = storage.authLeases(KEY);
        b = new PostgresSyncStorage(podB, schema, PostgresSyncStorage.Settings.DEFAULTS).authLeases(KEY);
    }

    @AfterAll
    static void stop() {
        podA.query("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE")
                .execute()
                .await()
                .atMost(WAIT);
        podA.close().await().atMost(WAIT);
        podB.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }

    private static AuthLease issue(
            AuthLeaseStore store, String partition, String client, String actor, long now, String epoch) {
        return store.issue(partition, client, actor, SCOPES, now, 1_000, epoch)
                .await()
                .atMost(WAIT);
    }

    @Test
    void aRefreshSlidesTheHandleUntilARevocationAnActorOrAnEpochReplacesIt() {
        String p = "p-" + UUID.randomUUID();
        AuthLease first = issue(a, p, "c1", "alice", 10, "e1");
        assertEquals(1_010, first.expiresAtMs());
        assertEquals("e1", first.logEpoch());
        AuthLease slid = issue(b, p, "c1", "alice", 20, "e1");
        assertEquals(first.leaseId(), slid.leaseId(), "§7.3.3: the same handle, slid");
        assertEquals(1_020, slid.expiresAtMs());
        assertEquals(slid, a.read(p, "c1").await().atMost(WAIT));

        assertTrue(a.revoke(p, first.leaseId(), 30).await().atMost(WAIT));
        assertTrue(b.read(p, "c1").await().atMost(WAIT).revoked());
        AuthLease afterRevoke = issue(b, p, "c1", "alice", 40, "e1");
        assertNotEquals(first.leaseId(), afterRevoke.leaseId(), "§7.3.4: a revoked handle never resurrects");
        assertFalse(afterRevoke.revoked());

        AuthLease otherEpoch = issue(a, p, "c1", "alice", 50, "e2");
        assertNotEquals(afterRevoke.leaseId(), otherEpoch.leaseId(), "§2.1: a new epoch, a new handle");
        assertEquals("e2", otherEpoch.logEpoch());
        AuthLease otherActor = issue(a, p, "c1", "bob", 60, "e2");
        assertNotEquals(otherEpoch.leaseId(), otherActor.leaseId());
        assertEquals("bob", otherActor.actorId());
        assertFalse(a.revoke(p, "lease_unknown", 70).await().atMost(WAIT));
    }

    @Test
    void aTamperedOrPreEpochRecordReadsAsAbsentAndTheNextIssuanceReplacesIt() {
        String p = "p-" + UUID.randomUUID();
        AuthLease held = issue(a, p, "c1", "alice", 10, "e1");
        String t = "\"" + schema + "\".sync_auth_leases";
        // the scopes widened at rest: the body seal no longer verifies
        podA.preparedQuery("UPDATE " + t + " SET allowed_scopes = '{\"project_id\":[\"*\"]}' WHERE partition_id = $1")
                .execute(Tuple.of(p))
                .await()
                .atMost(WAIT);
        assertNull(a.read(p, "c1").await().atMost(WAIT));
        AuthLease refreshed = issue(a, p, "c1", "alice", 20, "e1");
        assertEquals(held.leaseId(), refreshed.leaseId(), "the handle itself verified, so it slides");
        assertEquals(SCOPES, refreshed.allowedScopes());
        // the handle forged at rest (its revocation undone by hand): the handle seal no longer verifies
        assertTrue(a.revoke(p, held.leaseId(), 30).await().atMost(WAIT));
        podA.preparedQuery("UPDATE " + t + " SET revoked_at_ms = NULL WHERE partition_id = $1")
                .execute(Tuple.of(p))
                .await()
                .atMost(WAIT);
        assertNull(a.read(p, "c1").await().atMost(WAIT), "an undone revocation is no lease");
        AuthLease replaced = issue(b, p, "c1", "alice", 40, "e1");
        assertNotEquals(held.leaseId(), replaced.leaseId());
        assertEquals(replaced, a.read(p, "c1").await().atMost(WAIT));
        // a record from before epochs and handle seals were recorded
        podA.preparedQuery("UPDATE " + t + " SET log_epoch = NULL, id_seal = NULL WHERE partition_id = $1")
                .execute(Tuple.of(p))
                .await()
                .atMost(WAIT);
        assertNull(a.read(p, "c1").await().atMost(WAIT));
        AuthLease stamped = issue(a, p, "c1", "alice", 50, "e1");
        assertNotEquals(replaced.leaseId(), stamped.leaseId());
        assertNotNull(a.read(p, "c1").await().atMost(WAIT));
    }

    /**
     * A revocation on one pod races refreshes on the other, many times over: whenever the revocation reported
     * success, the revoked handle is never found live afterwards — each refresh either ran before it (and the
     * revocation applied to the slid record) or after it (and minted a fresh handle).
     */
    @Test
    void aRefreshNeverRevivesALeaseAnotherPodRevoked() {
        String p = "p-" + UUID.randomUUID();
        for (int i = 0; i < 40; i++) {
            String client = "c" + i;
            AuthLease held = issue(a, p, client, "alice", 10, "e1");
            List<?> raced = Uni.combine()
                    .all()
                    .unis(
                            b.issue(p, client, "alice", SCOPES, 20, 1_000, "e1"),
                            a.revoke(p, held.leaseId(), 20),
                            b.issue(p, client, "alice", SCOPES, 21, 1_000, "e1"))
                    .with(l -> (List<?>) l)
                    .await()
                    .atMost(WAIT);
            assertEquals(Boolean.TRUE, raced.get(1), "the handle existed when revoked");
            AuthLease now = a.read(p, client).await().atMost(WAIT);
            assertNotNull(now);
            assertTrue(
                    !now.leaseId().equals(held.leaseId()) || now.revoked(),
                    "round " + i + ": the revoked handle " + held.leaseId() + " is live again");
            AuthLease next = issue(a, p, client, "alice", 30, "e1");
            assertTrue(
                    !next.leaseId().equals(held.leaseId()), "round " + i + ": a later refresh slid the revoked handle");
        }
    }
}
