package dev.syncular.server.sync;

import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.segments.SegmentPublication;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentUrlSigner;
import dev.syncular.server.segments.SqliteImageBuilder;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.SnapshotRows;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.MediaType;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.SegmentRef;
import dev.syncular.server.wire.SubEnd;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.smallrye.mutiny.Uni;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.jboss.logging.Logger;

/**
 * The SQLite image lane of a bootstrap (§5.3), entered at the scope pin (§4.7): a snapshot of more than one
 * rows page is served as one whole-table image by reference (§5.4) — a stored, unexpired image of the same
 * reuse key when there is one, else one built here on a worker thread. Concurrent builds of one key coalesce;
 * an image over the store's segment size cap is remembered for a segment lifetime (§5.1) and the snapshot
 * served on the rows lane ({@link RowsLane}) meanwhile, as are snapshots of at most one page. A build that
 * fails (the SQLite file, the storage reads, the segment store) is logged and the same bootstrap continues on
 * the rows lane; its key is not built again for {@value #FAILED_BUILD_RETRY_MS} ms.
 */
final class ImageLane {
    /** The engine's log category, as before the image lane had its own class. */
    private static final Logger LOG = Logger.getLogger(SyncEngine.class);

    /** Keyset batch size of image builds. */
    private static final int IMAGE_BATCH_ROWS = 10_000;

    /** Byte bound of an image build's batch ({@link SnapshotRows}): two batches are alive at a time. */
    private static final long IMAGE_BATCH_BYTES = 4L << 20;

    private final SegmentStore segments;
    private final SyncLimits limits;
    private final LongSupplier clock;
    /** §5.3: whether, where and how many of one partition at once SQLite images are built here. */
    private final ImageBuilds builds;

    private final SegmentDelivery delivery;
    private final RowsLane rows;
    private final SyncObserver observer;
    /** Cold image builds in flight, by reuse key: concurrent bootstraps of one key share one build (§5.3). */
    private final ConcurrentHashMap<SegmentStore.ReuseKey, CompletableFuture<SegmentStore.Match>> imageBuilds =
            new ConcurrentHashMap<>();
    /**
     * Reuse keys served on the rows lane — the image exceeded the store's size cap, or its build failed — until
     * when (clock ms). Bounded: at {@link #MAX_ROWS_LANE_ONLY} entries the expired ones go, then all if none had
     * (a forgotten key only costs one more build attempt).
     */
    private final ConcurrentHashMap<SegmentStore.ReuseKey, Long> rowsLaneOnly = new ConcurrentHashMap<>();

    static final int MAX_ROWS_LANE_ONLY = 1024;
    /** How long a reuse key whose build failed stays on the rows lane before a build is tried again. */
    static final long FAILED_BUILD_RETRY_MS = 60_000;

    /** The span of an image build or the wait for one ({@code segment.build}). */
    private final Tracing tracing;

    ImageLane(
            SegmentStore segments,
            SyncLimits limits,
            LongSupplier clock,
            ImageBuilds builds,
            SegmentDelivery delivery,
            RowsLane rows,
            SyncObserver observer,
            Tracing tracing) {
        this.tracing = tracing;
        this.segments = segments;
        this.limits = limits;
        this.clock = clock;
        this.builds = builds;
        this.delivery = delivery;
        this.rows = rows;
        this.observer = observer;
    }

    /**
     * A bootstrap eligible for the image lane, pinned at {@code asOf} (its scope pin). A snapshot of more than
     * one rows page is served as one whole-table SQLite image by reference (§5.3): a stored, unexpired image of
     * the same reuse key when there is one, else a freshly built one; smaller snapshots stay on the rows lane at
     * the same pin.
     */
    Uni<List<Frame>> lane(
            RoundState round,
            PullHeader pull,
            TableSchema table,
            Map<String, List<String>> effective,
            String digest,
            long asOf,
            PartitionState state,
            int pageRows,
            int maxPages,
            List<Frame> frames) {
        SegmentStore.ReuseKey key = new SegmentStore.ReuseKey(
                round.ctx.partition(),
                state.logEpoch(),
                table.name(),
                round.clientSchema.version(),
                MediaType.SQLITE,
                digest,
                asOf);
        return segments.find(key, clock.getAsLong()).flatMap(stored -> {
            if (stored != null) {
                observer.imageServed(false);
                return Uni.createFrom().item(imageFrames(round, pull, table, asOf, digest, stored, frames));
            }
            // the first page decides the lane: read once for the round's sections naming the same snapshot
            Uni<SnapshotRows> first = round.shares.repeats(SnapshotShares.BOOTSTRAP, table.name(), digest)
                    ? round.shares.once(
                            SnapshotShares.BOOTSTRAP,
                            table.name(),
                            digest,
                            "\u0000image",
                            () -> readPage(round, table, effective, null, pageRows))
                    : readPage(round, table, effective, null, pageRows);
            return first.flatMap(firstRows -> {
                // a first page cut by its byte bound is a large snapshot too (an image holds it in a file)
                boolean fits = firstRows.rows().size() <= pageRows && !firstRows.cut();
                if (fits || !builds.enabled() || rowsLaneOnly(key)) {
                    return rows.lane(
                            round, pull, table, effective, digest, asOf, state, null, pageRows, maxPages, frames,
                            firstRows);
                }
                return tracing.span("segment.build", round.trace, SpanKind.INTERNAL, t -> {
                            Span.fromContext(t).setAttribute(Tracing.TABLE, table.name());
                            return buildImage(round, table, effective, key);
                        })
                        .onFailure()
                        .recoverWithItem(e -> {
                            LOG.warnf(
                                    e,
                                    "SQLite image build failed; serving the bootstrap on the rows lane (table %s)",
                                    table.name());
                            markRowsLaneOnly(key, clock.getAsLong() + FAILED_BUILD_RETRY_MS, clock.getAsLong());
                            return null;
                        })
                        .flatMap(built -> built != null
                                ? Uni.createFrom().item(imageFrames(round, pull, table, asOf, digest, built, frames))
                                : rows.lane(
                                        round, pull, table, effective, digest, asOf, state, null, pageRows, maxPages,
                                        frames, firstRows));
            });
        });
    }

    /**
     * The snapshot page after {@code after} ({@code pageRows + 1} rows: one more tells whether more follow), under
     * the rows lane's byte bound ({@link RowsLane#pageBytes}), so the rows lane can take it as its first page.
     */
    private Uni<SnapshotRows> readPage(
            RoundState round, TableSchema table, Map<String, List<String>> effective, String after, int pageRows) {
        return round.reads.readSnapshotPage(
                round.ctx.partition(),
                table.name(),
                EffectiveScopes.asSets(effective),
                after,
                pageRows + 1,
                RowsLane.pageBytes(round, 0));
    }

    private List<Frame> imageFrames(
            RoundState round,
            PullHeader pull,
            TableSchema table,
            long asOf,
            String digest,
            SegmentStore.Match image,
            List<Frame> frames) {
        SegmentUrlSigner.SignedUrl url = delivery.url(pull, image.segmentId(), digest, round, clock.getAsLong());
        // §5.3: whole-table — both cursors absent; never inlined
        SegmentRef ref = new SegmentRef(
                image.segmentId(),
                MediaType.SQLITE,
                table.name(),
                image.byteLength(),
                image.publication().rowCount(),
                asOf,
                digest,
                null,
                null,
                url == null ? null : url.url(),
                url == null ? null : url.expiresAtMs());
        frames.add(ref);
        round.plan(ref);
        frames.add(new SubEnd(asOf, null));
        return frames;
    }

    /**
     * Builds, hashes and publishes the image of {@code key} on a worker thread (never on the event loop),
     * streaming keyset pages into the SQLite file: the table is never held in memory. Concurrent requests for
     * one key in this process join one build; a request that goes away does not cancel it for the others.
     * A {@code null} item: the image exceeds the store's {@link SegmentStore#maxSegmentBytes()}, or the partition has
     * its share of builds running ({@link ImageBuilds#perPartition()}); the bootstrap takes the rows lane.
     */
    private Uni<SegmentStore.Match> buildImage(
            RoundState round, TableSchema table, Map<String, List<String>> effective, SegmentStore.ReuseKey key) {
        CompletableFuture<SegmentStore.Match> mine = new CompletableFuture<>();
        CompletableFuture<SegmentStore.Match> running;
        synchronized (imageBuilds) {
            running = imageBuilds.get(key);
            if (running == null
                    && partitionBuilds(key.partition()) >= builds.perPartition()
                    && builds.perPartition() > 0) {
                // issue 45: the partition has its share of builds running; this bootstrap takes the rows lane
                observer.imageBuildDeferred();
                return Uni.createFrom().nullItem();
            }
            if (running == null) {
                imageBuilds.put(key, mine);
            }
        }
        if (running != null) {
            return Uni.createFrom().completionStage(running);
        }
        Map<String, Set<String>> scopes = EffectiveScopes.asSets(effective);
        String partition = round.ctx.partition();
        Uni.createFrom()
                .item(() -> {
                    Path file = null;
                    long started = System.nanoTime();
                    try {
                        file = Files.createTempFile("syncular-image-", ".sqlite");
                        // the next keyset batch is read while this one is written (one batch ahead, never more)
                        Function<String, CompletableFuture<SnapshotRows>> read = after -> round.reads
                                .readSnapshotPage(
                                        partition, table.name(), scopes, after, IMAGE_BATCH_ROWS, IMAGE_BATCH_BYTES)
                                .subscribeAsCompletionStage();
                        List<CompletableFuture<SnapshotRows>> ahead = new ArrayList<>(List.of(read.apply(null)));
                        SqliteImageBuilder.Result result = SqliteImageBuilder.build(
                                file, table, key.schemaVersion(), key.asOfCommitSeq(), key.scopeDigest(), () -> {
                                    SnapshotRows page = ahead.get(0).get(5, TimeUnit.MINUTES);
                                    ahead.set(
                                            0,
                                            page.rows().size() < IMAGE_BATCH_ROWS && !page.cut()
                                                    ? CompletableFuture.completedFuture(SnapshotRows.NONE)
                                                    : read.apply(page.lastRowId()));
                                    return page.rows();
                                });
                        long built = System.nanoTime();
                        BuiltImage image = new BuiltImage(
                                file,
                                "sha256:" + sha256Hex(file),
                                result.rowCount(),
                                result.byteLength(),
                                (built - started) / 1_000_000,
                                (System.nanoTime() - built) / 1_000_000);
                        return image;
                    } catch (IOException e) {
                        deleteQuietly(file);
                        throw new UncheckedIOException(e);
                    } catch (RuntimeException e) {
                        deleteQuietly(file);
                        throw e;
                    }
                })
                .runSubscriptionOn(builds.executor())
                .flatMap(built -> {
                    long now = clock.getAsLong();
                    if (built.byteLength() > segments.maxSegmentBytes()) {
                        // too large for this store: remembered for a TTL, served on the rows lane meanwhile
                        deleteQuietly(built.file());
                        markRowsLaneOnly(key, now + limits.segmentTtlMs(), now);
                        return Uni.createFrom().<SegmentStore.Match>nullItem();
                    }
                    SegmentPublication publication = new SegmentPublication(
                            key.partition(),
                            key.logEpoch(),
                            key.table(),
                            key.schemaVersion(),
                            MediaType.SQLITE,
                            key.scopeDigest(),
                            key.asOfCommitSeq(),
                            null,
                            null,
                            built.rowCount(),
                            now,
                            now + limits.segmentTtlMs());
                    long publishing = System.nanoTime();
                    return segments.publishFile(built.segmentId(), built.file(), publication)
                            .invoke(v -> LOG.infof(
                                    "SQLite image built: %d rows, %d bytes; read+write %d ms, hash %d ms,"
                                            + " publish %d ms",
                                    built.rowCount(),
                                    built.byteLength(),
                                    built.buildMs(),
                                    built.hashMs(),
                                    (System.nanoTime() - publishing) / 1_000_000))
                            .map(v -> new SegmentStore.Match(built.segmentId(), built.byteLength(), publication))
                            .eventually(() -> deleteQuietly(built.file()));
                })
                .subscribe()
                .with(
                        match -> {
                            if (match != null) {
                                observer.imageServed(true);
                            }
                            imageBuilds.remove(key, mine);
                            mine.complete(match);
                        },
                        failure -> {
                            imageBuilds.remove(key, mine);
                            mine.completeExceptionally(failure);
                        });
        return Uni.createFrom().completionStage(mine);
    }

    /** Builds of {@code partition} running on this pod (called holding {@link #imageBuilds}' lock). */
    private int partitionBuilds(String partition) {
        int n = 0;
        for (SegmentStore.ReuseKey k : imageBuilds.keySet()) {
            if (k.partition().equals(partition)) {
                n++;
            }
        }
        return n;
    }

    /** Serves {@code key} on the rows lane until {@code untilMs}; the memo stays within its bound. */
    private void markRowsLaneOnly(SegmentStore.ReuseKey key, long untilMs, long now) {
        if (rowsLaneOnly.size() >= MAX_ROWS_LANE_ONLY) {
            rowsLaneOnly.values().removeIf(until -> until <= now);
            if (rowsLaneOnly.size() >= MAX_ROWS_LANE_ONLY) {
                rowsLaneOnly.clear();
            }
        }
        rowsLaneOnly.put(key, untilMs);
    }

    private boolean rowsLaneOnly(SegmentStore.ReuseKey key) {
        Long until = rowsLaneOnly.get(key);
        if (until == null) {
            return false;
        }
        if (until <= clock.getAsLong()) {
            rowsLaneOnly.remove(key, until);
            return false;
        }
        return true;
    }

    private record BuiltImage(Path file, String segmentId, long rowCount, long byteLength, long buildMs, long hashMs) {}

    private static String sha256Hex(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void deleteQuietly(Path file) {
        if (file != null) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // a temp file left behind is harmless
            }
        }
    }
}
