package dev.syncular.server.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.testsupport.Concurrently;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.SyncTestClient.LocalRow;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.MediaType;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.MessageEncoder;
import dev.syncular.server.wire.Op;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.PushResultDetails;
import dev.syncular.server.wire.ReqHeader;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.RowCodec;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRef;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionStatus;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The server side of the Appendix B conformance scenarios that only push and pull — 1–6, 8–10 and 19, each test
 * named after its scenario and lettered case ({@code B10a_…}; docs/CONFORMANCE.md maps them all) — plus the
 * bad-input rules of §1.7/§3.2/§3.4, driven through {@link SyncTestClient}. Runners supply the binding: the engine
 * in-process, or {@code POST /sync} over real HTTP (with the embedded or the S3 segment store).
 */
public abstract class SyncScenariosContract {
    public static final CompiledSchema SCHEMA = loadSchema();

    private static CompiledSchema loadSchema() {
        try (InputStream in = SyncScenariosContract.class.getResourceAsStream("/schema/notes.json")) {
            return SchemaLoader.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The host-controlled parts of a server (§B: authentication, scope resolution) and its storage. */
    public interface Server {
        SyncTestClient.Transport transport();

        /** A unique partition for this test, so tests never see each other's data. */
        String partition();

        void allow(String actorId, Map<String, List<String>> allowed);

        /** The server's rows of a table in a partition, for convergence checks. */
        Map<String, StoredRow> rows(String table);

        /** Prunes the partition's log through {@code seq} (§4.6). */
        void prune(long seq);

        long maxCommitSeq();

        /** Row counts of every storage table, to assert that a rejected request changed nothing. */
        Map<String, Long> tableCounts();
    }

    /** The storage-side half of a {@link Server} on PostgreSQL: row, horizon and table-count inspection. */
    public abstract static class PostgresBackedServer implements Server {
        private static final Duration WAIT = Duration.ofSeconds(30);

        protected abstract PostgresSyncStorage storage();

        protected abstract Pool pool();

        @Override
        public Map<String, StoredRow> rows(String table) {
            Map<String, StoredRow> out = new TreeMap<>();
            for (StoredRow r : storage().readAllRows(partition(), table).await().atMost(WAIT)) {
                out.put(r.rowId(), r);
            }
            return out;
        }

        @Override
        public void prune(long seq) {
            PartitionState s = storage().readPartition(partition()).await().atMost(WAIT);
            storage().prune(partition(), s.logEpoch(), seq).await().atMost(WAIT);
        }

        @Override
        public long maxCommitSeq() {
            return storage().readPartition(partition()).await().atMost(WAIT).maxCommitSeq();
        }

        @Override
        public Map<String, Long> tableCounts() {
            String schema = storage().pgSchema();
            Map<String, Long> counts = new TreeMap<>();
            for (Row r : pool().preparedQuery(
                            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1")
                    .execute(Tuple.of(schema))
                    .await()
                    .atMost(WAIT)) {
                String n = r.getString(0);
                counts.put(
                        n,
                        pool().query("SELECT count(*) FROM \"" + schema + "\".\"" + n + "\"")
                                .execute()
                                .await()
                                .atMost(WAIT)
                                .iterator()
                                .next()
                                .getLong(0));
            }
            return counts;
        }
    }

    protected abstract Server server();

    private SyncTestClient client(String actor, String clientId) {
        return new SyncTestClient(SCHEMA, server().transport(), actor, clientId)
                .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
    }

    public static Map<String, Object> note(String id, String project, String title) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("project_id", project);
        m.put("title", title);
        m.put("body", null);
        m.put("priority", null);
        m.put("done", null);
        return m;
    }

    private void assertConverged(SyncTestClient c) {
        Map<String, StoredRow> server = server().rows("notes");
        Map<String, LocalRow> local = c.table("notes");
        Map<String, Long> serverVersions = new TreeMap<>();
        server.forEach((id, r) -> {
            if ("p1".equals(r.values()[1])) {
                serverVersions.put(id, r.serverVersion());
            }
        });
        Map<String, Long> localVersions = new TreeMap<>();
        local.forEach((id, r) -> localVersions.put(id, r.version()));
        assertEquals(serverVersions, localVersions);
        for (Map.Entry<String, LocalRow> e : local.entrySet()) {
            assertArrayEquals(server.get(e.getKey()).values(), e.getValue().values(), e.getKey());
        }
    }

    private void allowP1(String... actors) {
        for (String a : actors) {
            server().allow(a, Map.of("project_id", List.of("p1")));
        }
    }

    /** B.1: clients A and B interleave upserts and deletes with pulls; both end row- and version-identical. */
    @Test
    void B1_twoClientConvergence() {
        allowP1("alice", "bob");
        SyncTestClient a = client("alice", "a-1");
        SyncTestClient b = client("bob", "b-1");
        a.syncUntilIdle();
        b.syncUntilIdle();
        for (int i = 0; i < 10; i++) {
            a.upsert("notes", note("n-" + i, "p1", "from a " + i), null);
            if (i % 3 == 0) {
                b.upsert("notes", note("m-" + i, "p1", "from b " + i), null);
            }
            if (i % 4 == 3) {
                a.delete("notes", "n-" + (i - 1));
            }
            a.sync();
            b.sync();
        }
        a.syncUntilIdle();
        b.syncUntilIdle();
        a.syncUntilIdle();
        assertConverged(a);
        assertConverged(b);
        assertEquals(a.table("notes").keySet(), b.table("notes").keySet());
        assertFalse(a.table("notes").containsKey("n-2"));
    }

    /**
     * B.1 under concurrency: A pushes two-operation commits (an upsert and a delete) while B pulls and pushes, in
     * two threads at once. Every commit B receives arrives whole with its sequence (§6.4: a puller never sees part
     * of a commit), cursors only advance (§4.5), and after quiescence both replicas equal the server's.
     */
    @Test
    void B1_concurrentPushersAndPullersConverge() throws Exception {
        allowP1("alice", "bob");
        SyncTestClient a = client("alice", "a-1c");
        SyncTestClient b = client("bob", "b-1c");
        a.syncUntilIdle();
        b.syncUntilIdle();
        List<CommitFrame> seenByB = new ArrayList<>();
        List<Long> cursorsOfB = new ArrayList<>();
        Concurrently.run(2, k -> {
            for (int i = 0; i < 15; i++) {
                if (k == 0) {
                    List<PushOperation> ops = new ArrayList<>();
                    ops.add(a.upsertOp("notes", note("a-" + i, "p1", "from a " + i), null));
                    if (i > 0) {
                        ops.add(SyncTestClient.deleteOp("notes", "a-" + (i - 1)));
                    }
                    a.commit(ops);
                    a.sync();
                } else {
                    if (i % 2 == 0) {
                        b.upsert("notes", note("b-" + i, "p1", "from b " + i), null);
                    }
                    b.sync();
                    for (Frame f : b.lastResponse.frames()) {
                        if (f instanceof CommitFrame c) {
                            seenByB.add(c);
                        }
                    }
                    cursorsOfB.add(b.subscriptions.get("notes-p1").cursor);
                }
            }
            return null;
        });
        a.syncUntilIdle();
        b.syncUntilIdle();
        a.syncUntilIdle();
        Map<Long, Integer> opsByCommit = new HashMap<>();
        for (PushResult r : a.results.values()) {
            assertTrue(SyncTestClient.applied(r), String.valueOf(r));
            opsByCommit.put(r.commitSeq(), r.results().size());
        }
        for (CommitFrame c : seenByB) {
            if (opsByCommit.containsKey(c.commitSeq())) {
                assertEquals(opsByCommit.get(c.commitSeq()), c.changes().size(), "commit " + c.commitSeq() + " whole");
            }
        }
        for (int i = 1; i < cursorsOfB.size(); i++) {
            assertTrue(cursorsOfB.get(i) >= cursorsOfB.get(i - 1), "B's cursor never moves back");
        }
        assertConverged(a);
        assertConverged(b);
        assertEquals(
                Set.of("a-14", "b-0", "b-2", "b-4", "b-6", "b-8", "b-10", "b-12", "b-14"),
                a.table("notes").keySet());
    }

    /**
     * B.2: A goes offline with a multi-commit outbox, one commit an unversioned edit of a row B edits meanwhile and
     * one a versioned edit B's change makes stale; the replay is one combined push+pull, FIFO. The stale commit is
     * rejected with its conflict and the commits after it are still attempted and applied in order (§6.4, §7.2);
     * the unversioned edit merges per column (§6.2 step 6).
     */
    @Test
    void B2_offlineReplay() {
        allowP1("alice", "bob");
        SyncTestClient a = client("alice", "a-2");
        SyncTestClient b = client("bob", "b-2");
        b.upsert("notes", note("shared", "p1", "v1"), null);
        b.syncUntilIdle();
        a.syncUntilIdle();
        long base = a.table("notes").get("shared").version();
        // A is offline: four commits, two of them edits of a row B edits meanwhile.
        String c1 = a.upsert("notes", note("o-1", "p1", "offline 1"), null);
        String c2 = a.upsert("notes", Map.of("id", "shared", "body", "a's body"), null);
        String stale = a.upsert("notes", Map.of("id", "shared", "title", "a's stale title"), base);
        String c3 = a.upsert("notes", Map.of("id", "o-1", "title", "offline 1 edited"), null);
        b.upsert("notes", Map.of("id", "shared", "title", "b's title"), base);
        b.syncUntilIdle();
        Message replay = a.sync();
        List<String> order = replay.frames().stream()
                .filter(f -> f instanceof PushResult)
                .map(f -> ((PushResult) f).clientCommitId())
                .toList();
        assertEquals(List.of(c1, c2, stale, c3), order, "one result per commit, in outbox order (§6.3)");
        for (String c : List.of(c1, c2, c3)) {
            assertTrue(SyncTestClient.applied(a.result(c)), c);
        }
        assertTrue(a.result(c1).commitSeq() < a.result(c2).commitSeq());
        assertTrue(a.result(c2).commitSeq() < a.result(c3).commitSeq());
        OpResult.Conflict conflict =
                assertInstanceOf(OpResult.Conflict.class, SyncTestClient.firstResult(a.result(stale)));
        assertArrayEquals(new byte[] {0b100}, conflict.conflictColumns());
        a.syncUntilIdle();
        b.syncUntilIdle();
        StoredRow shared = server().rows("notes").get("shared");
        assertEquals("b's title", shared.values()[2]); // column-level last write wins (§6.2 step 6)
        assertEquals("a's body", shared.values()[3]);
        assertEquals("offline 1 edited", server().rows("notes").get("o-1").values()[2]);
        assertConverged(a);
        assertConverged(b);
    }

    /**
     * B.3: the response of a successful push is lost; the identical retry answers {@code cached} with the original
     * results and commitSeq — no second apply, no new commitSeq — and an observer sees the commit once (§2.3,
     * §6.3).
     */
    @Test
    void B3_idempotentRetryUnderAckLoss() {
        allowP1("alice", "carol");
        SyncTestClient observer = client("carol", "c-3");
        observer.syncUntilIdle();
        DroppingTransport dropping = new DroppingTransport(server().transport());
        SyncTestClient a = new SyncTestClient(SCHEMA, dropping, "alice", "a-3")
                .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        a.syncUntilIdle();
        String commit = a.upsert("notes", note("r-1", "p1", "once"), null);
        dropping.dropNext = true;
        assertThrows(HttpFailure.class, a::sync);
        assertEquals(1, a.outbox.size());
        long seqAfterFirst = server().maxCommitSeq();
        a.sync();
        PushResult replayed = a.result(commit);
        assertEquals(CommitStatus.CACHED, replayed.status());
        assertEquals(seqAfterFirst, replayed.commitSeq());
        assertEquals(List.of(new OpResult.Applied(0)), replayed.results(), "the original results");
        assertEquals(seqAfterFirst, server().maxCommitSeq(), "no second commit");
        assertEquals(1, server().rows("notes").get("r-1").serverVersion());
        observer.sync();
        long seen = observer.lastResponse.frames().stream()
                .filter(f -> f instanceof CommitFrame c && c.commitSeq() == replayed.commitSeq())
                .count();
        assertEquals(1, seen);
    }

    /**
     * B.4: after the host revokes p1, the next pull answers that subscription {@code revoked} with
     * {@code sync.scope_revoked}, empty effective scopes, the request cursor echoed and no data; the other
     * subscription goes on; a pull that keeps the revoked subscription stays revoked; a write into the revoked
     * scope that a client still sends is refused by §3.4 (the client drops such writes; a table without a local
     * scope-column mapping failing closed is the client's alone).
     */
    @Test
    void B4_scopeRevocationPurge() {
        server().allow("alice", Map.of("project_id", List.of("p1", "p2")));
        SyncTestClient a = client("alice", "a-4").subscribe("notes-p2", "notes", Map.of("project_id", List.of("p2")));
        a.upsert("notes", note("p1-row", "p1", "one"), null);
        a.upsert("notes", note("p2-row", "p2", "two"), null);
        a.syncUntilIdle();
        assertEquals(2, a.table("notes").size());
        long cursor = a.subscriptions.get("notes-p1").cursor;
        server().allow("alice", Map.of("project_id", List.of("p2")));
        // a commit in p1 after the revocation, written by someone still allowed: never delivered to alice
        allowP1("bob");
        SyncTestClient bob = client("bob", "b-4");
        bob.upsert("notes", note("p1-later", "p1", "after"), null);
        bob.syncUntilIdle();
        Message m = a.sync();
        List<Frame> section = section(m, "notes-p1");
        SubStart revoked = (SubStart) section.get(0);
        assertEquals(SubscriptionStatus.REVOKED, revoked.status());
        assertEquals("sync.scope_revoked", revoked.reasonCode());
        assertTrue(revoked.effectiveScopes().isEmpty());
        assertEquals(2, section.size(), "no data in a revoked section");
        assertEquals(cursor, ((SubEnd) section.get(1)).nextCursor(), "the request cursor echoed");
        assertEquals(
                SubscriptionStatus.ACTIVE, ((SubStart) section(m, "notes-p2").get(0)).status());
        assertEquals(List.of("p2-row"), List.copyOf(a.table("notes").keySet()));
        a.subscriptions.get("notes-p1").status = SubscriptionStatus.ACTIVE; // a client that goes on pulling it
        a.sync();
        assertEquals(
                SubscriptionStatus.REVOKED,
                ((SubStart) section(a.lastResponse, "notes-p1").get(0)).status());
        // Writes into the revoked scope are refused by write-path authorization (§3.4).
        String write = a.upsert("notes", Map.of("id", "p1-row", "title", "sneaky"), null);
        a.sync();
        OpResult r = SyncTestClient.firstResult(a.result(write));
        assertEquals("sync.forbidden", assertInstanceOf(OpResult.Error.class, r).code());
        assertEquals("one", server().rows("notes").get("p1-row").values()[2]);
    }

    /** The frames of one subscription's section of a response, {@code SUB_START} to {@code SUB_END}. */
    private static List<Frame> section(Message m, String subscription) {
        List<Frame> out = new ArrayList<>();
        boolean in = false;
        for (Frame f : m.frames()) {
            if (f instanceof SubStart s) {
                in = s.id().equals(subscription);
            }
            if (in) {
                out.add(f);
            }
            if (f instanceof SubEnd) {
                in = false;
            }
        }
        assertFalse(out.isEmpty(), "no section " + subscription);
        return out;
    }

    /**
     * B.5: a two-table bootstrap (notes, and their comments) is cut after two pages; the re-pull with the last
     * persisted resume token continues at the pinned {@code asOfCommitSeq}, and the result equals an uninterrupted
     * bootstrap: no row lost or duplicated; a write after the pin arrives by the incremental pull that takes over
     * (§4.7, §5.6, §1.4).
     */
    @Test
    void B5_bootstrapResumeMidStream() {
        allowP1("alice", "bob", "carol");
        SyncTestClient writer = client("alice", "w-5");
        writer.syncUntilIdle();
        for (int batch = 0; batch < 5; batch++) {
            List<PushOperation> ops = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                String id = String.format("b-%03d-%02d", batch, i);
                ops.add(writer.upsertOp("notes", note(id, "p1", "row"), null));
                if (i % 4 == 0) {
                    ops.add(writer.upsertOp("comments", child("c-" + id, id), null));
                }
            }
            writer.commit(ops);
            writer.sync(); // one commit a request: the §6.1 operation cap is 500 a request
        }
        writer.syncUntilIdle();
        long pin = server().maxCommitSeq();
        DroppingTransport dropping = new DroppingTransport(server().transport());
        SyncTestClient b = new SyncTestClient(SCHEMA, dropping, "bob", "b-5")
                .subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")))
                .subscribe("comments-p1", "comments", Map.of("project_id", List.of("p1")));
        b.limitSnapshotRows = 60;
        b.maxSnapshotPages = 2;
        b.sync(); // epoch acquisition
        b.sync(); // pages 1-2
        assertNotNull(b.subscriptions.get("notes-p1").bootstrapState);
        assertEquals(pin, b.subscriptions.get("notes-p1").cursor);
        String tokenBefore = b.subscriptions.get("notes-p1").bootstrapState;
        dropping.dropNext = true; // the transport is cut mid-bootstrap: nothing of that round persists
        assertThrows(HttpFailure.class, b::sync);
        assertEquals(tokenBefore, b.subscriptions.get("notes-p1").bootstrapState);
        // A write after the pin must arrive by incremental pull once the bootstrap completes.
        writer.upsert("notes", note("late", "p1", "after pin"), null);
        writer.syncUntilIdle();
        b.syncUntilIdle();
        assertNull(b.subscriptions.get("notes-p1").bootstrapState);
        assertNull(b.subscriptions.get("comments-p1").bootstrapState);
        assertTrue(b.table("notes").containsKey("late"));
        assertEquals(501, b.table("notes").size());
        assertEquals(125, b.table("comments").size());
        assertConverged(b);
        // the control: the same bootstrap, never interrupted
        SyncTestClient control =
                client("carol", "c-5").subscribe("comments-p1", "comments", Map.of("project_id", List.of("p1")));
        control.limitSnapshotRows = 60;
        control.maxSnapshotPages = 2;
        control.syncUntilIdle();
        for (String t : List.of("notes", "comments")) {
            assertEquals(control.table(t).keySet(), b.table(t).keySet(), t);
            control.table(t).forEach((id, row) -> {
                assertEquals(row.version(), b.table(t).get(id).version(), id);
                assertArrayEquals(row.values(), b.table(t).get(id).values(), id);
            });
        }
    }

    private static final int IMAGE_ACCEPT =
            PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SQLITE;

    /** Seeds {@code count} notes in p1 with varied values (NULLs, booleans, integers) in commits of 100. */
    private SyncTestClient seedNotes(String clientId, String prefix, int count) {
        SyncTestClient writer = client("alice", clientId);
        writer.syncUntilIdle();
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Map<String, Object> n = note(String.format("%s-%04d", prefix, i), "p1", i % 7 == 0 ? null : "title " + i);
            n.put("priority", i % 5 == 0 ? null : (long) i * 1_000_003L);
            n.put("done", i % 3 == 0 ? null : i % 2 == 0);
            n.put("body", "b\u00e9 " + i);
            ops.add(writer.upsertOp("notes", n, null));
            if (ops.size() == 100) {
                writer.commit(ops);
                ops = new ArrayList<>();
            }
        }
        if (!ops.isEmpty()) {
            writer.commit(ops);
        }
        writer.syncUntilIdle();
        return writer;
    }

    private static List<SegmentRef> refs(Message m) {
        return m.frames().stream()
                .filter(f -> f instanceof SegmentRef)
                .map(f -> (SegmentRef) f)
                .toList();
    }

    /** 230 image-eligible notes in p1, one of them edited (so versions differ); yields their writer. */
    private SyncTestClient imageEligible(String suffix) {
        allowP1("alice", "bob", "carol", "dave");
        SyncTestClient writer = seedNotes("w-10" + suffix, "img", 230);
        writer.upsert("notes", Map.of("id", "img-0003", "title", "edited"), 1L);
        writer.syncUntilIdle();
        return writer;
    }

    /** A client advertising accept bit 2 (§4.2), paging at 50 rows. */
    private SyncTestClient imageClient(String actor, String clientId) {
        SyncTestClient c = client(actor, clientId);
        c.accept = IMAGE_ACCEPT;
        c.limitSnapshotRows = 50;
        return c;
    }

    /**
     * B.10 (a): with accept bit 2 an image-eligible table bootstraps in one pull, one whole-table image, no paging,
     * no resume token; the client ends row-, value- and version-identical to a rows-lane control client, and hands
     * off to incremental pulls at the pin (§5.3, §5.6, §4.7).
     */
    @Test
    void B10a_sqliteImageBootstrapEqualsTheRowsLane() {
        SyncTestClient writer = imageEligible("a");
        SyncTestClient b = imageClient("bob", "b-10a");
        b.maxSnapshotPages = 1;
        b.sync(); // epoch acquisition
        Message first = b.sync();
        List<SegmentRef> image = refs(first);
        assertEquals(1, image.size());
        SegmentRef ref = image.get(0);
        assertEquals(MediaType.SQLITE, ref.mediaType());
        assertEquals(230, ref.rowCount());
        assertTrue(first.frames().stream().noneMatch(f -> f instanceof SegmentInline));
        assertNull(b.subscriptions.get("notes-p1").bootstrapState);
        assertEquals(ref.asOfCommitSeq(), b.subscriptions.get("notes-p1").cursor);
        assertEquals(230, b.table("notes").size());

        SyncTestClient control = client("carol", "c-10a");
        control.limitSnapshotRows = 50;
        control.syncUntilIdle();
        assertTrue(control.segmentRefs.stream().allMatch(r -> r.mediaType() == MediaType.ROWS));
        assertEquals(control.table("notes").keySet(), b.table("notes").keySet());
        control.table("notes").forEach((id, row) -> {
            LocalRow other = b.table("notes").get(id);
            assertEquals(row.version(), other.version(), id);
            assertArrayEquals(row.values(), other.values(), id);
        });
        assertConverged(b);

        writer.upsert("notes", note("img-late", "p1", "after the image"), null);
        writer.syncUntilIdle();
        b.syncUntilIdle();
        assertTrue(b.table("notes").containsKey("img-late"));
        assertConverged(b);
    }

    /**
     * B.10 (b): the sqlite descriptor carries no {@code rowCursor}/{@code nextRowCursor}, and a second client with
     * the same scopes at the same pin gets the same {@code segmentId} — commits outside the scope do not move the
     * scope pin (§5.3 determinism rule, §4.7).
     */
    @Test
    void B10b_sqliteDescriptorShapeAndReuse() {
        SyncTestClient writer = imageEligible("b");
        SyncTestClient b = imageClient("bob", "b-10b");
        b.sync();
        SegmentRef ref = refs(b.sync()).get(0);
        assertEquals(MediaType.SQLITE, ref.mediaType());
        assertNull(ref.rowCursor());
        assertNull(ref.nextRowCursor());
        server().allow("alice", Map.of("project_id", List.of("p1", "p2")));
        writer.upsert("notes", note("elsewhere", "p2", "another scope"), null);
        writer.syncUntilIdle();
        SyncTestClient dave = imageClient("dave", "d-10b");
        dave.sync();
        SegmentRef again = refs(dave.sync()).get(0);
        assertEquals(ref.segmentId(), again.segmentId(), "the same image at the same scope pin");
        assertEquals(ref.asOfCommitSeq(), again.asOfCommitSeq());
        SyncTestClient third = imageClient("bob", "b2-10b");
        third.sync();
        assertEquals(again.segmentId(), refs(third.sync()).get(0).segmentId());
        assertEquals(230, third.table("notes").size());
    }

    /**
     * B.10 (c): corrupted image bytes fail the content address; the client aborts the round (§1.4 rule 5) and
     * persists nothing; the re-pull, served the same content address, converges.
     */
    @Test
    void B10c_corruptImageBytesAbortAndTheRePullConverges() {
        imageEligible("c");
        SyncTestClient corrupt = imageClient("bob", "x-10c");
        corrupt.sync();
        corrupt.corruptNextSegment = true;
        assertThrows(IllegalStateException.class, corrupt::sync);
        assertEquals(-1, corrupt.subscriptions.get("notes-p1").cursor);
        assertTrue(corrupt.table("notes").isEmpty());
        corrupt.syncUntilIdle();
        assertEquals(MediaType.SQLITE, corrupt.segmentRefs.get(0).mediaType());
        assertConverged(corrupt);
    }

    /** B.10 (d): without accept bit 2 the same table pages through rows segments (§4.2). */
    @Test
    void B10d_withoutBit2TheTablePagesThroughRowsSegments() {
        imageEligible("d");
        SyncTestClient gated = client("bob", "g-10d");
        gated.limitSnapshotRows = 50;
        gated.maxSnapshotPages = 1;
        gated.sync();
        Message paged = gated.sync();
        assertTrue(refs(paged).stream().allMatch(r -> r.mediaType() == MediaType.ROWS));
        assertNotNull(gated.subscriptions.get("notes-p1").bootstrapState);
        gated.syncUntilIdle();
        assertTrue(gated.segmentRefs.stream().allMatch(r -> r.mediaType() == MediaType.ROWS));
        assertConverged(gated);
    }

    /** B.10 (e): a bootstrap resumed mid-table stays on the rows lane at its pin when bit 2 appears (§5.3, §4.7). */
    @Test
    void B10e_aResumedBootstrapStaysOnTheRowsLane() {
        imageEligible("e");
        SyncTestClient gated = client("bob", "g-10e");
        gated.limitSnapshotRows = 50;
        gated.maxSnapshotPages = 1;
        gated.sync();
        gated.sync();
        assertNotNull(gated.subscriptions.get("notes-p1").bootstrapState);
        long pin = gated.subscriptions.get("notes-p1").cursor;
        gated.accept = IMAGE_ACCEPT;
        gated.syncUntilIdle();
        assertTrue(gated.segmentRefs.stream().allMatch(r -> r.mediaType() == MediaType.ROWS));
        assertTrue(gated.segmentRefs.stream().allMatch(r -> r.asOfCommitSeq() == pin));
        assertConverged(gated);
    }

    @Test
    void smallTablesStayOnTheRowsLaneEvenWithBit2() {
        allowP1("alice", "bob");
        seedNotes("w-10s", "small", 20);
        SyncTestClient b = client("bob", "b-10s");
        b.accept = IMAGE_ACCEPT;
        b.limitSnapshotRows = 50;
        b.syncUntilIdle();
        assertEquals(20, b.table("notes").size());
        assertTrue(b.segmentRefs.stream().noneMatch(r -> r.mediaType() == MediaType.SQLITE));
        assertConverged(b);
    }

    /**
     * B.6: A and B edit one row from one {@code baseVersion}; B's commit is rejected with a conflict carrying
     * {@code serverVersion}, {@code serverRow} and the conflicting columns, and its sibling insert rolled back
     * (§6.4). B rebases keep-local (the same sparse operation with {@code baseVersion = serverVersion}) with the
     * sibling, and both converge; the rejected commit replays as itself (§2.3).
     */
    @Test
    void B6_conflictResolveAndRebaseKeepLocal() {
        allowP1("alice", "bob");
        SyncTestClient a = client("alice", "a-6");
        SyncTestClient b = client("bob", "b-6");
        a.upsert("notes", note("doc", "p1", "original"), null);
        a.syncUntilIdle();
        b.syncUntilIdle();
        long base = b.table("notes").get("doc").version();
        a.upsert("notes", Map.of("id", "doc", "title", "alice wins"), base);
        a.syncUntilIdle();
        // B's commit: the conflicting edit plus a sibling insert that must roll back with it (§6.4).
        String lost = b.commit(List.of(
                b.upsertOp("notes", Map.of("id", "doc", "title", "bob loses"), base),
                b.upsertOp("notes", note("sibling", "p1", "rolled back"), null)));
        b.sync();
        PushResult rejected = b.result(lost);
        assertEquals(CommitStatus.REJECTED, rejected.status());
        assertNull(rejected.commitSeq());
        OpResult.Conflict conflict = assertInstanceOf(OpResult.Conflict.class, SyncTestClient.firstResult(rejected));
        assertEquals("sync.version_conflict", conflict.code());
        StoredRow doc = server().rows("notes").get("doc");
        assertEquals(doc.serverVersion(), conflict.serverVersion());
        assertArrayEquals(doc.values(), new RowCodec(SCHEMA.table("notes").rowLayout()).decode(conflict.serverRow()));
        assertArrayEquals(new byte[] {0b100}, conflict.conflictColumns());
        assertFalse(server().rows("notes").containsKey("sibling"));
        // Rebase (keep-local on title) with the server's version, and re-apply the sibling.
        String rebased = b.commit(List.of(
                b.upsertOp("notes", Map.of("id", "doc", "title", "merged"), conflict.serverVersion()),
                b.upsertOp("notes", note("sibling", "p1", "re-applied"), null)));
        b.syncUntilIdle();
        assertTrue(SyncTestClient.applied(b.result(rebased)));
        a.syncUntilIdle();
        assertEquals("merged", server().rows("notes").get("doc").values()[2]);
        assertConverged(a);
        assertConverged(b);
        // Replaying the rejected commit returns its persisted rejection unchanged (§2.3).
        b.outbox.add(new PushCommit(lost, List.of(SyncTestClient.deleteOp("notes", "doc"))));
        b.sync();
        assertArrayEquals(
                MessageEncoder.encodeFrame(rejected),
                MessageEncoder.encodeFrame(b.result(lost)),
                "byte-equivalent replay");
        assertTrue(server().rows("notes").containsKey("doc"));
    }

    /** A row both clients hold, a winning edit of A from their shared base, and B's losing edit's conflict. */
    private OpResult.Conflict lostToAlice(SyncTestClient a, SyncTestClient b, Map<String, Object> bobsEdit) {
        allowP1("alice", "bob");
        Map<String, Object> row = note("doc", "p1", "original");
        row.put("body", "original body");
        a.upsert("notes", row, null);
        a.syncUntilIdle();
        b.syncUntilIdle();
        long base = b.table("notes").get("doc").version();
        a.upsert("notes", Map.of("id", "doc", "title", "alice's title", "priority", 1L), base);
        a.syncUntilIdle();
        String lost = b.upsert("notes", bobsEdit, base);
        b.sync();
        return assertInstanceOf(OpResult.Conflict.class, SyncTestClient.firstResult(b.result(lost)));
    }

    /**
     * B.6 keep-server: the loser applies {@code serverRow} and drops its operation (client side); the server side is
     * that {@code serverRow} at {@code serverVersion} is exactly the row a pull then delivers, so the replicas agree
     * with nothing pushed again.
     */
    @Test
    void B6_conflictResolvedKeepServer() {
        SyncTestClient a = client("alice", "a-6s");
        SyncTestClient b = client("bob", "b-6s");
        OpResult.Conflict c = lostToAlice(a, b, Map.of("id", "doc", "title", "bob's title"));
        Object[] serverRow = new RowCodec(SCHEMA.table("notes").rowLayout()).decode(c.serverRow());
        long maxSeq = server().maxCommitSeq();
        b.syncUntilIdle();
        assertEquals(c.serverVersion(), b.table("notes").get("doc").version());
        assertArrayEquals(serverRow, b.table("notes").get("doc").values());
        assertEquals(maxSeq, server().maxCommitSeq(), "nothing pushed again");
        assertConverged(a);
        assertConverged(b);
    }

    /**
     * B.6 custom merge: the loser pushes new values for exactly the {@code conflictColumns} (title and priority
     * here, not its untouched body) with {@code baseVersion = serverVersion}; it applies and both converge.
     */
    @Test
    void B6_conflictResolvedByCustomMerge() {
        SyncTestClient a = client("alice", "a-6m");
        SyncTestClient b = client("bob", "b-6m");
        OpResult.Conflict c = lostToAlice(a, b, Map.of("id", "doc", "title", "bob's title", "priority", 2L));
        assertArrayEquals(new byte[] {0b1_0100}, c.conflictColumns(), "title and priority");
        String merged = b.upsert(
                "notes",
                Map.of("id", "doc", "title", "alice's title + bob's title", "priority", 3L),
                c.serverVersion());
        b.syncUntilIdle();
        assertTrue(SyncTestClient.applied(b.result(merged)));
        StoredRow doc = server().rows("notes").get("doc");
        assertEquals("alice's title + bob's title", doc.values()[2]);
        assertEquals("original body", doc.values()[3]);
        assertEquals(3L, doc.values()[4]);
        a.syncUntilIdle();
        assertConverged(a);
        assertConverged(b);
    }

    /**
     * B.8: the server prunes past an absent client's cursor; its next pull answers {@code reset} with
     * {@code sync.cursor_expired}, no commits and the request cursor echoed, and it re-bootstraps and converges;
     * a second client whose cursor equals {@code horizonSeq} still pulls incrementally (§4.6 boundary).
     */
    @Test
    void B8_horizonForcedRebootstrap() {
        allowP1("alice", "bob", "carol");
        SyncTestClient writer = client("alice", "w-8");
        SyncTestClient absent = client("bob", "b-8");
        writer.upsert("notes", note("h-0", "p1", "first"), null);
        writer.syncUntilIdle();
        absent.syncUntilIdle();
        long absentCursor = absent.subscriptions.get("notes-p1").cursor;
        for (int i = 1; i <= 5; i++) {
            writer.upsert("notes", note("h-" + i, "p1", "row " + i), null);
        }
        writer.delete("notes", "h-0");
        writer.syncUntilIdle();
        SyncTestClient boundary = client("carol", "c-8");
        boundary.syncUntilIdle();
        long horizon = server().maxCommitSeq();
        server().prune(horizon);
        assertEquals(horizon, boundary.subscriptions.get("notes-p1").cursor);
        Message m = absent.sync();
        List<Frame> section = section(m, "notes-p1");
        SubStart reset = (SubStart) section.get(0);
        assertEquals(SubscriptionStatus.RESET, reset.status());
        assertEquals("sync.cursor_expired", reset.reasonCode());
        assertEquals(2, section.size(), "no commits");
        assertEquals(absentCursor, ((SubEnd) section.get(1)).nextCursor());
        absent.syncUntilIdle();
        assertFalse(absent.table("notes").containsKey("h-0"), "the deleted row does not survive the re-bootstrap");
        assertConverged(absent);
        // cursor == horizonSeq is still served incrementally (§4.6 boundary).
        writer.upsert("notes", note("h-after", "p1", "after prune"), null);
        writer.syncUntilIdle();
        Message inc = boundary.sync();
        SubStart active = (SubStart) section(inc, "notes-p1").get(0);
        assertEquals(SubscriptionStatus.ACTIVE, active.status());
        assertFalse(active.bootstrap());
        assertTrue(boundary.table("notes").containsKey("h-after"));
    }

    /**
     * B.9: a client that bootstrapped through segments only (no commit delivered) holds the server's versions; a
     * {@code baseVersion} upsert with the segment-delivered version applies, a stale one conflicts with the current
     * {@code serverVersion} and {@code serverRow} (§5.2, §5.6, §6.2).
     */
    @Test
    void B9_bootstrapSeededOptimisticConcurrency() {
        allowP1("alice", "bob");
        SyncTestClient writer = client("alice", "w-9");
        writer.upsert("notes", note("occ", "p1", "v1"), null);
        writer.syncUntilIdle();
        writer.upsert("notes", Map.of("id", "occ", "title", "v2"), null);
        writer.syncUntilIdle();
        SyncTestClient fresh = client("bob", "f-9");
        fresh.accept = PullHeader.ACCEPT_EXTERNAL_ROWS; // segments by reference only
        fresh.syncUntilIdle();
        assertTrue(fresh.segmentDownloads > 0);
        long version = fresh.table("notes").get("occ").version();
        assertEquals(server().rows("notes").get("occ").serverVersion(), version);
        String ok = fresh.upsert("notes", Map.of("id", "occ", "title", "v3"), version);
        fresh.sync();
        assertTrue(SyncTestClient.applied(fresh.result(ok)));
        String stale = fresh.upsert("notes", Map.of("id", "occ", "title", "stale"), version);
        fresh.sync();
        OpResult.Conflict c =
                assertInstanceOf(OpResult.Conflict.class, SyncTestClient.firstResult(fresh.result(stale)));
        assertEquals(version + 1, c.serverVersion());
        assertArrayEquals(
                server().rows("notes").get("occ").values(),
                new RowCodec(SCHEMA.table("notes").rowLayout()).decode(c.serverRow()));
    }

    // ---------------------------------------------------------------------------------- bad input

    private void assertRequestFails(SyncTestClient c, String code) {
        Map<String, Long> before = server().tableCounts();
        HttpFailure f = assertThrows(HttpFailure.class, c::sync);
        assertTrue(f.body.contains(code), f.body);
        assertEquals(before, server().tableCounts(), "storage unchanged");
    }

    @Test
    void badSubscriptionsFailTheWholeRequest() {
        allowP1("alice");
        SyncTestClient a = client("alice", "bad-1");
        a.sync();
        a.upsert("notes", note("never", "p1", "x"), null);
        a.subscribe("other", "nope", Map.of("project_id", List.of("p1")));
        assertRequestFails(a, "sync.unknown_table");
        a.subscriptions.remove("other");
        a.subscribe("star", "notes", Map.of("project_id", List.of("*")));
        assertRequestFails(a, "sync.invalid_subscription");
        a.subscriptions.remove("star");
        a.subscribe("undeclared", "notes", Map.of("team_id", List.of("t1")));
        assertRequestFails(a, "sync.invalid_subscription");
        a.subscriptions.remove("undeclared");
        a.subscribe("notes-p1", "notes", Map.of("project_id", List.of("p1")));
        a.subscribe("dup", "notes", Map.of("project_id", List.of("p1")));
        a.syncUntilIdle();
        assertTrue(server().rows("notes").containsKey("never"));
    }

    @Test
    void operationCapAndClientBinding() {
        allowP1("alice", "mallory");
        SyncTestClient a = client("alice", "bind-1");
        a.sync();
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < 501; i++) {
            ops.add(a.upsertOp("notes", note("cap-" + i, "p1", "x"), null));
        }
        a.commit(ops);
        assertRequestFails(a, "sync.too_many_operations");
        a.outbox.clear();
        a.sync();
        SyncTestClient impostor = new SyncTestClient(SCHEMA, server().transport(), "mallory", "bind-1");
        impostor.state.logEpoch = a.state.logEpoch;
        impostor.upsert("notes", note("imp", "p1", "x"), null);
        assertRequestFails(impostor, "sync.invalid_client_id");
    }

    @Test
    void forbiddenAndMalformedWritesRejectOnlyTheirCommit() {
        allowP1("alice");
        SyncTestClient a = client("alice", "bad-2");
        a.sync();
        Map<String, Long> before = server().tableCounts();
        String forbidden = a.upsert("notes", note("x-1", "p9", "other project"), null);
        String unknown = a.commit(List.of(new PushOperation("ghost", "g", Op.DELETE, null, null)));
        String garbage = a.commit(List.of(new PushOperation("notes", "n", Op.UPSERT, null, new byte[] {1, 2, 3})));
        String mismatched = a.commit(List.of(new PushOperation(
                "notes",
                "other-id",
                Op.UPSERT,
                null,
                a.upsertOp("notes", note("x-2", "p1", "t"), null).payload())));
        a.sync();
        assertEquals("sync.forbidden", ((OpResult.Error) SyncTestClient.firstResult(a.result(forbidden))).code());
        assertEquals("sync.unknown_table", ((OpResult.Error) SyncTestClient.firstResult(a.result(unknown))).code());
        assertEquals("sync.invalid_request", ((OpResult.Error) SyncTestClient.firstResult(a.result(garbage))).code());
        assertEquals(
                "sync.invalid_request", ((OpResult.Error) SyncTestClient.firstResult(a.result(mismatched))).code());
        Map<String, Long> after = server().tableCounts();
        // Only the four persisted rejections and the client record changed: no row, change or commit.
        Map<String, Long> expected = new HashMap<>(before);
        expected.put("sync_push_results", before.get("sync_push_results") + 4);
        expected.put("sync_clients", after.get("sync_clients"));
        expected.put("sync_partitions", after.get("sync_partitions"));
        assertEquals(expected, after);
    }

    @Test
    void epochAcquisitionCarriesNoPushes() {
        allowP1("alice");
        SyncTestClient a = client("alice", "epoch-1");
        a.upsert("notes", note("e-1", "p1", "queued"), null);
        Message first = a.sync();
        assertEquals(1, first.frames().size());
        assertNotNull(a.state.logEpoch);
        assertFalse(server().rows("notes").containsKey("e-1"));
        a.syncUntilIdle();
        assertTrue(server().rows("notes").containsKey("e-1"));
        // A wrong epoch gets the reset response and performs no work.
        SyncTestClient stale = client("alice", "epoch-2");
        stale.state.logEpoch = "not-the-epoch";
        stale.upsert("notes", note("e-2", "p1", "x"), null);
        Message reset = stale.sync();
        List<Frame> frames = reset.frames();
        assertEquals(1, frames.size());
        assertFalse(server().rows("notes").containsKey("e-2"));
    }

    @Test
    void segmentDownloadsReauthorize() {
        allowP1("alice", "bob");
        SyncTestClient a = client("alice", "seg-1");
        a.upsert("notes", note("s-1", "p1", "x"), null);
        a.syncUntilIdle();
        SyncTestClient b = client("bob", "seg-2");
        b.accept = PullHeader.ACCEPT_EXTERNAL_ROWS;
        b.sync();
        Message m = b.sync();
        SegmentRef ref = (SegmentRef) m.frames().stream()
                .filter(f -> f instanceof SegmentRef)
                .findFirst()
                .orElseThrow();
        server().allow("bob", Map.of("project_id", List.of("p2")));
        HttpFailure denied = assertThrows(
                HttpFailure.class,
                () -> server().transport().downloadSegment(b, ref.segmentId(), "{\"project_id\":[\"p1\"]}"));
        assertTrue(denied.body.contains("sync.forbidden"), denied.body);
        HttpFailure unknown = assertThrows(
                HttpFailure.class,
                () -> server().transport().downloadSegment(b, "sha256:" + "0".repeat(64), "{\"project_id\":[\"p1\"]}"));
        assertTrue(unknown.body.contains("sync.not_found"), unknown.body);
    }

    @Test
    void schemaFloorProcessesNothing() {
        allowP1("alice");
        SyncTestClient a = client("alice", "floor-1");
        a.sync();
        a.upsert("notes", note("floor", "p1", "never"), null);
        Message request = a.buildRequest();
        List<Frame> frames = new ArrayList<>(request.frames());
        frames.set(0, new ReqHeader(a.clientId, 99, a.state.logEpoch));
        Map<String, Long> before = server().tableCounts();
        Message m = MessageDecoder.decodeResponse(
                server().transport().roundTrip(a, Message.request(frames).encode()));
        assertEquals(1, m.frames().size());
        RespHeader h = (RespHeader) m.frames().get(0);
        assertEquals(SCHEMA.version(), h.requiredSchemaVersion());
        assertEquals(SCHEMA.version(), h.latestSchemaVersion());
        assertEquals(a.state.logEpoch, h.logEpoch());
        assertEquals(before, server().tableCounts());
    }

    @Test
    void hostileEnvelopesChangeNothing() {
        allowP1("alice");
        SyncTestClient a = client("alice", "hostile-1");
        a.sync();
        a.upsert("notes", note("hostile", "p1", "x"), null);
        byte[] valid = a.buildRequest().encode();
        Map<String, Long> before = server().tableCounts();
        List<byte[]> hostile = List.of(
                Arrays.copyOf(valid, valid.length - 5), // no END
                Arrays.copyOf(valid, valid.length + 3), // bytes after END
                Arrays.copyOf(valid, 20), // cut inside a frame
                new byte[] {'S', 'S', 'P', '2', 1, 0, 1, 0, 0, 0, 0, 0, 0}); // wire version 1
        for (byte[] body : hostile) {
            HttpFailure f =
                    assertThrows(HttpFailure.class, () -> server().transport().roundTrip(a, body));
            assertEquals(400, f.status);
            assertTrue(f.body.contains("sync.invalid_request"), f.body);
        }
        assertEquals(before, server().tableCounts());
        assertFalse(server().rows("notes").containsKey("hostile"));
    }

    // ---------------------------------------------------------------------------------- references (§6.11)

    private static Map<String, Object> child(String id, String noteId) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("project_id", "p1");
        m.put("note_id", noteId);
        m.put("text", "t");
        return m;
    }

    /** The §6.3.1 details of the response's {@code PUSH_RESULT_DETAILS} for {@code commit}, at its one entry. */
    private static PushResultDetails.Entry detailsFor(SyncTestClient c, String commit) {
        PushResultDetails d = (PushResultDetails) c.lastResponse.frames().stream()
                .filter(f ->
                        f instanceof PushResultDetails p && p.clientCommitId().equals(commit))
                .findFirst()
                .orElseThrow();
        assertEquals(1, d.entries().size());
        return d.entries().get(0);
    }

    /**
     * B.19 (a): a staged child whose present, non-null reference names an absent parent rejects with
     * {@code sync.reference_violation}, {@code reason = missing_parent} in its §6.3.1 details, and the whole commit
     * rolls back (its valid sibling too).
     */
    @Test
    void B19a_childOfAnAbsentParentIsMissingParentAndRollsBackTheCommit() {
        allowP1("alice");
        SyncTestClient a = client("alice", "ref-a");
        a.sync();
        long before = server().maxCommitSeq();
        String orphan = a.commit(List.of(
                a.upsertOp("notes", note("n-ok", "p1", "sibling"), null),
                a.upsertOp("comments", child("c-0", "missing"), null)));
        a.sync();
        OpResult.Error e = assertInstanceOf(OpResult.Error.class, SyncTestClient.firstResult(a.result(orphan)));
        assertEquals("sync.reference_violation", e.code());
        assertEquals(1, e.opIndex());
        assertFalse(e.retryable());
        PushResultDetails.Entry details = detailsFor(a, orphan);
        assertEquals(1, details.opIndex());
        assertEquals(
                "{\"fieldPaths\":[\"note_id\"],\"reason\":\"missing_parent\",\"references\":{\"parent\":\"notes\",\"row\":\"missing\"}}",
                details.detailsJson());
        assertEquals(before, server().maxCommitSeq());
        assertFalse(server().rows("notes").containsKey("n-ok"));
        assertTrue(server().rows("comments").isEmpty());
        // a parent and its children in one commit pass (candidate state)
        String together = a.commit(List.of(
                a.upsertOp("notes", note("n-ref", "p1", "parent"), null),
                a.upsertOp("comments", child("c-1", "n-ref"), null)));
        a.sync();
        assertTrue(SyncTestClient.applied(a.result(together)));
    }

    /**
     * B.19 (b): {@code RESTRICT} — a parent delete (A) and a child insert pinning it (B), in each arrival order: the
     * later one is refused ({@code restricted_delete} for the delete, {@code missing_parent} for the insert), and
     * both clients converge. Then the two raced at once, five times: exactly one of them applies.
     */
    @Test
    void B19b_restrictAgainstAConcurrentChildInsertInEitherOrder() throws Exception {
        allowP1("alice", "bob");
        SyncTestClient a = client("alice", "ref-b-a").subscribe("pins-p1", "pins", Map.of("project_id", List.of("p1")));
        SyncTestClient b = client("bob", "ref-b-b").subscribe("pins-p1", "pins", Map.of("project_id", List.of("p1")));
        for (int i = 0; i < 7; i++) {
            a.upsert("notes", note("n-" + i, "p1", "parent " + i), null);
        }
        a.syncUntilIdle();
        b.syncUntilIdle();
        // the child first: the delete is restricted
        String pin = b.upsert("pins", child("pin-0", "n-0"), null);
        b.sync();
        assertTrue(SyncTestClient.applied(b.result(pin)));
        String restricted = a.delete("notes", "n-0");
        a.sync();
        assertEquals(
                "sync.reference_violation",
                assertInstanceOf(OpResult.Error.class, SyncTestClient.firstResult(a.result(restricted)))
                        .code());
        assertEquals(
                "{\"reason\":\"restricted_delete\",\"references\":{\"child\":\"pins\"}}",
                detailsFor(a, restricted).detailsJson());
        // the delete first: the child is a missing parent
        String deleted = a.delete("notes", "n-1");
        a.sync();
        assertTrue(SyncTestClient.applied(a.result(deleted)));
        String late = b.upsert("pins", child("pin-1", "n-1"), null);
        b.sync();
        assertEquals(
                "sync.reference_violation",
                assertInstanceOf(OpResult.Error.class, SyncTestClient.firstResult(b.result(late)))
                        .code());
        assertTrue(detailsFor(b, late).detailsJson().contains("\"reason\":\"missing_parent\""));
        // at once
        for (int i = 2; i < 7; i++) {
            String del = a.delete("notes", "n-" + i);
            String ins = b.upsert("pins", child("pin-" + i, "n-" + i), null);
            List<SyncTestClient> both = List.of(a, b);
            Concurrently.run(2, k -> both.get(k).sync());
            boolean deleteWon = SyncTestClient.applied(a.result(del));
            assertTrue(deleteWon != SyncTestClient.applied(b.result(ins)), "exactly one of them applies");
            assertEquals(!deleteWon, server().rows("notes").containsKey("n-" + i));
            assertEquals(!deleteWon, server().rows("pins").containsKey("pin-" + i));
        }
        a.syncUntilIdle();
        b.syncUntilIdle();
        a.syncUntilIdle();
        for (SyncTestClient c : List.of(a, b)) {
            assertConverged(c);
            assertEquals(server().rows("pins").keySet(), c.table("pins").keySet());
        }
    }

    /**
     * B.19 (c): {@code CASCADE} — a parent delete emits one child {@code delete} per child inside the same commit,
     * and a subscriber of the child scope removes the rows from that one {@code COMMIT}.
     */
    @Test
    void B19c_cascadeDeletesEveryChildInTheSameCommit() {
        allowP1("alice", "bob");
        SyncTestClient a = client("alice", "ref-c-a");
        SyncTestClient b =
                client("bob", "ref-c-b").subscribe("comments-p1", "comments", Map.of("project_id", List.of("p1")));
        a.commit(List.of(
                a.upsertOp("notes", note("n-c", "p1", "parent"), null),
                a.upsertOp("comments", child("c-1", "n-c"), null),
                a.upsertOp("comments", child("c-2", "n-c"), null),
                a.upsertOp("comments", child("c-3", "n-c"), null)));
        a.syncUntilIdle();
        b.syncUntilIdle();
        assertEquals(3, b.table("comments").size());
        String del = a.delete("notes", "n-c");
        a.sync();
        long seq = a.result(del).commitSeq();
        assertTrue(server().rows("comments").isEmpty());
        b.sync();
        CommitFrame cascade = (CommitFrame) section(b.lastResponse, "comments-p1").stream()
                .filter(f -> f instanceof CommitFrame)
                .findFirst()
                .orElseThrow();
        assertEquals(seq, cascade.commitSeq(), "the parent delete's commit");
        assertEquals(3, cascade.changes().size());
        assertTrue(cascade.changes().stream().allMatch(ch -> ch.op() == Op.DELETE));
        assertTrue(b.table("comments").isEmpty());
        assertFalse(b.table("notes").containsKey("n-c"));
    }

    /** B.19 (d): {@code SET NULL} — a parent delete emits a child upsert setting the reference column to NULL. */
    @Test
    void B19d_setNullClearsTheReferenceInTheSameCommit() {
        allowP1("alice", "bob");
        SyncTestClient a = client("alice", "ref-d-a");
        SyncTestClient b = client("bob", "ref-d-b").subscribe("links-p1", "links", Map.of("project_id", List.of("p1")));
        a.commit(List.of(
                a.upsertOp("notes", note("n-l", "p1", "parent"), null),
                a.upsertOp("links", child("l-1", "n-l"), null)));
        a.syncUntilIdle();
        b.syncUntilIdle();
        String del = a.delete("notes", "n-l");
        a.sync();
        StoredRow link = server().rows("links").get("l-1");
        assertNull(link.values()[2]);
        assertEquals(2, link.serverVersion());
        b.sync();
        CommitFrame setNull = (CommitFrame) section(b.lastResponse, "links-p1").stream()
                .filter(f -> f instanceof CommitFrame)
                .findFirst()
                .orElseThrow();
        assertEquals(a.result(del).commitSeq(), setNull.commitSeq());
        assertEquals(Op.UPSERT, setNull.changes().get(0).op());
        assertEquals(2, setNull.changes().get(0).rowVersion());
        assertNull(b.table("links").get("l-1").values()[2]);
        assertEquals("t", b.table("links").get("l-1").values()[3], "the other columns stay");
    }

    /** B.19 (e): a cascade of more than 1,000 operations rejects with {@code reason = cascade_limit}; nothing goes. */
    @Test
    void B19e_aCascadeOverTheCapIsCascadeLimit() {
        allowP1("alice");
        SyncTestClient a = client("alice", "ref-e");
        a.upsert("notes", note("n-big", "p1", "parent"), null);
        a.syncUntilIdle();
        for (int from = 0; from < 1001; from += 500) {
            List<PushOperation> ops = new ArrayList<>();
            for (int i = from; i < Math.min(1001, from + 500); i++) {
                ops.add(a.upsertOp("comments", child(String.format("c-%04d", i), "n-big"), null));
            }
            a.commit(ops);
            a.sync(); // one commit a request: the §6.1 operation cap is 500 a request
        }
        assertEquals(1001, server().rows("comments").size());
        long before = server().maxCommitSeq();
        String del = a.delete("notes", "n-big");
        a.sync();
        OpResult.Error e = assertInstanceOf(OpResult.Error.class, SyncTestClient.firstResult(a.result(del)));
        assertEquals("sync.reference_violation", e.code());
        assertEquals(0, e.opIndex());
        assertEquals("{\"reason\":\"cascade_limit\"}", detailsFor(a, del).detailsJson());
        assertEquals(before, server().maxCommitSeq());
        assertEquals(1001, server().rows("comments").size());
        assertTrue(server().rows("notes").containsKey("n-big"));
    }

    /** B.19 (f): one commit deleting a parent and its {@code RESTRICT} children together passes. */
    @Test
    void B19f_deletingAParentWithItsChildrenInOneCommitPassesRestrict() {
        allowP1("alice");
        SyncTestClient a = client("alice", "ref-f");
        a.commit(List.of(
                a.upsertOp("notes", note("n-pin", "p1", "pinned"), null),
                a.upsertOp("pins", child("pin-1", "n-pin"), null),
                a.upsertOp("pins", child("pin-2", "n-pin"), null)));
        a.syncUntilIdle();
        String alone = a.delete("notes", "n-pin");
        a.sync();
        assertFalse(SyncTestClient.applied(a.result(alone)), "restricted alone");
        String together = a.commit(List.of(
                SyncTestClient.deleteOp("notes", "n-pin"),
                SyncTestClient.deleteOp("pins", "pin-1"),
                SyncTestClient.deleteOp("pins", "pin-2")));
        a.sync();
        assertTrue(SyncTestClient.applied(a.result(together)));
        assertFalse(server().rows("notes").containsKey("n-pin"));
        assertTrue(server().rows("pins").isEmpty());
    }

    private static Map<String, Object> child(String id, String project, String noteId) {
        Map<String, Object> m = child(id, noteId);
        m.put("project_id", project);
        return m;
    }

    private SyncTestClient clientOf(String actor, String clientId, String project) {
        SyncTestClient c = new SyncTestClient(SCHEMA, server().transport(), actor, clientId)
                .subscribe("notes-" + project, "notes", Map.of("project_id", List.of(project)));
        c.sync(); // the first round learns the epoch; pushes go out from the next one
        return c;
    }

    /** The §6.3.1 details JSON of the response's first {@code PUSH_RESULT_DETAILS} entry. */
    private static String detailsOf(SyncTestClient c) {
        return ((PushResultDetails) c.lastResponse.frames().stream()
                        .filter(f -> f instanceof PushResultDetails)
                        .findFirst()
                        .orElseThrow())
                .entries()
                .get(0)
                .detailsJson();
    }

    @Test
    void parentOutsideTheGrantIsAMissingParent() {
        // §3.4 / §6.11: a parent in a scope the actor is not allowed answers exactly like an absent one
        server().allow("owner", Map.of("project_id", List.of("p2")));
        allowP1("alice");
        SyncTestClient owner = clientOf("owner", "ref-owner", "p2");
        owner.upsert("notes", note("n-secret", "p2", "hidden"), null);
        owner.sync();
        assertTrue(server().rows("notes").containsKey("n-secret"));
        SyncTestClient a = client("alice", "ref-probe");
        a.sync();
        String crossScope = a.upsert("comments", child("c-cross", "n-secret"), null);
        a.sync();
        OpResult.Error cross = assertInstanceOf(OpResult.Error.class, SyncTestClient.firstResult(a.result(crossScope)));
        String crossDetails = detailsOf(a);
        String absent = a.upsert("comments", child("c-absent", "n-nothing"), null);
        a.sync();
        OpResult.Error missing = assertInstanceOf(OpResult.Error.class, SyncTestClient.firstResult(a.result(absent)));
        String missingDetails = detailsOf(a);
        assertEquals("sync.reference_violation", cross.code());
        assertEquals(missing.code(), cross.code());
        assertEquals(missing.message(), cross.message());
        assertEquals(missing.retryable(), cross.retryable());
        assertEquals(missingDetails.replace("n-nothing", "n-secret"), crossDetails);
        assertTrue(crossDetails.contains("missing_parent"), crossDetails);
        assertFalse(server().rows("comments").containsKey("c-cross"));
        // an actor allowed both scopes may still reference across them (the parent is inside its grant)
        server().allow("both", Map.of("project_id", List.of("p1", "p2")));
        SyncTestClient b = clientOf("both", "ref-both", "p1");
        String allowed = b.upsert("comments", child("c-both", "n-secret"), null);
        b.sync();
        assertTrue(
                SyncTestClient.applied(b.result(allowed)),
                String.valueOf(SyncTestClient.firstResult(b.result(allowed))));
    }

    @Test
    void restrictAndCascadeNeverActOutsideTheDeletersGrant() {
        // §3.4 / §6.11: children the deleter could not write neither restrict nor cascade nor get set to NULL
        server().allow("both", Map.of("project_id", List.of("p1", "p2")));
        server().allow("carol", Map.of("project_id", List.of("p2")));
        SyncTestClient both = clientOf("both", "xref-both", "p1");
        String setup = both.commit(List.of(
                both.upsertOp("notes", note("n-pinned", "p2", "pinned from p1"), null),
                both.upsertOp("pins", child("pin-p1", "p1", "n-pinned"), null),
                both.upsertOp("notes", note("n-casc", "p2", "cascading"), null),
                both.upsertOp("comments", child("c-in-p1", "p1", "n-casc"), null),
                both.upsertOp("comments", child("c-in-p2", "p2", "n-casc"), null),
                both.upsertOp("links", child("l-in-p1", "p1", "n-casc"), null),
                both.upsertOp("links", child("l-in-p2", "p2", "n-casc"), null)));
        both.sync();
        assertTrue(
                SyncTestClient.applied(both.result(setup)),
                String.valueOf(SyncTestClient.firstResult(both.result(setup))));
        SyncTestClient carol = clientOf("carol", "xref-carol", "p2");
        // RESTRICT: a pin in p1 does not block carol's delete of her p2 note
        String unpinned = carol.delete("notes", "n-pinned");
        carol.sync();
        assertTrue(SyncTestClient.applied(carol.result(unpinned)));
        assertFalse(server().rows("notes").containsKey("n-pinned"));
        assertEquals("n-pinned", server().rows("pins").get("pin-p1").values()[2]);
        // CASCADE / SET NULL: only the p2 children move; the p1 ones stay as they were
        StoredRow linkBefore = server().rows("links").get("l-in-p1");
        String cascaded = carol.delete("notes", "n-casc");
        carol.sync();
        assertTrue(SyncTestClient.applied(carol.result(cascaded)));
        Map<String, StoredRow> comments = server().rows("comments");
        assertFalse(comments.containsKey("c-in-p2"));
        assertTrue(comments.containsKey("c-in-p1"));
        StoredRow linkP1 = server().rows("links").get("l-in-p1");
        assertEquals("n-casc", linkP1.values()[2]);
        assertEquals(linkBefore.serverVersion(), linkP1.serverVersion());
        assertNull(server().rows("links").get("l-in-p2").values()[2]);
        // the writer allowed both scopes still restricts on every child
        String pin = both.commit(List.of(
                both.upsertOp("notes", note("n-both", "p2", "x"), null),
                both.upsertOp("pins", child("pin-both", "p1", "n-both"), null)));
        both.sync();
        assertTrue(SyncTestClient.applied(both.result(pin)));
        String refused = both.delete("notes", "n-both");
        both.sync();
        assertEquals(
                "sync.reference_violation",
                assertInstanceOf(OpResult.Error.class, SyncTestClient.firstResult(both.result(refused)))
                        .code());
        assertTrue(detailsOf(both).contains("restricted_delete"));
    }

    // ---------------------------------------------------------------------------------- concurrency

    @Test
    /** B.3 under concurrency: fifty overlapping deliveries of one commit run one pipeline; all answer its result. */
    void B3_concurrentDuplicateDeliveriesApplyOnce() throws Exception {
        allowP1("alice");
        SyncTestClient a = client("alice", "dup-50");
        a.syncUntilIdle();
        long before = server().maxCommitSeq();
        String id = a.upsert("notes", note("once", "p1", "exactly once"), null);
        byte[] request = a.buildRequest().encode();
        List<PushResult> results = Concurrently.run(50, i -> {
            Message m = MessageDecoder.decodeResponse(server().transport().roundTrip(a, request));
            return (PushResult) m.frames().stream()
                    .filter(f -> f instanceof PushResult)
                    .findFirst()
                    .orElseThrow();
        });
        assertEquals(before + 1, server().maxCommitSeq());
        assertEquals(
                1,
                results.stream().filter(r -> r.status() == CommitStatus.APPLIED).count());
        for (PushResult r : results) {
            assertEquals(id, r.clientCommitId());
            assertEquals(before + 1, r.commitSeq());
        }
        assertEquals(1, server().rows("notes").get("once").serverVersion());
    }

    @Test
    /** B.6's race: two writers edit one row from one base at once; exactly one wins, the other conflicts. */
    void B6_twoWritersRacingFromOneBaseProduceOneWinner() throws Exception {
        allowP1("alice", "bob");
        SyncTestClient a = client("alice", "race-a");
        SyncTestClient b = client("bob", "race-b");
        a.upsert("notes", note("contested", "p1", "start"), null);
        a.syncUntilIdle();
        b.syncUntilIdle();
        long base = a.table("notes").get("contested").version();
        a.upsert("notes", Map.of("id", "contested", "title", "alice"), base);
        b.upsert("notes", Map.of("id", "contested", "title", "bob"), base);
        List<SyncTestClient> clients = List.of(a, b);
        List<byte[]> requests =
                List.of(a.buildRequest().encode(), b.buildRequest().encode());
        List<PushResult> results = Concurrently.run(2, i -> {
            Message m = MessageDecoder.decodeResponse(server().transport().roundTrip(clients.get(i), requests.get(i)));
            return (PushResult) m.frames().stream()
                    .filter(f -> f instanceof PushResult)
                    .findFirst()
                    .orElseThrow();
        });
        assertEquals(
                1,
                results.stream().filter(r -> r.status() == CommitStatus.APPLIED).count());
        PushResult loser = results.stream()
                .filter(r -> r.status() == CommitStatus.REJECTED)
                .findFirst()
                .orElseThrow();
        assertInstanceOf(OpResult.Conflict.class, SyncTestClient.firstResult(loser));
        assertEquals(base + 1, server().rows("notes").get("contested").serverVersion());
    }

    /** Transport fault injection: performs the round, then loses its response (§B.3, §B.5). */
    protected static final class DroppingTransport implements SyncTestClient.Transport {
        private final SyncTestClient.Transport inner;
        volatile boolean dropNext;

        DroppingTransport(SyncTestClient.Transport inner) {
            this.inner = inner;
        }

        @Override
        public byte[] roundTrip(SyncTestClient client, byte[] request) {
            byte[] response = inner.roundTrip(client, request);
            if (dropNext) {
                dropNext = false;
                throw new HttpFailure(0, "response dropped");
            }
            return response;
        }

        @Override
        public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
            return inner.downloadSegment(client, segmentId, scopesHeader);
        }
    }
}
