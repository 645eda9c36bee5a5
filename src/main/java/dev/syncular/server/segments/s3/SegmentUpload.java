package dev.syncular.server.segments.s3;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.segments.SegmentCollisionException;
import dev.syncular.server.segments.SegmentPublication;
import dev.syncular.server.segments.SegmentStore.ReuseKey;
import dev.syncular.server.segments.s3.PublicationRecords.Versioned;
import dev.syncular.server.wire.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import software.amazon.awssdk.core.async.AsyncRequestBody;

/**
 * The upload path of one publication (§5.1): the publication merged into the entry's record with a conditional
 * write (re-read and merged again when another writer won, after a back-off on a timer), then the bytes object
 * when the entry is new or its bytes are gone, then the §5.3 whole-table reuse pointer.
 */
final class SegmentUpload {
    private static final int CAS_ATTEMPTS = 32;

    private final S3Objects objects;
    private final SegmentObjectKeys keys;
    private final PublicationRecords records;

    /** Test seam: runs between reading a record and writing it back (to lose a conditional-write race). */
    volatile Runnable beforeRecordWrite;

    SegmentUpload(S3Objects objects, SegmentObjectKeys keys, PublicationRecords records) {
        this.objects = objects;
        this.keys = keys;
        this.records = records;
    }

    /** Publishes the entry; runs in the entry's turn ({@link EntryTurns}). */
    CompletableFuture<Void> publishEntry(
            String segmentId, long length, SegmentPublication publication, Supplier<AsyncRequestBody> body) {
        // The record is written first: a sweep that marked this entry is over (or was taken over), so bytes
        // put now are never deleted underneath the new publication. A live entry's bytes may have been
        // removed by a lifecycle rule: put them back.
        return recordPublication(segmentId, length, publication, 0)
                .thenCompose(created -> created
                        ? CompletableFuture.completedFuture(true)
                        : objects.exists(keys.objectKey(segmentId)).thenApply(e -> !e))
                .thenCompose(putBytes ->
                        putBytes ? objects.putBytes(keys.objectKey(segmentId), length, body.get()) : S3Objects.DONE)
                .thenCompose(v -> {
                    if (publication.rowCursor() != null || publication.nextRowCursor() != null) {
                        return S3Objects.DONE;
                    }
                    ObjectNode pointer = Json.object().put("segmentId", segmentId);
                    return objects.putJson(keys.findKey(ReuseKey.of(publication)), PublicationRecords.write(pointer));
                });
    }

    /**
     * Merges the publication into the entry's record with a conditional write, re-reading and merging again when
     * another writer won; {@code true} when this write created the entry (no live record before).
     */
    private CompletableFuture<Boolean> recordPublication(
            String segmentId, long length, SegmentPublication publication, int attempt) {
        if (attempt == CAS_ATTEMPTS) {
            return CompletableFuture.failedFuture(
                    new IllegalStateException("segment record kept changing concurrently"));
        }
        return records.readRecord(segmentId).thenCompose(found -> {
            Versioned rec = found;
            if (rec != null && rec.deleting()) {
                if (System.currentTimeMillis() - rec.deletingSinceMs() < PublicationRecords.STALE_DELETION_MS) {
                    // a sweep is deleting this entry right now: let it finish, then recreate
                    return backoff(attempt)
                            .thenCompose(v -> recordPublication(segmentId, length, publication, attempt + 1));
                }
                rec = new Versioned(rec.etag(), null, -1, true, rec.deletingSinceMs()); // abandoned: take it over
            }
            boolean live = rec != null && !rec.deleting();
            if (live && rec.byteLength() != length) {
                throw new SegmentCollisionException();
            }
            List<SegmentPublication> pubs = live ? new ArrayList<>(rec.publications()) : new ArrayList<>();
            if (!merge(pubs, publication) && live) {
                return CompletableFuture.completedFuture(false); // the context already lives at least that long
            }
            Runnable race = beforeRecordWrite;
            if (race != null) {
                beforeRecordWrite = null;
                race.run();
            }
            return records.writeRecord(segmentId, length, pubs, rec == null ? null : rec.etag())
                    .thenCompose(written -> written
                            ? CompletableFuture.completedFuture(!live)
                            : backoff(attempt)
                                    .thenCompose(v -> recordPublication(segmentId, length, publication, attempt + 1)));
        });
    }

    /** Merges {@code p} into {@code pubs} (§5.1); {@code true} when the list changed. */
    private static boolean merge(List<SegmentPublication> pubs, SegmentPublication p) {
        for (int i = 0; i < pubs.size(); i++) {
            SegmentPublication old = pubs.get(i);
            if (old.sameContext(p)) {
                if (p.expiresAtMs() <= old.expiresAtMs()) {
                    return false;
                }
                pubs.set(
                        i,
                        new SegmentPublication(
                                old.partition(),
                                old.logEpoch(),
                                old.table(),
                                old.schemaVersion(),
                                old.mediaType(),
                                old.scopeDigest(),
                                old.asOfCommitSeq(),
                                old.rowCursor(),
                                old.nextRowCursor(),
                                old.rowCount(),
                                old.createdAtMs(),
                                p.expiresAtMs()));
                return true;
            }
        }
        pubs.add(p);
        return true;
    }

    /** Completes after the attempt's back-off (a timer, no thread held). */
    private static CompletableFuture<Void> backoff(int attempt) {
        long ms = Math.min(200, 5L << Math.min(attempt, 6)) + (long) (Math.random() * 5);
        return CompletableFuture.runAsync(() -> {}, CompletableFuture.delayedExecutor(ms, TimeUnit.MILLISECONDS));
    }
}
