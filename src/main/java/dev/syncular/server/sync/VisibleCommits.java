package dev.syncular.server.sync;

import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Frame;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The commits a released pull hands its client (§4.5 {@code COMMIT} frames past its cursors), told to the observer
 * once each with their creation times — the moment they became visible to this client, for the visibility lag
 * ({@link SyncObserver#commitsVisible}). A commit two sections carry (two tables of one commit) counts once.
 */
final class VisibleCommits {
    private VisibleCommits() {}

    static void tell(SyncObserver observer, PlannedResponse planned, List<Frame> frames) {
        if (planned.round == null) {
            return;
        }
        long[] seqs = null;
        long[] createdAtMs = null;
        int n = 0;
        for (Frame f : frames) {
            if (f instanceof CommitFrame c) {
                if (seqs == null) {
                    seqs = new long[16];
                    createdAtMs = new long[16];
                } else if (n == seqs.length) {
                    seqs = Arrays.copyOf(seqs, n * 2);
                    createdAtMs = Arrays.copyOf(createdAtMs, n * 2);
                }
                seqs[n] = c.commitSeq();
                createdAtMs[n] = c.createdAtMs();
                n++;
            }
        }
        if (n == 0) {
            return;
        }
        if (planned.sections.size() > 1) {
            // each section's commits ascend; across sections one commit may repeat
            Set<Long> seen = new HashSet<>(n * 2);
            int kept = 0;
            for (int i = 0; i < n; i++) {
                if (seen.add(seqs[i])) {
                    createdAtMs[kept++] = createdAtMs[i];
                }
            }
            n = kept;
        }
        long lastContactMs = planned.existing == null ? -1 : planned.existing.updatedAtMs();
        observer.commitsVisible(planned.round.ctx.partition(), createdAtMs, n, lastContactMs);
    }
}
