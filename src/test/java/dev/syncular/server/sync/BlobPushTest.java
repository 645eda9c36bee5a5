package dev.syncular.server.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.blobs.BlobContent;
import dev.syncular.server.blobs.BlobIds;
import dev.syncular.server.blobs.BlobInfo;
import dev.syncular.server.blobs.BlobPage;
import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.blobs.postgres.PostgresBlobStore;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.segments.memory.InMemorySegmentStore;
import dev.syncular.server.storage.BlobReference;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.testsupport.EngineTransport;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PushResult;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The §5.9.6 / §6.6 push-time blob existence check, the §5.9.4 reference index it feeds and the §5.9.2 orphan
 * sweep, through the engine in-process on real PostgreSQL storage and the embedded blob store.
 */
class BlobPushTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static Vertx vertx;
    private static Pool pool;
    private static String pgSchema;
    private static PostgresSyncStorage storage;
    private static HookedStore blobs;
    private static SyncEngine engine;
    private static BlobService service;
    private String partition;

    /**
     * The embedded store with a hook run inside {@link #has} — to interleave a sweep with a push's lookup — and
     * one run before each {@link #delete} (it may fail the delete, as an object store that is down would).
     */
    static final class HookedStore implements BlobStore {
        final BlobStore delegate;
        volatile Supplier<Uni<?>> onHas;
        volatile Function<String, Uni<Void>> onDelete;

        HookedStore(BlobStore delegate) {
            this.delegate = delegate;
        }

        @Override
        public Uni<BlobInfo> put(String partition, BlobContent content, String mediaType, long nowMs) {
            return delegate.put(partition, content, mediaType, nowMs);
        }

        @Override
        public Uni<BlobInfo> describe(String partition, String blobId) {
            return delegate.describe(partition, blobId);
        }

        @Override
        public Uni<Boolean> has(String partition, String blobId) {
            return delegate.has(partition, blobId).call(() -> {
                Supplier<Uni<?>> hook = onHas;
                onHas = null;
                return hook == null ? Uni.createFrom().voidItem() : hook.get();
            });
        }

        @Override
        public Multi<byte[]> read(String partition, String blobId) {
            return delegate.read(partition, blobId);
        }

        @Override
        public Uni<Boolean> delete(String partition, String blobId) {
            Function<String, Uni<Void>> hook = onDelete;
            return (hook == null ? Uni.createFrom().voidItem() : hook.apply(blobId))
                    .chain(() -> delegate.delete(partition, blobId));
        }

        @Override
        public Uni<BlobPage> listCreatedBefore(long cutoffMs, String after, int limit) {
            return delegate.listCreatedBefore(cutoffMs, after, limit);
        }
    }

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        pool = TestPostgres.pool(vertx, 8);
        pgSchema = "sync_blobs_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        storage = new PostgresSyncStorage(pool, pgSchema, PostgresSyncStorage.Settings.DEFAULTS);
        storage.ensureSchema(SyncScenariosContract.SCHEMA).await().atMost(WAIT);
        PostgresBlobStore pg = new PostgresBlobStore(pool, pgSchema);
        pg.ensureSchema().await().atMost(WAIT);
        blobs = new HookedStore(pg);
        ScopeResolver everything = (actor, p) -> Uni.createFrom().item(Map.of("project_id", List.of("*")));
        SchemaWindow window = SchemaWindow.single(SyncScenariosContract.SCHEMA);
        engine = new SyncEngine(EngineParts.builder(window, storage, new InMemorySegmentStore(), everything)
                .blobs(blobs)
                .build());
        service =
                new BlobService(blobs, storage, everything, window, System::currentTimeMillis, 1 << 20, Duration.ZERO);
    }

    @AfterAll
    static void stop() {
        pool.query("DROP SCHEMA IF EXISTS \"" + pgSchema + "\" CASCADE")
                .execute()
                .await()
                .atMost(WAIT);
        pool.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }

    @BeforeEach
    void freshPartition() {
        partition = "p-" + UUID.randomUUID();
    }

    private SyncTestClient client(SyncEngine e, String clientId) {
        return new SyncTestClient(
                SyncScenariosContract.SCHEMA, new EngineTransport(e, partition, Map.of()), "alice", clientId);
    }

    private SyncTestClient client() {
        SyncTestClient c = client(engine, "c-" + UUID.randomUUID());
        c.sync(); // acquire the log epoch
        return c;
    }

    private static String upload(String partition, String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        String id = BlobIds.compute(bytes);
        // through the service: the upload entitles alice, the pushing actor, to reference it (§5.9.6)
        service.upload(new SyncRequestContext("alice", partition), BlobContent.verify(id, bytes), "text/plain")
                .await()
                .atMost(WAIT);
        return id;
    }

    static String ref(String blobId) {
        return "{\"blobId\":\"" + blobId + "\",\"byteLength\":5,\"mediaType\":\"text/plain\",\"name\":\"a.txt\"}";
    }

    static Map<String, Object> attachment(String id, String blobId) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("project_id", "p1");
        m.put("caption", "c-" + id);
        m.put("file", blobId == null ? null : ref(blobId));
        return m;
    }

    static Map<String, Object> note(String id) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("project_id", "p1");
        m.put("title", "t");
        m.put("body", null);
        m.put("priority", null);
        m.put("done", null);
        return m;
    }

    private String push(SyncTestClient c, Map<String, Object> row) {
        String id = c.upsert("attachments", row, null);
        c.sync();
        return id;
    }

    private static String errorCode(PushResult r) {
        return ((OpResult.Error) SyncTestClient.firstResult(r)).code();
    }

    private List<String> referencing(String blobId) {
        return storage.readBlobReferences(partition, blobId, null, 100).await().atMost(WAIT).stream()
                .map(BlobReference::rowId)
                .toList();
    }

    private Map<String, Long> tableCounts() {
        Map<String, Long> counts = new TreeMap<>();
        for (Row r : pool.preparedQuery(
                        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1")
                .execute(Tuple.of(pgSchema))
                .await()
                .atMost(WAIT)) {
            String n = r.getString(0);
            counts.put(
                    n,
                    pool.query("SELECT count(*) FROM \"" + pgSchema + "\".\"" + n + "\"")
                            .execute()
                            .await()
                            .atMost(WAIT)
                            .iterator()
                            .next()
                            .getLong(0));
        }
        return counts;
    }

    @Test
    void aReferencedBlobMustBeStored() {
        SyncTestClient c = client();
        String present = upload(partition, "hello");
        String applied = push(c, attachment("a1", present));
        assertEquals(CommitStatus.APPLIED, c.result(applied).status());
        assertEquals(List.of("a1"), referencing(present));

        // a commit whose second operation references a blob never uploaded: rejected whole, nothing written
        String missing = BlobIds.compute("never uploaded".getBytes(StandardCharsets.UTF_8));
        Map<String, Long> before = tableCounts();
        long seq = storage.readPartition(partition).await().atMost(WAIT).maxCommitSeq();
        String rejected = c.commit(List.of(
                c.upsertOp("notes", note("n1"), null), c.upsertOp("attachments", attachment("a2", missing), null)));
        c.sync();
        PushResult r = c.result(rejected);
        assertEquals(CommitStatus.REJECTED, r.status());
        assertEquals(1, r.results().size());
        OpResult.Error e = assertInstanceOf(OpResult.Error.class, r.results().get(0));
        assertEquals(1, e.opIndex());
        assertEquals("blob.not_found", e.code());
        assertFalse(e.retryable());
        Map<String, Long> expected = new HashMap<>(before);
        Map<String, Long> after = tableCounts();
        expected.put("sync_push_results", before.get("sync_push_results") + 1);
        expected.put("sync_clients", after.get("sync_clients"));
        assertEquals(expected, after, "only the rejected result was persisted");
        assertEquals(seq, storage.readPartition(partition).await().atMost(WAIT).maxCommitSeq());
        assertTrue(storage.readAllRows(partition, "notes").await().atMost(WAIT).isEmpty());
        assertEquals(List.of(), referencing(missing));

        // the client's recovery: upload, then push again
        upload(partition, "never uploaded");
        String retried = c.commit(List.of(
                c.upsertOp("notes", note("n1"), null), c.upsertOp("attachments", attachment("a2", missing), null)));
        c.sync();
        assertEquals(CommitStatus.APPLIED, c.result(retried).status());
        assertEquals(List.of("a2"), referencing(missing));
    }

    @Test
    void onlyPresentNonNullBlobValuesAreChecked() {
        SyncTestClient c = client();
        String id = upload(partition, "bytes-1");
        assertEquals(
                CommitStatus.APPLIED, c.result(push(c, attachment("a1", id))).status());
        blobs.delete(partition, id).await().atMost(WAIT);
        // a sparse update without the blob_ref column references nothing
        assertEquals(
                CommitStatus.APPLIED,
                c.result(push(c, Map.of("id", "a1", "caption", "renamed"))).status());
        assertEquals(List.of("a1"), referencing(id));
        // re-presenting the (now missing) value is checked
        assertEquals("blob.not_found", errorCode(c.result(push(c, Map.of("id", "a1", "file", ref(id))))));
        // NULL means no attachment: no check, and the index entry goes
        Map<String, Object> cleared = new HashMap<>();
        cleared.put("id", "a1");
        cleared.put("file", null);
        assertEquals(CommitStatus.APPLIED, c.result(push(c, cleared)).status());
        assertEquals(List.of(), referencing(id));
        // deletes carry no payload and skip the check
        String other = upload(partition, "bytes-2");
        assertEquals(
                CommitStatus.APPLIED, c.result(push(c, attachment("a3", other))).status());
        blobs.delete(partition, other).await().atMost(WAIT);
        String deleted = c.delete("attachments", "a3");
        c.sync();
        assertEquals(CommitStatus.APPLIED, c.result(deleted).status());
        assertEquals(List.of(), referencing(other));
    }

    @Test
    void blobsOfAnotherPartitionDoNotCount() {
        SyncTestClient c = client();
        String elsewhere = upload("other-" + UUID.randomUUID(), "shared bytes");
        assertEquals("blob.not_found", errorCode(c.result(push(c, attachment("a1", elsewhere)))));
    }

    @Test
    void withoutABlobStoreEveryReferenceIsMissing() {
        SyncEngine bare = new SyncEngine(EngineParts.builder(
                        SchemaWindow.single(SyncScenariosContract.SCHEMA),
                        storage,
                        new InMemorySegmentStore(),
                        (a, p) -> Uni.createFrom().item(Map.of("project_id", List.of("*"))))
                .build());
        SyncTestClient c = client(bare, "bare-" + UUID.randomUUID());
        c.sync();
        String id = upload(partition, "stored but unknown to this engine");
        assertEquals("blob.not_found", errorCode(c.result(push(c, attachment("a1", id)))));
        assertEquals(
                CommitStatus.APPLIED, c.result(push(c, attachment("a2", null))).status());
    }

    @Test
    void theSweepDeletesOnlyUnreferencedBlobsPastTheGrace() {
        SyncTestClient c = client();
        String kept = upload(partition, "kept");
        String orphan = upload(partition, "orphan");
        push(c, attachment("a1", kept));
        long now = System.currentTimeMillis() + 1;
        BlobService patient = new BlobService(
                blobs,
                storage,
                (a, p) -> Uni.createFrom().nullItem(),
                SchemaWindow.single(SyncScenariosContract.SCHEMA),
                System::currentTimeMillis,
                1 << 20,
                Duration.ofHours(24));
        patient.sweepOrphans(now).await().atMost(WAIT);
        assertTrue(blobs.has(partition, orphan).await().atMost(WAIT), "inside the grace period");

        BlobService.SweepResult r = service.sweepOrphans(now).await().atMost(WAIT);
        assertTrue(r.deleted() >= 1 && r.referenced() >= 1, r.toString());
        assertFalse(blobs.has(partition, orphan).await().atMost(WAIT));
        assertTrue(blobs.has(partition, kept).await().atMost(WAIT), "a referenced blob is never swept");

        String deleted = c.delete("attachments", "a1");
        c.sync();
        assertEquals(CommitStatus.APPLIED, c.result(deleted).status());
        service.sweepOrphans(System.currentTimeMillis() + 1).await().atMost(WAIT);
        assertFalse(blobs.has(partition, kept).await().atMost(WAIT), "unreferenced once its last row is gone");
    }

    @Test
    void aSweepBetweenAPushsLookupAndItsCommitRejectsThePush() {
        SyncTestClient c = client();
        String id = upload(partition, "about to be swept");
        // the push's lookup finds the blob; right then a sweep (grace 0) deletes it as an orphan
        blobs.onHas = () -> service.sweepOrphans(System.currentTimeMillis() + 1);
        String pushed = push(c, attachment("a1", id));
        assertEquals(null, blobs.onHas);
        assertFalse(blobs.has(partition, id).await().atMost(WAIT), "the sweep did delete it");
        assertEquals("blob.not_found", errorCode(c.result(pushed)), "no dangling reference is committed");
        assertEquals(List.of(), referencing(id));
        assertTrue(storage.readAllRows(partition, "attachments")
                .await()
                .atMost(WAIT)
                .isEmpty());

        // re-uploaded after the sweep, the same push goes through
        upload(partition, "about to be swept");
        assertEquals(
                CommitStatus.APPLIED, c.result(push(c, attachment("a1", id))).status());
    }

    /** The sweep mark of {@code blobId}, read on another connection: {@code null} without one, else whether pending. */
    private Uni<Boolean> committedMark(String blobId) {
        return pool.preparedQuery("SELECT pending FROM \"" + pgSchema
                        + "\".sync_blob_sweeps WHERE partition_id = $1 AND blob_id = $2")
                .execute(Tuple.of(partition, blobId))
                .map(rs -> rs.size() == 0 ? null : rs.iterator().next().getBoolean(0));
    }

    /** Whether the partition row can be locked right now by another transaction ({@code NOWAIT}). */
    private Uni<Boolean> partitionLockFree() {
        return pool.withTransaction(conn -> conn.preparedQuery("SELECT 1 FROM \"" + pgSchema
                                + "\".sync_partitions WHERE partition_id = $1 FOR UPDATE NOWAIT")
                        .execute(Tuple.of(partition)))
                .map(rs -> true)
                .onFailure(e -> e instanceof PgException pe && "55P03".equals(pe.getSqlState()))
                .recoverWithItem(false);
    }

    /**
     * §5.9.2 / §5.9.6 ordering (issue #17): the sweep commits its marks before it deletes anything, and deletes
     * outside the partition lock. Observed from the store's delete: the blob's mark is committed (another
     * connection sees it) and pending, the partition lock is free, and a push referencing the blob — whose lookup
     * still finds it — is rejected rather than committing a reference to an object about to go.
     */
    @Test
    void theSweepCommitsItsMarksBeforeDeletingOutsideThePartitionLock() {
        SyncTestClient c = client();
        String id = upload(partition, "orphan, marked first");
        c.upsert("attachments", attachment("a1", id), null);
        Message racing = c.buildRequest();
        AtomicReference<Boolean> markAtDelete = new AtomicReference<>();
        AtomicReference<Boolean> lockFreeAtDelete = new AtomicReference<>();
        AtomicReference<List<Frame>> pushAtDelete = new AtomicReference<>();
        blobs.onDelete = blobId -> {
            blobs.onDelete = null;
            return committedMark(blobId)
                    .invoke(markAtDelete::set)
                    .chain(() -> partitionLockFree())
                    .invoke(lockFreeAtDelete::set)
                    .chain(() -> engine.handle(
                            new SyncRequestContext("alice", partition),
                            racing,
                            SyncEngine.Binding.HTTP,
                            Context.root()))
                    .invoke(pushAtDelete::set)
                    .replaceWithVoid();
        };
        BlobService.SweepResult r =
                service.sweepOrphans(System.currentTimeMillis() + 1).await().atMost(WAIT);
        assertEquals(1, r.deleted());
        assertEquals(Boolean.TRUE, markAtDelete.get(), "the mark was committed, pending, before the delete");
        assertEquals(Boolean.TRUE, lockFreeAtDelete.get(), "the delete ran outside the partition lock");
        PushResult raced = (PushResult) pushAtDelete.get().stream()
                .filter(f -> f instanceof PushResult)
                .findFirst()
                .orElseThrow();
        assertEquals("blob.not_found", errorCode(raced), "the push that still found the object is rejected");
        assertEquals(List.of(), referencing(id));
        assertEquals(Boolean.FALSE, committedMark(id).await().atMost(WAIT), "settled once deleted");
        assertFalse(blobs.has(partition, id).await().atMost(WAIT));
    }

    /** A delete that fails leaves the mark pending (pushes still refuse the blob); the next sweep deletes it. */
    @Test
    void aFailedDeleteIsRetriedByTheNextSweep() {
        SyncTestClient c = client();
        String id = upload(partition, "orphan, store down");
        blobs.onDelete = blobId -> {
            blobs.onDelete = null;
            return Uni.createFrom().failure(new IllegalStateException("object store unavailable"));
        };
        assertEquals(
                0,
                service.sweepOrphans(System.currentTimeMillis() + 1)
                        .await()
                        .atMost(WAIT)
                        .deleted());
        assertTrue(blobs.has(partition, id).await().atMost(WAIT), "still stored");
        assertEquals(Boolean.TRUE, committedMark(id).await().atMost(WAIT), "still pending");
        assertEquals(
                "blob.not_found",
                errorCode(c.result(push(c, attachment("a1", id)))),
                "a blob whose deletion is pending is not referenced");

        BlobService.SweepResult retried =
                service.sweepOrphans(System.currentTimeMillis() + 1).await().atMost(WAIT);
        assertTrue(retried.deleted() >= 1, retried.toString());
        assertFalse(blobs.has(partition, id).await().atMost(WAIT), "the next sweep deleted it");
        assertEquals(Boolean.FALSE, committedMark(id).await().atMost(WAIT));
    }
}
