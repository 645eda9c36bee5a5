package dev.syncular.server.wire;

import java.util.ArrayList;
import java.util.List;

/** {@code PUSH_RESULT} (§6.3): one per {@code PUSH_COMMIT}; {@code commitSeq} present iff applied or cached. */
public record PushResult(String clientCommitId, CommitStatus status, Long commitSeq, List<OpResult> results)
        implements Frame {
    @Override
    public int type() {
        return FrameType.PUSH_RESULT;
    }

    static PushResult read(WireReader r) {
        String clientCommitId = r.str();
        CommitStatus status = CommitStatus.of(r.u8());
        Long commitSeq = r.optI64();
        int n = r.count(5);
        List<OpResult> results = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            results.add(OpResult.read(r));
        }
        r.expectEnd();
        if ((commitSeq != null) == (status == CommitStatus.REJECTED)) {
            throw WireException.invalid("commitSeq present iff status is applied or cached");
        }
        return new PushResult(clientCommitId, status, commitSeq, List.copyOf(results));
    }

    @Override
    public void writePayload(WireWriter w) {
        if ((commitSeq != null) == (status == CommitStatus.REJECTED)) {
            throw new IllegalArgumentException("commitSeq present iff status is applied or cached");
        }
        w.str(clientCommitId).u8(status.code).optI64(commitSeq).u32(results.size());
        for (OpResult res : results) {
            res.write(w);
        }
    }
}
