package dev.syncular.server.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.PushResultDetails;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The server's part of the Appendix B preamble scenario {@code conflict/retained-distinct-id-unique-insert} (§7.2,
 * §7.2.1) through the running app over HTTP: a distinct-primary-key race on a composite unique key
 * ({@code members(org_id, email)}, src/test/resources/schema/unique.json). The second row is refused with §10.2
 * {@code sync.constraint_violation} and §6.3.1 details naming the index and its columns, its whole commit rolled
 * back (§6.4), the rejection replayed unchanged (§2.3), and the winner reaches the loser by pull — the authorized
 * server row its client takes the §7.2 {@code uniqueConflicts} evidence from. NULL key parts and other partitions
 * never collide; an update onto a taken key is refused; a deleted row frees its key. Concurrent pushes of one key
 * in one partition: exactly one wins, the others are rejected, none is a 500 or {@code sync.internal_error}.
 */
@QuarkusTest
@OwnApp
@TestProfile(RetainedDistinctIdUniqueInsertTest.UniqueSchema.class)
class RetainedDistinctIdUniqueInsertTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();
    static final Path SCHEMA_FILE = Path.of("src/test/resources/schema/unique.json");
    static final CompiledSchema SCHEMA = load();

    private static CompiledSchema load() {
        try {
            return SchemaLoader.parse(Files.readString(SCHEMA_FILE));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The unique-index schema in its own storage schema; per-actor fairness limits off (the races are the point). */
    public static class UniqueSchema implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "syncular.schema.path",
                    SCHEMA_FILE.toAbsolutePath().toString(),
                    "syncular.storage.pg-schema",
                    "sync_uq_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10),
                    "syncular.fairness.max-rounds-per-actor",
                    "0",
                    "syncular.fairness.max-push-operations-per-actor",
                    "0");
        }
    }

    @Inject
    PostgresSyncStorage storage;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private static ExecutorService threads;

    @BeforeAll
    static void threads() {
        threads = Executors.newFixedThreadPool(16);
    }

    @AfterAll
    static void stopThreads() {
        threads.shutdownNow();
    }

    private static String newPartition() {
        return "p-" + UUID.randomUUID();
    }

    private HttpTransport transport(String partition) {
        return new HttpTransport("http://localhost:" + port, partition);
    }

    /** A client of {@code org} in {@code partition}; its first round learns the epoch, so pushes go out next. */
    private SyncTestClient client(String partition, String actor, String org) {
        SyncTestClient c = new SyncTestClient(SCHEMA, transport(partition), actor, actor + "-" + UUID.randomUUID())
                .subscribe("members-" + org, "members", Map.of("org_id", List.of(org)));
        c.sync();
        return c;
    }

    static Map<String, Object> member(String id, String org, String email) {
        Map<String, Object> m = new HashMap<>();
        m.put("id", id);
        m.put("org_id", org);
        m.put("email", email);
        m.put("name", "n " + id);
        return m;
    }

    private Map<String, StoredRow> rows(String partition) {
        Map<String, StoredRow> out = new TreeMap<>();
        for (StoredRow r : storage.readAllRows(partition, "members").await().atMost(WAIT)) {
            out.put(r.rowId(), r);
        }
        return out;
    }

    private long maxCommitSeq(String partition) {
        return storage.readPartition(partition).await().atMost(WAIT).maxCommitSeq();
    }

    private static PushResult pushResult(Message m, String clientCommitId) {
        return m.frames().stream()
                .filter(f -> f instanceof PushResult r && r.clientCommitId().equals(clientCommitId))
                .map(f -> (PushResult) f)
                .findFirst()
                .orElseThrow();
    }

    private static PushResultDetails details(Message m, String clientCommitId) {
        return m.frames().stream()
                .filter(f ->
                        f instanceof PushResultDetails d && d.clientCommitId().equals(clientCommitId))
                .map(f -> (PushResultDetails) f)
                .findFirst()
                .orElseThrow();
    }

    /** The commit's terminating record: §10.2 {@code sync.constraint_violation}, not retryable, at {@code opIndex}. */
    private static void assertUniqueRejection(PushResult r, int opIndex) {
        assertEquals(CommitStatus.REJECTED, r.status());
        assertNull(r.commitSeq(), "a rejected commit has no sequence (§6.3)");
        assertEquals(1, r.results().size(), "only the terminating record (§6.3)");
        OpResult.Error e = assertInstanceOf(OpResult.Error.class, r.results().get(0));
        assertEquals("sync.constraint_violation", e.code());
        assertEquals(opIndex, e.opIndex());
        assertFalse(e.retryable());
        assertEquals("a declared unique index refused the write", e.message(), "fixed prose, no key or SQL text");
    }

    /** §6.3.1: the index, its columns and the reason. */
    private static void assertUniqueDetails(PushResultDetails d, int opIndex) throws IOException {
        assertEquals(1, d.entries().size());
        assertEquals(opIndex, d.entries().get(0).opIndex());
        JsonNode json = JSON.readTree(d.entries().get(0).detailsJson());
        assertEquals("unique_violation", json.get("reason").asText());
        assertEquals(
                List.of("org_id", "email"),
                List.of(
                        json.get("fieldPaths").get(0).asText(),
                        json.get("fieldPaths").get(1).asText()));
        assertEquals(2, json.get("fieldPaths").size());
        assertEquals("members_org_email", json.get("references").get("index").asText());
        assertEquals("members", json.get("references").get("table").asText());
    }

    /**
     * Alice takes {@code (o1, a@x)} with {@code m1}; Bob's commit inserts a sibling {@code m3} and then {@code m2}
     * with the same key: refused at {@code m2}'s operation, the sibling rolled back with it, no commit appended. A
     * later commit of Bob's in the same request still applies (§6.4). The same request again answers the persisted
     * rejection unchanged, details included (§2.3). Bob's pull delivers the winner {@code m1}.
     */
    @Test
    void B_preamble_distinctPrimaryKeyRaceOnCompositeUniqueKey() throws Exception {
        String p = newPartition();
        SyncTestClient alice = client(p, "alice", "o1");
        SyncTestClient bob = client(p, "bob", "o1");
        String won = alice.upsert("members", member("m1", "o1", "a@x"), null);
        alice.sync();
        assertTrue(SyncTestClient.applied(alice.result(won)));
        long seqAfterWinner = maxCommitSeq(p);
        StoredRow winner = rows(p).get("m1");

        String lost = bob.commit(List.of(
                bob.upsertOp("members", member("m3", "o1", "c@x"), null),
                bob.upsertOp("members", member("m2", "o1", "a@x"), null)));
        String later = bob.upsert("members", member("m4", "o1", "d@x"), null);
        byte[] request = bob.buildRequest().encode();
        Message first = MessageDecoder.decodeResponse(transport(p).roundTrip(bob, request));
        assertUniqueRejection(pushResult(first, lost), 1);
        assertUniqueDetails(details(first, lost), 1);
        assertEquals(
                CommitStatus.APPLIED, pushResult(first, later).status(), "a rejected commit does not stop the batch");
        Map<String, StoredRow> rows = rows(p);
        assertEquals(List.of("m1", "m4"), List.copyOf(rows.keySet()), "m2 refused, its sibling m3 rolled back");
        assertEquals(winner.serverVersion(), rows.get("m1").serverVersion());
        assertArrayEquals(winner.values(), rows.get("m1").values(), "the winner untouched");
        assertEquals(seqAfterWinner + 1, maxCommitSeq(p), "only the later commit was appended");

        // §2.3: a retry of the same request replays the rejection (and the applied commit as cached)
        Message again = MessageDecoder.decodeResponse(transport(p).roundTrip(bob, request));
        assertEquals(pushResult(first, lost), pushResult(again, lost));
        assertEquals(details(first, lost), details(again, lost));
        assertEquals(CommitStatus.CACHED, pushResult(again, later).status());
        assertEquals(seqAfterWinner + 1, maxCommitSeq(p));

        // the loser's client sees the winner's row through its pull: the authorized server base of its evidence
        bob.outbox.clear();
        bob.syncUntilIdle();
        assertArrayEquals(winner.values(), bob.table("members").get("m1").values());
        assertFalse(bob.table("members").containsKey("m2"));
        assertFalse(bob.table("members").containsKey("m3"));
    }

    /** NULL never collides (SQLite's and PostgreSQL's rule), nor does one key in another org or another partition. */
    @Test
    void nullKeyPartsAndOtherPartitionsDoNotCollide() {
        String p = newPartition();
        String q = newPartition();
        SyncTestClient a = client(p, "carol", "o1");
        String nulls = a.commit(List.of(
                a.upsertOp("members", member("n1", "o1", null), null),
                a.upsertOp("members", member("n2", "o1", null), null)));
        String orgs = a.commit(List.of(
                a.upsertOp("members", member("k1", "o1", "k@x"), null),
                a.upsertOp("members", member("k2", "o2", "k@x"), null)));
        a.sync();
        assertTrue(SyncTestClient.applied(a.result(nulls)));
        assertTrue(SyncTestClient.applied(a.result(orgs)));
        SyncTestClient b = client(q, "carol", "o1");
        String other = b.upsert("members", member("k9", "o1", "k@x"), null);
        b.sync();
        assertTrue(SyncTestClient.applied(b.result(other)), "the same key in another partition");
        assertEquals(4, rows(p).size());
        assertEquals(1, rows(q).size());
    }

    /** A sparse update moving a row onto a taken key is refused; a delete frees the key for another row. */
    @Test
    void anUpdateOntoATakenKeyIsRefusedAndADeleteFreesTheKey() throws Exception {
        String p = newPartition();
        SyncTestClient a = client(p, "dave", "o1");
        a.upsert("members", member("u1", "o1", "a@x"), null);
        a.upsert("members", member("u2", "o1", "b@x"), null);
        a.sync();
        assertEquals(2, rows(p).size());
        String move = a.upsert("members", Map.of("id", "u2", "email", "a@x"), null);
        a.sync();
        assertUniqueRejection(a.result(move), 0);
        assertUniqueDetails(details(a.lastResponse, move), 0);
        assertEquals("b@x", rows(p).get("u2").values()[2]);
        assertEquals(1L, rows(p).get("u2").serverVersion());
        // delete, then reuse in another commit
        String del = a.delete("members", "u1");
        String reuse = a.upsert("members", member("u3", "o1", "a@x"), null);
        a.sync();
        assertTrue(SyncTestClient.applied(a.result(del)));
        assertTrue(SyncTestClient.applied(a.result(reuse)));
        // delete and reuse in one commit, and a move onto the key just freed
        String swap = a.commit(List.of(
                SyncTestClient.deleteOp("members", "u3"),
                a.upsertOp("members", Map.of("id", "u2", "email", "a@x"), null)));
        a.sync();
        assertTrue(SyncTestClient.applied(a.result(swap)), String.valueOf(a.result(swap)));
        assertEquals("a@x", rows(p).get("u2").values()[2]);
        assertEquals(List.of("u2"), List.copyOf(rows(p).keySet()));
    }

    /**
     * Many clients push a distinct primary key with one key into one partition at the same moment (their pushes
     * queue on the partition and run in groups, their writes pipelined): exactly one applies, every other is the
     * rejection — never a 500, never {@code sync.internal_error} — and each rejected commit wrote nothing. Repeated.
     */
    @Test
    void concurrentPushesOfOneKeyProduceExactlyOneWinner() throws Exception {
        int clients = 8;
        for (int round = 0; round < 25; round++) {
            String p = newPartition();
            List<SyncTestClient> cs = new ArrayList<>();
            List<String> commits = new ArrayList<>();
            List<byte[]> requests = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                SyncTestClient c = client(p, "racer" + i, "o1");
                // bootstrapped first, one at a time: the race is of pushes, not of first rounds (a pod admits
                // syncular.fairness.max-bootstraps-per-partition bootstrapping rounds of a partition at once)
                c.syncUntilIdle();
                String id = c.upsert("members", member("r" + i, "o1", "race@x"), null);
                cs.add(c);
                commits.add(id);
                requests.add(c.buildRequest().encode());
            }
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Message>> sent = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                int k = i;
                sent.add(threads.submit(() -> {
                    start.await();
                    return MessageDecoder.decodeResponse(transport(p).roundTrip(cs.get(k), requests.get(k)));
                }));
            }
            start.countDown();
            int applied = 0;
            String winner = null;
            for (int i = 0; i < clients; i++) {
                Message m = sent.get(i).get(60, TimeUnit.SECONDS);
                PushResult r = pushResult(m, commits.get(i));
                if (r.status() == CommitStatus.APPLIED) {
                    applied++;
                    winner = "r" + i;
                } else {
                    assertUniqueRejection(r, 0);
                    for (Frame f : m.frames()) {
                        assertFalse(f instanceof dev.syncular.server.wire.ErrorFrame, "no in-band error");
                    }
                }
            }
            assertEquals(1, applied, "exactly one winner in round " + round);
            assertEquals(List.of(winner), List.copyOf(rows(p).keySet()));
            assertEquals(1L, maxCommitSeq(p), "one commit appended");
        }
    }
}
