package dev.syncular.server.wire;

/** {@code ERROR} (§1.6): an in-band failure after streaming began; only {@code END} may follow. */
public record ErrorFrame(
        String code, String message, String category, boolean retryable, String recommendedAction, String details)
        implements Frame {
    @Override
    public int type() {
        return FrameType.ERROR;
    }

    static ErrorFrame read(WireReader r) {
        ErrorFrame f = new ErrorFrame(r.str(), r.str(), r.str(), r.bool(), r.str(), r.optJson());
        r.expectEnd();
        return f;
    }

    @Override
    public void writePayload(WireWriter w) {
        w.str(code)
                .str(message)
                .str(category)
                .bool(retryable)
                .str(recommendedAction)
                .optStr(details);
    }
}
