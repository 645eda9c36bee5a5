package dev.syncular.server.wire;

/** {@code SUB_END} (§4.4): the trailer carrying {@code nextCursor} and the resume token (raw JSON, absent = complete). */
public record SubEnd(long nextCursor, String bootstrapState) implements Frame {
    @Override
    public int type() {
        return FrameType.SUB_END;
    }

    static SubEnd read(WireReader r) {
        long nextCursor = r.i64();
        String bootstrapState = r.optJson();
        r.expectEnd();
        return new SubEnd(nextCursor, bootstrapState);
    }

    @Override
    public void writePayload(WireWriter w) {
        w.i64(nextCursor).optStr(bootstrapState);
    }
}
