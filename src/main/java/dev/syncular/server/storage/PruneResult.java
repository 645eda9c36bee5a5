package dev.syncular.server.storage;

/** The outcome of one prune (§4.6): the horizon before and after it, and the commits its deletion batches removed. */
public record PruneResult(long previousHorizonSeq, long horizonSeq, long removedCommits) {
    public boolean advanced() {
        return horizonSeq > previousHorizonSeq;
    }
}
