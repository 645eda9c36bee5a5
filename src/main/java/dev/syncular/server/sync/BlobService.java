package dev.syncular.server.sync;

import dev.syncular.server.blobs.BlobContent;
import dev.syncular.server.blobs.BlobInfo;
import dev.syncular.server.blobs.BlobKey;
import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.blobs.PresignedUrl;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.BlobReference;
import dev.syncular.server.storage.SyncStorage;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;
import org.jboss.logging.Logger;

/**
 * The blob routes' protocol logic (§5.9), independent of HTTP: upload (§5.9.3), the upload grant, the
 * row-derived download authorization (§5.9.5) and the orphan sweep (§5.9.2). The push-time existence check
 * (§5.9.6) lives in the engine's push path.
 *
 * <p>Errors are §10 {@link SyncError}s with static messages; ids travel in {@code details}. A partition or
 * actor the storage cannot key on is refused first ({@link SyncRequestContext#unstorable}).
 */
public final class BlobService {
    private static final Logger LOG = Logger.getLogger(BlobService.class);
    /** Referencing rows read per index page while looking for one the actor may see. */
    static final int REFERENCE_PAGE = 256;
    /** Sweep: stored blobs scanned per store page, and marked per partition transaction. */
    static final int SWEEP_PAGE = 200;

    static final int SWEEP_BATCH = 100;
    /** Sweep marks outlive any push's lookup-to-lock window by far (§5.9.6 re-check). */
    static final long SWEEP_MARK_RETENTION_MS = Duration.ofHours(1).toMillis();

    private final BlobStore store;
    private final SyncStorage storage;
    private final ScopeResolver resolver;
    private final SchemaWindow window;
    private final LongSupplier clock;
    private final long maxBytes;
    private final Duration orphanGrace;

    /**
     * @param maxBytes    the §5.9.3 size cap (uploads and grants above it get 413 {@code blob.too_large})
     * @param orphanGrace how long an unreferenced blob is kept after its upload (§5.9.2)
     */
    public BlobService(
            BlobStore store,
            SyncStorage storage,
            ScopeResolver resolver,
            SchemaWindow window,
            LongSupplier clockMs,
            long maxBytes,
            Duration orphanGrace) {
        this.store = Objects.requireNonNull(store, "store");
        this.storage = Objects.requireNonNull(storage, "storage");
        this.resolver = Objects.requireNonNull(resolver, "resolver");
        this.window = Objects.requireNonNull(window, "window");
        this.clock = Objects.requireNonNull(clockMs, "clockMs");
        this.maxBytes = maxBytes;
        this.orphanGrace = Objects.requireNonNull(orphanGrace, "orphanGrace");
    }

    public long maxBytes() {
        return maxBytes;
    }

    /** {@code blob.too_large} for a declared or received size above the cap. */
    public SyncError tooLarge(String blobId, long byteLength) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("blobId", blobId);
        if (byteLength >= 0) {
            details.put("byteLength", byteLength);
        }
        details.put("maxBytes", maxBytes);
        return new SyncError(ErrorCode.BLOB_TOO_LARGE, "blob exceeds the size limit", details);
    }

    // ------------------------------------------------------------------------------------------- upload

    /**
     * §5.9.3 direct upload of verified bytes: host authentication only (not scope-bearing). Idempotent — an
     * existing blob is left as it is.
     */
    public Uni<BlobInfo> upload(SyncRequestContext ctx, BlobContent content, String mediaType) {
        if (ctx.unstorable() != null) {
            return Uni.createFrom().failure(ctx.unstorable());
        }
        if (content.byteLength() > maxBytes) {
            return Uni.createFrom().failure(tooLarge(content.blobId(), content.byteLength()));
        }
        long now = clock.getAsLong();
        // §5.9.6: the verified bytes entitle the uploader to reference the blob (recorded after the object exists)
        return store.put(ctx.partition(), content, mediaType, now)
                .call(info -> storage.recordBlobUpload(ctx.partition(), content.blobId(), ctx.actorId(), now));
    }

    /** The answer to an upload-grant request (§5.9.3). */
    public sealed interface Grant {
        /** The blob is already stored: skip the PUT. */
        record Present() implements Grant {}

        /** A presigned single PUT bound to the declared length. */
        record Url(PresignedUrl url) implements Grant {}

        /** This store cannot presign: upload through {@code PUT <mount>/blobs/{blobId}}. */
        record Direct() implements Grant {}
    }

    /**
     * §5.9.3 upload grant: any authenticated actor within the size cap, checked against the declared length
     * before anything is minted. A stored blob answers {@code present} only to an actor already entitled to it
     * ({@link #entitled}); any other actor is sent to the direct PUT, whose verified bytes entitle it — answering
     * {@code present} would leave it unable to reference the blob (§5.9.6), and presigning a PUT over an existing
     * object would let unverified bytes replace it. A grant for an absent blob records the actor as its uploader
     * (the presigned PUT carries no host authentication, so the grant is where the server learns who places the
     * bytes).
     */
    public Uni<Grant> grant(SyncRequestContext ctx, String blobId, long byteLength) {
        if (ctx.unstorable() != null) {
            return Uni.createFrom().failure(ctx.unstorable());
        }
        if (byteLength > maxBytes) {
            return Uni.createFrom().failure(tooLarge(blobId, byteLength));
        }
        return store.has(ctx.partition(), blobId).flatMap(present -> {
            if (present) {
                return entitled(ctx, blobId).map(ok -> ok ? new Grant.Present() : new Grant.Direct());
            }
            if (!store.canPresign()) {
                return Uni.createFrom().item(new Grant.Direct());
            }
            long now = clock.getAsLong();
            return storage.recordBlobUpload(ctx.partition(), blobId, ctx.actorId(), now)
                    .flatMap(v -> store.presignPut(ctx.partition(), blobId, byteLength, now))
                    .map(Grant.Url::new);
        });
    }

    /**
     * §5.9.6 entitlement to reference a stored blob: the actor uploaded it ({@link SyncStorage#recordBlobUpload})
     * or may see a row that references it (the §5.9.5 rule). Knowing a blob id alone grants nothing.
     */
    Uni<Boolean> entitled(SyncRequestContext ctx, String blobId) {
        return storage.readBlobsUploadedBy(ctx.partition(), ctx.actorId(), List.of(blobId))
                .flatMap(mine -> !mine.isEmpty() ? Uni.createFrom().item(true) : authorized(ctx, blobId));
    }

    // ------------------------------------------------------------------------------------------- download

    /** An authorized download (§5.9.5). */
    public sealed interface Download {
        /**
         * Served by the sync server: what the store knows about the blob and its bytes as a stream of chunks,
         * read from the store as the response is written (never whole in memory).
         */
        record Stream(BlobInfo info, Multi<byte[]> chunks) implements Download {}

        /** Always-issue: a presigned GET; the sync server serves no bytes. */
        record Url(PresignedUrl url) implements Download {}
    }

    /**
     * §5.9.5: {@code blob.not_found} when no object is stored; then the row-derived authorization —
     * {@code blob.forbidden} unless a referencing row is visible to the actor; then a presigned GET when the
     * store presigns, else the bytes, streamed.
     */
    public Uni<Download> download(SyncRequestContext ctx, String blobId) {
        if (ctx.unstorable() != null) {
            return Uni.createFrom().failure(ctx.unstorable());
        }
        String partition = ctx.partition();
        return store.describe(partition, blobId).flatMap(info -> {
            if (info == null) {
                return Uni.createFrom().failure(notFound(blobId));
            }
            return authorized(ctx, blobId).flatMap(ok -> {
                if (!ok) {
                    return Uni.createFrom()
                            .failure(new SyncError(
                                    ErrorCode.BLOB_FORBIDDEN,
                                    "no row referencing the blob is visible to the actor",
                                    Map.of("blobId", blobId)));
                }
                if (store.canPresign()) {
                    return store.presignGet(partition, blobId, clock.getAsLong())
                            .map(Download.Url::new);
                }
                return Uni.createFrom().item(new Download.Stream(info, store.read(partition, blobId)));
            });
        });
    }

    private static SyncError notFound(String blobId) {
        return new SyncError(ErrorCode.BLOB_NOT_FOUND, "blob not found", Map.of("blobId", blobId));
    }

    /**
     * The §5.9.5 rule: the actor's allowed scopes are resolved once; the first referencing row whose stored
     * scopes pass the §3.4 check for every scope variable of its table authorizes. A failing resolver, no
     * entries, or no passing row deny.
     */
    Uni<Boolean> authorized(SyncRequestContext ctx, String blobId) {
        return Uni.createFrom()
                .deferred(() -> resolver.resolveScopes(ctx))
                .onFailure()
                .recoverWithNull()
                .flatMap(allowed -> allowed == null
                        ? Uni.createFrom().item(false)
                        : firstVisible(ctx.partition(), blobId, allowed, null));
    }

    /** Whether a row of the partition referencing {@code blobId} passes the §3.4 check under {@code allowed}. */
    static Uni<Boolean> visibleReference(
            SyncStorage storage,
            CompiledSchema schema,
            String partition,
            String blobId,
            Map<String, List<String>> allowed) {
        return firstVisible(storage, schema, partition, blobId, allowed, null);
    }

    private Uni<Boolean> firstVisible(
            String partition, String blobId, Map<String, List<String>> allowed, BlobReference after) {
        return firstVisible(storage, window.current(), partition, blobId, allowed, after);
    }

    private static Uni<Boolean> firstVisible(
            SyncStorage storage,
            CompiledSchema schema,
            String partition,
            String blobId,
            Map<String, List<String>> allowed,
            BlobReference after) {
        return storage.readBlobReferences(partition, blobId, after, REFERENCE_PAGE)
                .flatMap(refs -> {
                    for (BlobReference ref : refs) {
                        TableSchema table = schema.table(ref.table());
                        if (table != null && EffectiveScopes.authorizesStoredScopes(table, ref.scopes(), allowed)) {
                            return Uni.createFrom().item(true);
                        }
                    }
                    return refs.size() < REFERENCE_PAGE
                            ? Uni.createFrom().item(false)
                            : firstVisible(storage, schema, partition, blobId, allowed, refs.get(refs.size() - 1));
                });
    }

    // ------------------------------------------------------------------------------------------- sweep

    /** One orphan sweep's outcome. */
    public record SweepResult(int candidates, int referenced, int deleted) {
        SweepResult plus(SweepResult o) {
            return new SweepResult(candidates + o.candidates, referenced + o.referenced, deleted + o.deleted);
        }
    }

    /**
     * §5.9.2 orphan sweep: deletes every stored blob uploaded more than {@code orphanGrace} before
     * {@code nowMs} that no row references. Per partition and batch, in this order:
     *
     * <ol>
     *   <li>under the partition's lock (a short partition transaction, no object-store call), the reference
     *       index is re-read (never deleting a blob a committed row references) and the orphans are recorded as
     *       sweep marks, pending; the transaction commits. A push that looked a blob up before the mark is
     *       rejected under its lock from then on (§5.9.6: a mark above its lookup, or a pending one), so no push
     *       commits a reference to an object about to go;
     *   <li>after that commit, outside any lock, the objects are deleted one by one (deleting an absent object is
     *       harmless, so a repeat is too);
     *   <li>the deleted ones' marks are settled (no longer pending). A failed delete stays pending and its blob
     *       stays listed: the next sweep marks and deletes it again.
     * </ol>
     *
     * A sweep first forgets every mark older than {@link #SWEEP_MARK_RETENTION_MS} (a pending one left by a
     * sweep that stopped between deleting and settling included). A partition with blobs but no registry entry
     * yet is registered first, so it has a lock to take.
     */
    public Uni<SweepResult> sweepOrphans(long nowMs) {
        long cutoff = nowMs - orphanGrace.toMillis();
        return storage.forgetBlobSweeps(nowMs - SWEEP_MARK_RETENTION_MS)
                .flatMap(forgotten -> sweepFrom(cutoff, nowMs, null, new SweepResult(0, 0, 0)));
    }

    private Uni<SweepResult> sweepFrom(long cutoff, long nowMs, String cursor, SweepResult sofar) {
        return store.listCreatedBefore(cutoff, cursor, SWEEP_PAGE).flatMap(page -> {
            Map<String, List<String>> byPartition = new LinkedHashMap<>();
            for (BlobKey k : page.blobs()) {
                byPartition
                        .computeIfAbsent(k.partition(), p -> new ArrayList<>())
                        .add(k.blobId());
            }
            List<Map.Entry<String, List<String>>> batches = new ArrayList<>();
            for (Map.Entry<String, List<String>> e : byPartition.entrySet()) {
                List<String> ids = e.getValue();
                for (int i = 0; i < ids.size(); i += SWEEP_BATCH) {
                    batches.add(Map.entry(e.getKey(), ids.subList(i, Math.min(ids.size(), i + SWEEP_BATCH))));
                }
            }
            return sweepBatches(batches, 0, nowMs, sofar)
                    .flatMap(done -> page.next() == null
                            ? Uni.createFrom().item(done)
                            : sweepFrom(cutoff, nowMs, page.next(), done));
        });
    }

    private Uni<SweepResult> sweepBatches(
            List<Map.Entry<String, List<String>>> batches, int i, long nowMs, SweepResult sofar) {
        if (i == batches.size()) {
            return Uni.createFrom().item(sofar);
        }
        String partition = batches.get(i).getKey();
        List<String> ids = batches.get(i).getValue();
        return sweepPartition(partition, ids, nowMs).flatMap(r -> sweepBatches(batches, i + 1, nowMs, sofar.plus(r)));
    }

    private Uni<SweepResult> sweepPartition(String partition, List<String> candidates, long nowMs) {
        return storage.readPartition(partition)
                .flatMap(state ->
                        state != null ? Uni.createFrom().item(state) : storage.touchPartition(partition, nowMs))
                .flatMap(state -> storage.inPartitionTransaction(
                        partition,
                        tx -> tx.referencedBlobIds(candidates).flatMap(referenced -> {
                            List<String> orphans = new ArrayList<>(candidates);
                            orphans.removeAll(referenced);
                            return tx.recordBlobSweep(orphans, nowMs)
                                    .map(mark -> new Marked(referenced.size(), orphans, mark));
                        })))
                // the marks are committed: only now may the objects go, outside the partition lock
                .flatMap(marked -> deleteAll(partition, marked.orphans(), 0, new ArrayList<>())
                        .flatMap(deleted -> storage.settleBlobSweep(partition, marked.mark(), deleted)
                                .replaceWith(new SweepResult(candidates.size(), marked.referenced(), deleted.size()))));
    }

    /** What one sweep transaction committed: the orphans it marked under {@code mark}. */
    private record Marked(int referenced, List<String> orphans, long mark) {}

    /** Deletes one by one, collecting the deleted ids; a failed delete is logged and left for the next sweep. */
    private Uni<List<String>> deleteAll(String partition, List<String> ids, int i, List<String> deleted) {
        if (i == ids.size()) {
            return Uni.createFrom().item(deleted);
        }
        String blobId = ids.get(i);
        return store.delete(partition, blobId)
                .map(ok -> deleted.add(blobId))
                .onFailure()
                .recoverWithItem(e -> {
                    LOG.warnf(
                            e,
                            "orphan sweep could not delete a blob of partition %s; the next sweep retries",
                            partition);
                    return false;
                })
                .flatMap(ok -> deleteAll(partition, ids, i + 1, deleted));
    }
}
