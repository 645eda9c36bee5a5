package dev.syncular.server.wire;

/**
 * A push operation record (§6.1). {@code payload} is the sparse row (§2.4), present iff upsert;
 * {@code baseVersion} is independent of {@code op} (a delete may carry one; the server ignores it).
 */
public record PushOperation(String table, String rowId, Op op, Long baseVersion, byte[] payload) {
    static PushOperation read(WireReader r) {
        String table = r.str();
        String rowId = r.str();
        Op op = Op.of(r.u8());
        Long baseVersion = r.optI64();
        byte[] payload = r.optBytes();
        if ((payload != null) != (op == Op.UPSERT)) {
            throw WireException.invalid("payload present iff op is upsert");
        }
        return new PushOperation(table, rowId, op, baseVersion, payload);
    }

    void write(WireWriter w) {
        if ((payload != null) != (op == Op.UPSERT)) {
            throw new IllegalArgumentException("payload present iff op is upsert");
        }
        w.str(table).str(rowId).u8(op.code).optI64(baseVersion).optBytes(payload);
    }
}
