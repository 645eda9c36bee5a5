package dev.syncular.server.storage;

/** The outcome of one prune transaction (§4.6). */
public record PruneResult(long previousHorizonSeq, long horizonSeq, long removedCommits) {
    public boolean advanced() {
        return horizonSeq > previousHorizonSeq;
    }
}
