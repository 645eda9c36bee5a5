package dev.syncular.server.segments;

import dev.syncular.server.wire.MediaType;
import java.util.Objects;

/**
 * One publication of a content-addressed segment (§5.1): the full descriptor context it was minted for,
 * with its own creation time and expiry. A digest recorded under one context never authorizes another.
 */
public record SegmentPublication(
        String partition,
        String logEpoch,
        String table,
        int schemaVersion,
        MediaType mediaType,
        String scopeDigest,
        long asOfCommitSeq,
        String rowCursor,
        String nextRowCursor,
        long rowCount,
        long createdAtMs,
        long expiresAtMs) {

    /** True when both publications describe the same context (everything but row count and times). */
    public boolean sameContext(SegmentPublication o) {
        return partition.equals(o.partition)
                && logEpoch.equals(o.logEpoch)
                && table.equals(o.table)
                && schemaVersion == o.schemaVersion
                && mediaType == o.mediaType
                && scopeDigest.equals(o.scopeDigest)
                && asOfCommitSeq == o.asOfCommitSeq
                && Objects.equals(rowCursor, o.rowCursor)
                && Objects.equals(nextRowCursor, o.nextRowCursor);
    }
}
