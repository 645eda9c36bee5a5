package dev.syncular.server.storage;

import io.smallrye.mutiny.Uni;
import java.util.List;

/**
 * The §2.4 backfill checkpoints: declared by a build, claimed and advanced by a backfill, activated under the
 * partition lock; and the stored schema-version marker the serve gate and readiness compare against.
 */
public interface CheckpointStorage {

    /** Every checkpoint at {@code runningSchemaVersion}, in every partition, that is not activated. */
    Uni<List<StoredCheckpoint>> readPendingCheckpoints(int runningSchemaVersion);

    /** The stored schema-version marker, or 0 before the first migration. */
    Uni<Integer> readStoredSchemaVersion();

    Uni<List<StoredCheckpoint>> readCheckpoints(String partition);

    /** Declares a checkpoint (idempotent: an existing one is returned unchanged). */
    Uni<StoredCheckpoint> declareCheckpoint(String partition, String name, int schemaVersion, long nowMs);

    /**
     * Claims the backfill: bumps the owner epoch and moves {@code declared → backfilling} (a backfilling
     * checkpoint is re-claimed with a new epoch; an activated one is returned unchanged). Fails with
     * {@code sync.storage.checkpoint_not_found} for an undeclared checkpoint.
     */
    Uni<StoredCheckpoint> claimCheckpoint(String partition, String name, int schemaVersion, long nowMs);

    /**
     * Abandons a declaration: removes the checkpoint while it is not activated (declared or backfilling), so the
     * serve gate stops waiting for it; a backfill still running on it finds it gone at its next advance. Fails
     * with {@code sync.storage.checkpoint_not_found} when no such checkpoint is declared and with
     * {@code sync.storage.checkpoint_activated} when it is activated (an activated checkpoint stays: the rows it
     * vouches for are served). Partition writer fences the declaration raised stay raised (never lowered).
     */
    Uni<StoredCheckpoint> abandonCheckpoint(String partition, String name, int schemaVersion);

    /** Compare-and-set progress on the owner epoch; false when another owner claimed it meanwhile. */
    Uni<Boolean> advanceCheckpoint(
            String partition, String name, long ownerEpoch, long watermark, long observedRows, long nowMs);

    /**
     * Activates under the partition lock when the owner epoch matches and no source table changed above
     * {@code watermark}; {@code STALE} if one did, {@code UNVERIFIABLE} if the horizon passed the watermark.
     * Fails with {@code sync.storage.checkpoint_owner_changed} when the epoch no longer matches.
     */
    Uni<ActivationResult> activateCheckpoint(
            String partition, String name, long ownerEpoch, long watermark, List<String> sourceTables, long nowMs);
}
