package dev.syncular.server.wire;

/** {@code LEASE} (§7.3.2): at most one, immediately after {@code RESP_HEADER}. */
public record Lease(String leaseId, long expiresAtMs) implements Frame {
    @Override
    public int type() {
        return FrameType.LEASE;
    }

    static Lease read(WireReader r) {
        String leaseId = r.str();
        long expiresAtMs = r.i64();
        r.expectEnd();
        return new Lease(leaseId, expiresAtMs);
    }

    @Override
    public void writePayload(WireWriter w) {
        w.str(leaseId).i64(expiresAtMs);
    }
}
