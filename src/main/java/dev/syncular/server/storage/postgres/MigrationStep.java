package dev.syncular.server.storage.postgres;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoragePlan;
import java.util.List;
import java.util.Map;

/**
 * The schema step's decision on the stored marker (§2.4), without I/O: what ensuring {@code running} does when the
 * marker holds {@code storedVersion} and {@code layouts}. Start-up executes it ({@link StorageSchemaMigration});
 * a schema change's plan reports it ({@link SchemaPlanning}), so the two cannot differ.
 *
 * @param action        one of {@link StoragePlan#CREATE}, {@link StoragePlan#UPGRADE}, {@link StoragePlan#UNCHANGED},
 *                      {@link StoragePlan#REFUSED}
 * @param storedVersion the marker's version, 0 without a marker
 * @param ddl           the statements of the migration transaction (create and upgrade), in order
 * @param newTables     the tables the statements create (their unique indexes come with them)
 * @param refusal       the refusal, or null
 */
record MigrationStep(
        String action, int storedVersion, List<String> ddl, List<String> newTables, StorageException refusal) {

    /** The decision for {@code running} given the marker ({@code layouts} is null when {@code storedVersion} is 0). */
    static MigrationStep decide(int storedVersion, String layouts, CompiledSchema running, RowTableDdl rowTables) {
        if (storedVersion == 0) {
            List<String> all = running.tables().stream().map(t -> t.name()).toList();
            return new MigrationStep(StoragePlan.CREATE, 0, rowTables.fresh(running), all, null);
        }
        if (storedVersion > running.version()) {
            return refused(
                    storedVersion,
                    new StorageException(
                            StorageException.SCHEMA_NOT_READY,
                            "stored schema version is newer than the running schema",
                            Map.of("storedVersion", storedVersion, "runningVersion", running.version())));
        }
        Map<String, TableLayout> stored;
        try {
            stored = TableLayout.parse(layouts);
        } catch (StorageException e) {
            return refused(storedVersion, e);
        }
        if (storedVersion == running.version()) {
            StorageException mismatch = TableLayout.compare(running, stored);
            return mismatch == null
                    ? new MigrationStep(StoragePlan.UNCHANGED, storedVersion, List.of(), List.of(), null)
                    : refused(storedVersion, mismatch);
        }
        try {
            List<String> ddl = rowTables.additiveUpgrade(running, stored);
            List<String> added = running.tables().stream()
                    .map(t -> t.name())
                    .filter(n -> !stored.containsKey(n))
                    .toList();
            return new MigrationStep(StoragePlan.UPGRADE, storedVersion, ddl, added, null);
        } catch (StorageException e) {
            return refused(storedVersion, e);
        }
    }

    private static MigrationStep refused(int storedVersion, StorageException e) {
        return new MigrationStep(StoragePlan.REFUSED, storedVersion, List.of(), List.of(), e);
    }

    /** Whether the step runs the migration transaction (a create or an upgrade). */
    boolean migrates() {
        return StoragePlan.CREATE.equals(action) || StoragePlan.UPGRADE.equals(action);
    }
}
