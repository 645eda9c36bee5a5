package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;
import static dev.syncular.server.storage.postgres.StartupDdl.applyDdl;
import static dev.syncular.server.storage.postgres.StartupDdl.ddlTransaction;
import static dev.syncular.server.storage.postgres.StartupDdl.execAll;
import static dev.syncular.server.storage.postgres.StartupDdl.xactLock;

import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.storage.CheckpointDeclaration;
import dev.syncular.server.wire.Json;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import java.util.List;
import java.util.Objects;

/**
 * The storage's schema version bookkeeping and its migration (§2.4 "Same-version storage readiness", "Schema
 * upgrade writer fence"): the {@code sync_schema} marker, and the start-up path that applies the core DDL
 * ({@link CoreTables}), verifies an equal version ({@link SameVersionReadiness}) or upgrades an older one
 * ({@link RowTableDdl}) and installs the declared checkpoints and fences ({@link CheckpointStore}).
 *
 * <h2>Schema upgrade writer fence (§2.4)</h2>
 *
 * A schema-version bump runs in its own READ COMMITTED transaction under {@code lock_timeout} whose first lock
 * is {@code LOCK TABLE sync_partitions IN EXCLUSIVE MODE}: it waits for every in-flight push (which holds a
 * partition row lock) and blocks every later push at its first statement, without the old binary's
 * cooperation (at most the lock timeout; then the transaction is retried). In that transaction it applies the
 * DDL and marker, installs the declared checkpoints, then raises the fence of every registered partition to
 * the new version (never lowering) — the package's lock order: partition, checkpoint, fence. Every append
 * writes {@code writer_version} = the schema version this instance was ensured at ({@link InstalledSchema}).
 */
final class StorageSchemaMigration {
    private final Pool pool;
    private final String pgSchema;
    private final InstalledSchema installed;
    private final CheckpointStore checkpoints;
    private final UniqueIndexes unique;
    private final CoreTables coreTables;
    private final RowTableDdl rowTables;
    private final SameVersionReadiness readiness;

    private final String readMarkerSql;
    private final String writeMarkerSql;
    private final String storedSchemaVersion;

    StorageSchemaMigration(
            Pool pool, String pgSchema, InstalledSchema installed, CheckpointStore checkpoints, int logLeaves) {
        this.pool = pool;
        this.pgSchema = pgSchema;
        this.installed = installed;
        this.checkpoints = checkpoints;
        this.unique = new UniqueIndexes(pool, pgSchema);
        this.coreTables = new CoreTables(pgSchema, logLeaves);
        this.rowTables = new RowTableDdl(pgSchema);
        this.readiness = new SameVersionReadiness(pgSchema);
        readMarkerSql = "SELECT schema_version, layouts FROM " + t("sync_schema") + " WHERE id = 1";
        writeMarkerSql =
                "INSERT INTO " + t("sync_schema") + " (id, schema_version, layouts, updated_at_ms, applied_ddl)"
                        + " VALUES (1, $1, $2, $3, $4) ON CONFLICT (id) DO UPDATE SET schema_version = EXCLUDED.schema_version,"
                        + " layouts = EXCLUDED.layouts, updated_at_ms = EXCLUDED.updated_at_ms, applied_ddl = EXCLUDED.applied_ddl";
        storedSchemaVersion = "SELECT COALESCE((SELECT schema_version FROM " + t("sync_schema") + " WHERE id = 1), 0)";
    }

    private String t(String name) {
        return PgSql.qualified(pgSchema, name);
    }

    Uni<Void> ensureSchema(CompiledSchema running) {
        return ensureSchema(running, List.of());
    }

    /** Whether the PostgreSQL schema {@code namespace} has a {@code sync_partitions} table (one catalog read). */
    Uni<Boolean> holdsSyncTables(String namespace) {
        return pool.preparedQuery("SELECT to_regclass(format('%I.sync_partitions', $1::text)) IS NOT NULL")
                .execute(Tuple.of(namespace))
                .map(rows -> rows.iterator().next().getBoolean(0));
    }

    /**
     * The catalog-checked core DDL ({@link StartupDdl#applyDdl}: none at all on an up-to-date database), then one
     * read-only transaction under the ensureSchema advisory lock reads the marker: an equal version is verified
     * and the declarations installed right there; a newer stored version refuses. A missing or older marker
     * ends it and runs {@link #migrate} in another transaction whose first lock is the {@code sync_partitions}
     * table lock, which re-reads the marker (another process may have migrated meanwhile) before acting. Both
     * run under {@code lock_timeout} and are retried after a lock timeout. Before an upgrade, a table whose rows
     * already collide on a unique index the upgrade adds refuses the start; after it, the declared unique indexes
     * are reconciled with the catalog ({@link UniqueIndexes#reconcile}: one catalog read when nothing changed).
     */
    Uni<Void> ensureSchema(CompiledSchema running, List<CheckpointDeclaration> checkpoints) {
        Objects.requireNonNull(running, "schema");
        List<CheckpointDeclaration> declarations = List.copyOf(checkpoints);
        long nowMs = System.currentTimeMillis();
        return applyDdl(pool, lockName(), coreTables.coreDdl())
                .chain(() -> ddlTransaction(
                        pool,
                        conn -> xactLock(conn, lockName())
                                .chain(() -> readMarker(conn))
                                .chain(marker -> {
                                    if (marker == null || marker.getInteger(0) < running.version()) {
                                        return Uni.createFrom().item(Boolean.TRUE);
                                    }
                                    return sameVersionOrNewer(
                                                    conn, running, decide(marker, running), marker, declarations, nowMs)
                                            .replaceWith(Boolean.FALSE);
                                })))
                // a table whose rows already collide on a new unique key refuses the start before the upgrade
                .chain(needsMigration -> needsMigration
                        ? unique.refuseDuplicates(running)
                                .chain(() -> ddlTransaction(pool, conn -> migrate(conn, running, declarations, nowMs)))
                        : Uni.createFrom().voidItem())
                .chain(() -> unique.reconcile(running, lockName()))
                .invoke(() -> installed.install(running));
    }

    /**
     * §2.4 schema upgrade, in the lock order of the package (partition, then checkpoint, then fence): the
     * {@code sync_partitions} table lock, the marker, the DDL, the declared checkpoints (their partition rows,
     * then their rows, then their fences), then every partition's fence.
     */
    private Uni<Void> migrate(
            SqlConnection conn, CompiledSchema running, List<CheckpointDeclaration> declarations, long nowMs) {
        // §2.4 writer fence: the table lock is the transaction's FIRST lock. EXCLUSIVE conflicts with the ROW
        // SHARE lock of a push's SELECT ... FOR UPDATE on its partition row, so this waits for in-flight pushes
        // (at most lock_timeout, then the whole transaction is retried) and blocks later ones (of any binary)
        // until the new marker and the fences are committed.
        return conn.query("LOCK TABLE " + t("sync_partitions") + " IN EXCLUSIVE MODE")
                .execute()
                .chain(() -> xactLock(conn, lockName()))
                .chain(() -> readMarker(conn))
                .chain(marker -> {
                    // the decision a plan reports (MigrationStep), executed
                    MigrationStep step = decide(marker, running);
                    if (!step.migrates()) {
                        return sameVersionOrNewer(conn, running, step, marker, declarations, nowMs);
                    }
                    return execAll(conn, step.ddl())
                            .chain(() -> writeMarker(conn, running, step.ddl()))
                            .chain(() -> checkpoints.installCheckpoints(conn, declarations, nowMs))
                            .chain(() -> checkpoints.raiseAllFences(conn, running.version()));
                });
    }

    /** The step for {@code running} given the {@code (schema_version, layouts)} marker row, or none. */
    MigrationStep decide(Row marker, CompiledSchema running) {
        return marker == null
                ? MigrationStep.decide(0, null, running, rowTables)
                : MigrationStep.decide(marker.getInteger(0), marker.getString(1), running, rowTables);
    }

    /**
     * An equal stored version is verified and the declarations installed; a newer one, or a refused upgrade (a change
     * that is not additive, unreadable layouts), fails with the step's refusal.
     */
    private Uni<Void> sameVersionOrNewer(
            SqlConnection conn,
            CompiledSchema running,
            MigrationStep step,
            Row marker,
            List<CheckpointDeclaration> declarations,
            long nowMs) {
        if (marker != null && marker.getInteger(0) == running.version()) {
            return readiness
                    .verifySameVersion(conn, running, TableLayout.parse(marker.getString(1)))
                    .chain(() -> checkpoints.installCheckpoints(conn, declarations, nowMs));
        }
        return Uni.createFrom().failure(step.refusal());
    }

    private String lockName() {
        return "syncular.ensureSchema:" + pgSchema;
    }

    private Uni<Row> readMarker(SqlConnection conn) {
        return conn.query(readMarkerSql).execute().map(PgSql::first);
    }

    /** The marker of {@code running}, with the statements the migration ran ({@code applied_ddl}, a JSON array). */
    private Uni<Void> writeMarker(SqlConnection conn, CompiledSchema running, List<String> ddl) {
        ArrayNode applied = Json.array();
        ddl.forEach(applied::add);
        return conn.preparedQuery(writeMarkerSql)
                .execute(Tuple.of(
                        running.version(), TableLayout.render(running), System.currentTimeMillis(), applied.toString()))
                .replaceWithVoid();
    }

    Uni<Integer> readStoredSchemaVersion() {
        return pool.query(storedSchemaVersion)
                .execute()
                .map(rs -> first(rs).getInteger(0))
                // before the first ensureSchema the marker table does not exist yet: no marker
                .onFailure(e -> e instanceof PgException pe && "42P01".equals(pe.getSqlState()))
                .recoverWithItem(0);
    }
}
