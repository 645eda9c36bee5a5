package dev.syncular.server.sync;

import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.PullReads;
import dev.syncular.server.storage.SnapshotRows;
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
 * pin (§4.7) — fewer once the round's response budget is spent (§1.4, {@link RoundState#budgetSpent}) — each encoded as one rows segment ({@link RowsPageEncoder}) — large pages in batches on a worker
 * thread, never on the event loop — and delivered by {@link SegmentDelivery} (§5.4, §5.7); the
 * {@code SUB_END} carries the resume token when the table is not complete.
 */
final class RowsLane {
    private final SegmentDelivery delivery;

    RowsLane(SegmentDelivery delivery) {
        this.delivery = delivery;
    }

    Uni<List<Frame>> lane(
            RoundState round,
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
            SnapshotRows firstRows) {
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
            RoundState round,
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
            SnapshotRows firstRows) {
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
                                                delivery.inline(pull, length) ? length : RoundState.DESCRIPTOR_BYTES);
                                CompletableFuture<EncodedPage> ahead = continues
                                        ? encodePage(
                                                        round.reads,
                                                        round.ctx.partition(),
                                                        table,
                                                        schemaVersion,
                                                        scopes,
                                                        p.next(),
                                                        pageRows,
                                                        null,
                                                        pageBytes(
                                                                round,
                                                                delivery.inline(pull, length)
                                                                        ? length
                                                                        : RoundState.DESCRIPTOR_BYTES))
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
                                        firstRows,
                                        pageBytes(round, 0))
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
            RoundState round,
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
            SnapshotRows firstRows) {
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
                                                        index == 0 ? firstRows : null,
                                                        pageBytes(round, 0))
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
    private static void add(RoundState round, List<Frame> frames, Frame frame, int rows) {
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

    /**
     * A rows page holds at most this many bytes of rows ({@link SnapshotRows#bytes}), and one row more, so a
     * scope of huge rows cannot make each concurrent bootstrap hold a page of many megabytes (docs/BENCHMARKS.md,
     * "Noisy neighbour"). Pages of small rows reach their row limit first.
     */
    static final long PAGE_BYTES = 8L << 20;

    /**
     * The byte bound of a page read when {@code planned} more bytes are about to be planned: what is left of the
     * round's response budget (§1.4; the page that spends it is the last), at most {@link #PAGE_BYTES}, at least 1
     * (one row, whatever its size).
     */
    static long pageBytes(RoundState round, long planned) {
        return Math.max(1, Math.min(PAGE_BYTES, round.responseBudget - round.responseBytes - planned));
    }

    /** Pages of at least this many rows are read in batches and encoded on a worker thread, never on the event loop. */
    private static final int WORKER_ENCODE_ROWS = 1000;

    /**
     * One rows page (§5.2) of at most {@code pageRows} rows and about {@code pageBytes} bytes after {@code after},
     * encoded on a worker thread (never on the event loop): keyset batches of {@link #PAGE_BATCH_ROWS}, the next one
     * read while this one is encoded, so only about two batches of row objects are alive at a time (not the page's
     * 50,000) and the reads overlap the encoding. One row past the page is probed to tell whether more follow, and a
     * read that reaches its byte bound says so itself ({@link SnapshotRows#cut}). {@code preRead}, when given, is the
     * page's rows read already ({@code pageRows + 1} at most, under the same byte bound).
     */
    private Uni<EncodedPage> encodePage(
            PullReads reads,
            String partition,
            TableSchema table,
            int schemaVersion,
            Map<String, Set<String>> scopes,
            String after,
            int pageRows,
            SnapshotRows preRead,
            long pageBytes) {
        if (pageRows < WORKER_ENCODE_ROWS) {
            // a small page: one read, encoded right on the event loop
            Uni<SnapshotRows> rows = preRead != null
                    ? Uni.createFrom().item(preRead)
                    : reads.readSnapshotPage(partition, table.name(), scopes, after, pageRows + 1, pageBytes);
            return rows.map(r -> encodeWhole(table, schemaVersion, pageRows, r));
        }
        AtomicReference<SnapshotRows> handOver = new AtomicReference<>(preRead);
        return Uni.createFrom()
                .item(() -> {
                    SnapshotRows given = handOver.getAndSet(null);
                    if (given != null) {
                        return encodeWhole(table, schemaVersion, pageRows, given);
                    }
                    RowsPageEncoder e = new RowsPageEncoder(table, schemaVersion);
                    long left = pageBytes;
                    int requested = Math.min(PAGE_BATCH_ROWS, pageRows + 1);
                    CompletableFuture<SnapshotRows> ahead = reads.readSnapshotPage(
                                    partition, table.name(), scopes, after, requested, left)
                            .subscribeAsCompletionStage();
                    while (true) {
                        SnapshotRows batch = await(ahead);
                        List<StoredRow> rows = batch.rows();
                        boolean exhausted = rows.size() < requested && !batch.cut();
                        int room = pageRows - e.count;
                        boolean more = rows.size() > room || batch.cut();
                        left -= batch.bytes();
                        if (!more && !exhausted) {
                            // the next batch (at most the rest of the page plus the probe row) is read while this one
                            // is encoded
                            requested = Math.min(PAGE_BATCH_ROWS, room - rows.size() + 1);
                            ahead = reads.readSnapshotPage(
                                            partition, table.name(), scopes, batch.lastRowId(), requested, left)
                                    .subscribeAsCompletionStage();
                        }
                        e.addAll(rows.size() > room ? rows.subList(0, room) : rows);
                        if (more || exhausted) {
                            return e.finish(more);
                        }
                    }
                })
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool());
    }

    /** A page read whole ({@code pageRows + 1} rows at most): more follow when the probe row came, or it was cut. */
    private static EncodedPage encodeWhole(TableSchema table, int schemaVersion, int pageRows, SnapshotRows read) {
        RowsPageEncoder e = new RowsPageEncoder(table, schemaVersion);
        List<StoredRow> rows = read.rows();
        boolean probed = rows.size() > pageRows;
        e.addAll(probed ? rows.subList(0, pageRows) : rows);
        return e.finish(probed || read.cut());
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
