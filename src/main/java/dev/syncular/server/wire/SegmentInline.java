package dev.syncular.server.wire;

/**
 * {@code SEGMENT_INLINE} (§5.7): one complete rows segment. Decode checks its structure (§5.2) but keeps
 * the raw bytes for byte-exact re-encoding; the column-table schema check is the receiver's.
 */
public record SegmentInline(byte[] payload) implements Frame {
    @Override
    public int type() {
        return FrameType.SEGMENT_INLINE;
    }

    static SegmentInline read(WireReader r) {
        byte[] payload = r.bytesToEnd();
        RowsSegment.decode(payload);
        return new SegmentInline(payload);
    }

    @Override
    public void writePayload(WireWriter w) {
        w.raw(payload);
    }
}
