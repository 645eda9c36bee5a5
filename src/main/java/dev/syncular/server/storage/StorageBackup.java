package dev.syncular.server.storage;

import io.smallrye.mutiny.Uni;

/**
 * A backup of a whole storage and its restore (§2.1 "Backup restore rule"), for the conformance host's
 * {@code backup-restore} capability. Rotating the log epoch after a restore is the caller's, exactly as an operator's
 * restore procedure owns it.
 */
public interface StorageBackup {

    /** {@code captureBackup()}: replaces any earlier backup with a copy of every table as it is now. */
    Uni<Void> capture();

    /**
     * {@code restoreBackup()} (storage part): every table put back to the captured rows, atomically; fails
     * {@code sync.not_found} when no backup was captured.
     */
    Uni<Void> restore();

    /** Drops the backup (the storage is closed). */
    Uni<Void> drop();
}
