package dev.syncular.server.wire;

import java.util.Map;

/**
 * A {@code COMMIT} change record (§4.5): {@code rowVersion} and {@code row} (full-row codec) present iff
 * upsert; {@code scopes} are the stored scopes (§3.1).
 */
public record Change(int tableIndex, String rowId, Op op, Long rowVersion, Map<String, String> scopes, byte[] row) {
    static Change read(WireReader r, int tableCount) {
        int tableIndex = r.u16();
        if (tableIndex >= tableCount) {
            throw WireException.invalid("change tableIndex out of range");
        }
        String rowId = r.str();
        Op op = Op.of(r.u8());
        Long rowVersion = r.optI64();
        Map<String, String> scopes = r.scopeValueMap();
        byte[] row = r.optBytes();
        boolean upsert = op == Op.UPSERT;
        if ((rowVersion != null) != upsert || (row != null) != upsert) {
            throw WireException.invalid("rowVersion and row present iff op is upsert");
        }
        return new Change(tableIndex, rowId, op, rowVersion, scopes, row);
    }

    void write(WireWriter w) {
        boolean upsert = op == Op.UPSERT;
        if ((rowVersion != null) != upsert || (row != null) != upsert) {
            throw new IllegalArgumentException("rowVersion and row present iff op is upsert");
        }
        w.u16(tableIndex)
                .str(rowId)
                .u8(op.code)
                .optI64(rowVersion)
                .scopeValueMap(scopes)
                .optBytes(row);
    }
}
