package dev.syncular.server.wire;

import java.util.ArrayList;
import java.util.List;

/** {@code COMMIT} (§4.5): one commit with a frame-local table dictionary — self-contained for streaming. */
public record CommitFrame(long commitSeq, long createdAtMs, String actorId, List<String> tables, List<Change> changes)
        implements Frame {
    @Override
    public int type() {
        return FrameType.COMMIT;
    }

    static CommitFrame read(WireReader r) {
        long commitSeq = r.i64();
        long createdAtMs = r.i64();
        String actorId = r.str();
        List<String> tables = r.strList();
        // A change record is at least 13 bytes: u16 tableIndex, str rowId (4), u8 op, opt rowVersion (1),
        // map scopes (4), opt row (1) — a delete with an empty rowId and no scopes.
        int n = r.count(13);
        List<Change> changes = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            changes.add(Change.read(r, tables.size()));
        }
        r.expectEnd();
        return new CommitFrame(commitSeq, createdAtMs, actorId, tables, List.copyOf(changes));
    }

    @Override
    public void writePayload(WireWriter w) {
        w.i64(commitSeq).i64(createdAtMs).str(actorId).strList(tables).u32(changes.size());
        for (Change c : changes) {
            if (c.tableIndex() >= tables.size()) {
                throw new IllegalArgumentException("change tableIndex out of range");
            }
            c.write(w);
        }
    }
}
