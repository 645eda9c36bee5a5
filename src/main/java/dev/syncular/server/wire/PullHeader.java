package dev.syncular.server.wire;

/** {@code PULL_HEADER} (§4.2): limits (clamped by the server) and the {@code accept} capability bitmask. */
public record PullHeader(int limitCommits, int limitSnapshotRows, int maxSnapshotPages, int accept) implements Frame {
    public static final int ACCEPT_INLINE_ROWS = 1;
    public static final int ACCEPT_EXTERNAL_ROWS = 1 << 1;
    public static final int ACCEPT_SQLITE = 1 << 2;
    public static final int ACCEPT_SIGNED_URLS = 1 << 3;

    @Override
    public int type() {
        return FrameType.PULL_HEADER;
    }

    public boolean accepts(int bit) {
        return (accept & bit) != 0;
    }

    static PullHeader read(WireReader r) {
        int limitCommits = r.i32();
        int limitSnapshotRows = r.i32();
        int maxSnapshotPages = r.i32();
        int accept = r.u8();
        r.expectEnd();
        if ((accept & 0xf0) != 0) {
            throw WireException.invalid("accept bits 4-7 must be zero");
        }
        return new PullHeader(limitCommits, limitSnapshotRows, maxSnapshotPages, accept);
    }

    @Override
    public void writePayload(WireWriter w) {
        w.i32(limitCommits).i32(limitSnapshotRows).i32(maxSnapshotPages).u8(accept);
    }
}
