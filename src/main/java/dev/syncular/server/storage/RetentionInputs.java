package dev.syncular.server.storage;

/**
 * The §4.6 retention inputs of one partition, as the database computes them: its state, and the lowest cursor of
 * a client active since the pass's cut-off ({@code -1} when no active client holds a cursor). The client records
 * themselves are never loaded: a partition with a million clients costs one aggregate.
 */
public record RetentionInputs(PartitionState partition, long lowestActiveCursor) {
    /** No active client holds a cursor. */
    public static final long NO_ACTIVE_CURSOR = -1;
}
