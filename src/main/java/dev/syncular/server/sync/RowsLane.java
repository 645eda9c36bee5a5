package dev.syncular.server.sync;

import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.PullReads;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.sync.RowsPageEncoder.EncodedPage;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SubEnd;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The rows lane of a bootstrap (§5.2): at most {@code maxSnapshotPages} keyset pages of the snapshot at the
 * pin (§4.7) — fewer once the round's response budget is spent (§1.4, {@link Round#budgetSpent}) — each encoded as one rows segment ({@link RowsPageEncoder}) — large pages in batches on a worker
 * thread, never on the event loop — and delivered by {@link SegmentDelivery} (§5.4, §5.7); the
 * {@code SUB_END} carries the resume token when the table is not complete.
 */
final class RowsLane {
    private final SegmentDelivery delivery;

    RowsLane(SegmentDelivery delivery) {
        this.delivery = delivery;
    }

    Uni<List<Frame>> lane(
            Round round,
            PullHeader pull,
            TableSchema table,
            Map<String, List<String>> effective,
            String digest,
            long asOf,
            PartitionState state,
            String start,
            int pageRows,
            int maxPages,
            List<Frame> frames,
            List<StoredRow> firstRows) {
        return pages(round, pull, table, effective, digest, asOf, state, start, pageRows, maxPages, frames, firstRows)
                .map(nextCursor -> {
                    frames.add(new SubEnd(
                            asOf, nextCursor == null ? null : BootstrapResume.token(asOf, table.name(), nextCursor)));
                    return frames;
                });
    }

    /**
     * Emits pages from {@code after} (the first from {@code firstRows} when they were already read, else read
     * like the others); yields the row cursor to resume from, or {@code null} when the table is complete. A page
     * is read in keyset batches and encoded as they arrive ({@link #encodePage}); the next page is produced while
     * this one is published, so PostgreSQL reads, encoding and the segment store overlap. A loop of fresh
     * subscriptions, not a chain of nested operators: a nested chain keeps every earlier page reachable until
     * the whole request completes.
     */
    private Uni<String> pages(
            Round round,
            PullHeader pull,
            TableSchema table,
            Map<String, List<String>> effective,
            String digest,
            long asOf,
            PartitionState state,
            String after,
            int pageRows,
            int maxPages,
            List<Frame> frames,
            List<StoredRow> firstRows) {
        Map<String, Set<String>> scopes = EffectiveScopes.asSets(effective);
        int schemaVersion = round.clientSchema.version();
        if (round.shares.repeats(SnapshotShares.BOOTSTRAP, table.name(), digest)) {
            return sharedPages(
                    round, pull, table, scopes, digest, asOf, state, after, pageRows, maxPages, frames, firstRows);
        }
        return Uni.createFrom()
                .emitter(em -> new Object() {
                    void page(int index, String from, CompletableFuture<EncodedPage> produced) {
                        produced.whenComplete((p, failure) -> {
                            if (failure != null) {
                                em.fail(
                                        failure instanceof CompletionException && failure.getCause() != null
                                                ? failure.getCause()
                                                : failure);
                                return;
                            }
                            try {
                                int length = p.segment().bytes().length;
                                // §1.4: no page after the one that spends the round's response budget
                                boolean continues = p.next() != null
                                        && index + 1 < maxPages
                                        && !round.spentAfter(
                                                delivery.inline(pull, length) ? length : Round.DESCRIPTOR_BYTES);
                                CompletableFuture<EncodedPage> ahead = continues
                                        ? encodePage(
                                                        round.reads,
                                                        round.ctx.partition(),
                                                        table,
                                                        schemaVersion,
                                                        scopes,
                                                        p.next(),
                                                        pageRows,
                                                        null)
                                                .subscribeAsCompletionStage()
                                        : null;
                                delivery.emitSegment(
                                                round,
                                                pull,
                                                table,
                                                digest,
                                                asOf,
                                                state,
                                                from,
                                                p.next(),
                                                p.count(),
                                                p.segment())
                                        .subscribe()
                                        .with(
                                                frame -> {
                                                    add(round, frames, frame, p.count());
                                                    if (continues) {
                                                        page(index + 1, p.next(), ahead);
                                                    } else {
                                                        em.complete(p.next());
                                                    }
                                                },
                                                em::fail);
                            } catch (RuntimeException e) {
                                em.fail(e); // a callback that throws would otherwise leave the request hanging
                            }
                        });
                    }
                }.page(
                        0,
                        after,
                        encodePage(
                                        round.reads,
                                        round.ctx.partition(),
                                        table,
                                        schemaVersion,
                                        scopes,
                                        after,
                                        pageRows,
                                        firstRows)
                                .subscribeAsCompletionStage()));
    }

    /** A page as its sections receive it: the frame that delivers it, and where the next one starts. */
    private record Delivered(Frame frame, int count, String next) {}

    /**
     * {@link #pages} of a bootstrap its round's other sections name too (same table and effective scopes): each
     * page is read, encoded and delivered once for all of them ({@link SnapshotShares}), one after the other (no
     * read-ahead), and every section plans the frames it receives against the response budget (§1.4) as usual.
     */
    private Uni<String> sharedPages(
            Round round,
            PullHeader pull,
            TableSchema table,
            Map<String, Set<String>> scopes,
            String digest,
            long asOf,
            PartitionState state,
            String after,
            int pageRows,
            int maxPages,
            List<Frame> frames,
            List<StoredRow> firstRows) {
        int schemaVersion = round.clientSchema.version();
        return Uni.createFrom()
                .emitter(em -> new Object() {
                    void page(int index, String from) {
                        round.shares
                                .once(
                                        SnapshotShares.BOOTSTRAP,
                                        table.name(),
                                        digest,
                                        from == null ? "" : from,
                                        () -> encodePage(
                                                        round.reads,
                                                        round.ctx.partition(),
                                                        table,
                                                        schemaVersion,
                                                        scopes,
                                                        from,
                                                        pageRows,
                                                        index == 0 ? firstRows : null)
                                                .flatMap(p -> delivery.emitSegment(
                                                                round,
                                                                pull,
                                                                table,
                                                                digest,
                                                                asOf,
                                                                state,
                                                                from,
                                                                p.next(),
                                                                p.count(),
                                                                p.segment())
                                                        .map(frame -> new Delivered(frame, p.count(), p.next()))))
                                .subscribe()
                                .with(
                                        d -> {
                                            try {
                                                add(round, frames, d.frame(), d.count());
                                                // §1.4: no page after the one that spends the round's response budget
                                                if (d.next() != null && index + 1 < maxPages && !round.budgetSpent()) {
                                                    page(index + 1, d.next());
                                                } else {
                                                    em.complete(d.next());
                                                }
                                            } catch (RuntimeException e) {
                                                em.fail(e);
                                            }
                                        },
                                        em::fail);
                    }
                }.page(0, after));
    }

    /** A delivered page joins its section's frames and is planned against the response budget (§1.4). */
    private static void add(Round round, List<Frame> frames, Frame frame, int rows) {
        frames.add(frame);
        round.plan(frame);
        if (frame instanceof SegmentInline) {
            round.inlineRows += rows;
        }
    }

    /**
     * Keyset batch size of rows pages: a page of up to 50,000 rows is read and encoded 2,500 rows at a time. Two
     * batches of row objects are alive at once (about 1 MB each for ~100-byte rows): small enough to die young,
     * where 10,000-row batches were promoted by the young collections that caught them and filled the old
     * generation of a 192 MB heap within a few 100,000-row bootstraps.
     */
    private static final int PAGE_BATCH_ROWS = 2_500;

    /** Pages of at least this many rows are read in batches and encoded on a worker thread, never on the event loop. */
    private static final int WORKER_ENCODE_ROWS = 1000;

    /**
     * One rows page (§5.2) of at most {@code pageRows} rows after {@code after}, encoded on a worker thread
     * (never on the event loop): keyset batches of {@link #PAGE_BATCH_ROWS}, the next one read while this one
     * is encoded, so only about two batches of row objects are alive at a time (not the page's 50,000) and
     * the reads overlap the encoding. One row past the page is probed to tell whether more follow.
     * {@code preRead}, when given, is the page's rows read already ({@code pageRows + 1} at most).
     */
    private Uni<EncodedPage> encodePage(
            PullReads reads,
            String partition,
            TableSchema table,
            int schemaVersion,
            Map<String, Set<String>> scopes,
            String after,
            int pageRows,
            List<StoredRow> preRead) {
        if (pageRows < WORKER_ENCODE_ROWS) {
            // a small page: one read, encoded right on the event loop
            Uni<List<StoredRow>> rows = preRead != null
                    ? Uni.createFrom().item(preRead)
                    : reads.readSnapshotPage(partition, table.name(), scopes, after, pageRows + 1);
            return rows.map(r -> {
                RowsPageEncoder e = new RowsPageEncoder(table, schemaVersion);
                boolean more = r.size() > pageRows;
                e.addAll(more ? r.subList(0, pageRows) : r);
                return e.finish(more);
            });
        }
        AtomicReference<List<StoredRow>> handOver = new AtomicReference<>(preRead);
        return Uni.createFrom()
                .item(() -> {
                    RowsPageEncoder e = new RowsPageEncoder(table, schemaVersion);
                    List<StoredRow> given = handOver.getAndSet(null);
                    if (given != null) {
                        boolean more = given.size() > pageRows;
                        e.addAll(more ? given.subList(0, pageRows) : given);
                        return e.finish(more);
                    }
                    int requested = Math.min(PAGE_BATCH_ROWS, pageRows + 1);
                    CompletableFuture<List<StoredRow>> ahead = reads.readSnapshotPage(
                                    partition, table.name(), scopes, after, requested)
                            .subscribeAsCompletionStage();
                    while (true) {
                        List<StoredRow> batch = await(ahead);
                        boolean exhausted = batch.size() < requested;
                        int room = pageRows - e.count;
                        boolean more = batch.size() > room;
                        if (!more && !exhausted) {
                            // the next batch (at most the rest of the page plus the probe row) is read while this one
                            // is encoded
                            requested = Math.min(PAGE_BATCH_ROWS, room - batch.size() + 1);
                            ahead = reads.readSnapshotPage(
                                            partition,
                                            table.name(),
                                            scopes,
                                            batch.get(batch.size() - 1).rowId(),
                                            requested)
                                    .subscribeAsCompletionStage();
                        }
                        e.addAll(more ? batch.subList(0, room) : batch);
                        if (more || exhausted) {
                            return e.finish(more);
                        }
                    }
                })
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool());
    }

    /** Waits on a worker thread for a read the event loop completes. */
    private static <T> T await(CompletableFuture<T> read) {
        try {
            return read.get(5, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading a snapshot batch", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            throw cause instanceof RuntimeException r ? r : new IllegalStateException(cause);
        } catch (TimeoutException e) {
            throw new IllegalStateException("a snapshot batch read timed out", e);
        }
    }
}
