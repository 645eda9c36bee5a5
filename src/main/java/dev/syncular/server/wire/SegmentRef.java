package dev.syncular.server.wire;

/** {@code SEGMENT_REF} (§5.4): a bootstrap segment descriptor; {@code urlExpiresAtMs} present iff {@code url}. */
public record SegmentRef(
        String segmentId,
        MediaType mediaType,
        String table,
        long byteLength,
        long rowCount,
        long asOfCommitSeq,
        String scopeDigest,
        String rowCursor,
        String nextRowCursor,
        String url,
        Long urlExpiresAtMs)
        implements Frame {
    @Override
    public int type() {
        return FrameType.SEGMENT_REF;
    }

    static SegmentRef read(WireReader r) {
        String segmentId = r.str();
        MediaType mediaType = MediaType.of(r.u8());
        String table = r.str();
        long byteLength = r.i64();
        long rowCount = r.i64();
        long asOf = r.i64();
        String scopeDigest = r.str();
        String rowCursor = r.optStr();
        String nextRowCursor = r.optStr();
        String url = r.optStr();
        Long urlExpiresAtMs = r.optI64();
        r.expectEnd();
        if ((url != null) != (urlExpiresAtMs != null)) {
            throw WireException.invalid("urlExpiresAtMs present iff url is");
        }
        return new SegmentRef(
                segmentId,
                mediaType,
                table,
                byteLength,
                rowCount,
                asOf,
                scopeDigest,
                rowCursor,
                nextRowCursor,
                url,
                urlExpiresAtMs);
    }

    @Override
    public void writePayload(WireWriter w) {
        if ((url != null) != (urlExpiresAtMs != null)) {
            throw new IllegalArgumentException("urlExpiresAtMs present iff url is");
        }
        w.str(segmentId)
                .u8(mediaType.code)
                .str(table)
                .i64(byteLength)
                .i64(rowCount)
                .i64(asOfCommitSeq)
                .str(scopeDigest)
                .optStr(rowCursor)
                .optStr(nextRowCursor)
                .optStr(url)
                .optI64(urlExpiresAtMs);
    }
}
