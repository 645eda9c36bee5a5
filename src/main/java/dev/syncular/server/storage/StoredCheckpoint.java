package dev.syncular.server.storage;

/**
 * A checkpoint row ({@code sync_backfill_checkpoints}): its state, the backfill's progress
 * ({@code watermark}: the commit sequence the backfilled data covers; {@code observedRows}) and the
 * {@code ownerEpoch} fencing concurrent backfill workers (bumped by every claim).
 */
public record StoredCheckpoint(
        String partition,
        String name,
        int schemaVersion,
        CheckpointState state,
        long watermark,
        long ownerEpoch,
        long observedRows,
        long updatedAtMs) {}
