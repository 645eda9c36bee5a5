package dev.syncular.server.wire;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** {@code PUSH_COMMIT} (§6.1): one client commit — a non-empty {@code clientCommitId} and ≥ 1 operations. */
public record PushCommit(String clientCommitId, List<PushOperation> operations) implements Frame {
    @Override
    public int type() {
        return FrameType.PUSH_COMMIT;
    }

    static PushCommit read(WireReader r) {
        String clientCommitId = r.str();
        int n = r.count(11);
        List<PushOperation> ops = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            ops.add(PushOperation.read(r));
        }
        r.expectEnd();
        if (clientCommitId.isEmpty()) {
            throw WireException.invalid("clientCommitId must be non-empty");
        }
        if (n == 0) {
            throw new WireException(WireException.EMPTY_COMMIT, "commit carries no operations", Map.of());
        }
        return new PushCommit(clientCommitId, List.copyOf(ops));
    }

    @Override
    public void writePayload(WireWriter w) {
        w.str(clientCommitId).u32(operations.size());
        for (PushOperation op : operations) {
            op.write(w);
        }
    }
}
