package dev.syncular.server.segments.s3;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.segments.SegmentPublication;
import dev.syncular.server.segments.SegmentStore.ReuseKey;
import dev.syncular.server.segments.SegmentStoreStats;
import dev.syncular.server.wire.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The expiry sweep and the bucket statistics: the only LISTing operations (GC and statistics paths). The sweep
 * drops a record's expired publications, and marks a fully expired record as being deleted (conditionally, so a
 * concurrent publication wins), deletes the bytes and the reuse pointers still naming the entry, then the record.
 */
final class ExpirySweep {
    private final S3Objects objects;
    private final SegmentObjectKeys keys;
    private final PublicationRecords records;
    private final EntryTurns turns;

    ExpirySweep(S3Objects objects, SegmentObjectKeys keys, PublicationRecords records, EntryTurns turns) {
        this.objects = objects;
        this.keys = keys;
        this.records = records;
        this.turns = turns;
    }

    /** Walks the records; the number of entries this sweep forgot. */
    CompletableFuture<Integer> deleteExpired(long nowMs) {
        String recPrefix = keys.prefix() + "rec/sha256/";
        int[] forgotten = {0};
        // one entry after the other, as the listing yields them
        return objects.listing(recPrefix, null, o -> {
                    String key = o.key();
                    String hex = key.substring(recPrefix.length(), key.length() - ".json".length());
                    return forgetIfExpired("sha256:" + hex, nowMs).thenAccept(gone -> {
                        if (gone) {
                            forgotten[0]++;
                        }
                    });
                })
                .thenApply(v -> forgotten[0]);
    }

    /** In the entry's turn: publishers in this process never race this sweep's steps. */
    private CompletableFuture<Boolean> forgetIfExpired(String segmentId, long nowMs) {
        if (!SegmentObjectKeys.SEGMENT_ID.matcher(segmentId).matches()) {
            return CompletableFuture.completedFuture(false);
        }
        return turns.inTurn(segmentId, () -> forgetInTurn(segmentId, nowMs));
    }

    private CompletableFuture<Boolean> forgetInTurn(String segmentId, long nowMs) {
        return records.readRecord(segmentId).thenCompose(rec -> {
            if (rec == null) {
                return CompletableFuture.completedFuture(false);
            }
            if (rec.deleting()) {
                if (System.currentTimeMillis() - rec.deletingSinceMs() < PublicationRecords.STALE_DELETION_MS) {
                    return CompletableFuture.completedFuture(false); // another sweep is on it
                }
            } else {
                List<SegmentPublication> live = new ArrayList<>();
                for (SegmentPublication p : rec.publications()) {
                    if (p.expiresAtMs() >= nowMs) {
                        live.add(p);
                    }
                }
                if (!live.isEmpty()) {
                    if (live.size() < rec.publications().size()) {
                        // drop the expired publications only; a concurrent publish wins the race (412) and a
                        // later sweep retries
                        return records.writeRecord(segmentId, rec.byteLength(), live, rec.etag())
                                .thenApply(written -> false);
                    }
                    return CompletableFuture.completedFuture(false);
                }
            }
            // mark first, conditionally: a publication that lands meanwhile makes this fail and wins
            ObjectNode mark =
                    Json.object().put("segmentId", segmentId).put("deletingSinceMs", System.currentTimeMillis());
            return objects.conditionalPut(keys.recordKey(segmentId), PublicationRecords.write(mark), rec.etag())
                    .thenCompose(marked -> {
                        if (!marked) {
                            return CompletableFuture.completedFuture(false);
                        }
                        CompletableFuture<Void> steps = objects.delete(keys.objectKey(segmentId));
                        for (SegmentPublication p : rec.publications()) {
                            if (p.rowCursor() == null && p.nextRowCursor() == null) {
                                // only a pointer still naming this entry: a rebuilt image of the same key may
                                // own it now
                                String key = keys.findKey(ReuseKey.of(p));
                                steps = steps.thenCompose(v -> objects.getBytes(key))
                                        .thenCompose(pointer -> pointer != null
                                                        && segmentId.equals(
                                                                PublicationRecords.parse(pointer.asByteArray())
                                                                        .path("segmentId")
                                                                        .asText())
                                                ? objects.delete(key)
                                                : S3Objects.DONE);
                            }
                        }
                        return steps.thenCompose(v -> objects.delete(keys.recordKey(segmentId)))
                                .thenApply(v -> !rec.deleting());
                    });
        });
    }

    /**
     * A LIST of the bytes objects ({@code seg/}), like {@link #deleteExpired} a whole-bucket walk: entries and
     * their bytes. Publications live in one record object per entry and are not read ({@code -1}).
     */
    CompletableFuture<SegmentStoreStats> stats() {
        long[] segmentsAndBytes = {0, 0};
        return objects.listing(keys.prefix() + "seg/sha256/", null, o -> {
                    segmentsAndBytes[0]++;
                    segmentsAndBytes[1] += o.size() == null ? 0 : o.size();
                    return S3Objects.DONE;
                })
                .thenApply(v -> new SegmentStoreStats("s3", segmentsAndBytes[0], segmentsAndBytes[1], -1, -1));
    }
}
