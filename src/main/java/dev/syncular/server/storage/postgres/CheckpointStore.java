package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;

import dev.syncular.server.storage.ActivationResult;
import dev.syncular.server.storage.CheckpointDeclaration;
import dev.syncular.server.storage.CheckpointState;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredCheckpoint;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

/**
 * Backfill checkpoints and the schema-upgrade writer fence (§2.4 "Schema upgrade writer fence", RFC 0007 of
 * the seed): {@code sync_backfill_checkpoints} ({@code declared → backfilling → activated}, owner-epoch CAS,
 * activation under the partition lock) and {@code sync_writer_fence} (raised, never lowered, by a migration
 * and by a declaration). The fence itself is enforced by the {@code BEFORE INSERT} trigger on
 * {@code sync_commits} that {@link CoreTables} declares; its SQLSTATE {@value #FENCE_SQLSTATE} is
 * mapped to {@code sync.storage.writer_fence_rejected} by {@link #fenceRejection}.
 */
final class CheckpointStore {
    /** The SQLSTATE the writer-fence trigger raises (a custom class, never used by PostgreSQL itself). */
    static final String FENCE_SQLSTATE = "SY001";

    private static final String CHECKPOINT_COLS =
            "partition_id, name, schema_version, state, watermark, owner_epoch, observed_rows, updated_at_ms";
    private static final String INSERT_CHECKPOINT_SQL = "INSERT INTO %s (" + CHECKPOINT_COLS + ")"
            + " VALUES ($1, $2, $3, 'declared', 0, 0, 0, $4) ON CONFLICT (partition_id, name) DO NOTHING";
    private static final String RAISE_FENCE_SQL = "INSERT INTO %s AS f (partition_id, required_writer_version)"
            + " VALUES ($1, $2) ON CONFLICT (partition_id) DO UPDATE"
            + " SET required_writer_version = GREATEST(f.required_writer_version, EXCLUDED.required_writer_version)";

    private final Pool pool;
    private final PartitionRegistry registry;

    private final String raiseAllFences;
    private final String lockPartitions;
    private final String insertCheckpoint;
    private final String raiseFence;
    private final String pendingCheckpoints;
    private final String checkpointsOfPartition;
    private final String claimCheckpoint;
    private final String advanceCheckpoint;
    private final String sourceChangedAbove;
    private final String activateCheckpoint;
    private final String selectCheckpoint;
    private final String selectCheckpointForUpdate;
    private final String abandonCheckpoint;

    CheckpointStore(Pool pool, String pgSchema, PartitionRegistry registry) {
        this.pool = pool;
        this.registry = registry;
        String fences = PgSql.qualified(pgSchema, "sync_writer_fence");
        String checkpoints = PgSql.qualified(pgSchema, "sync_backfill_checkpoints");
        raiseAllFences = "INSERT INTO " + fences + " AS f (partition_id, required_writer_version)"
                + " SELECT partition_id, $1 FROM " + PgSql.qualified(pgSchema, "sync_partitions")
                + " ON CONFLICT (partition_id) DO UPDATE"
                + " SET required_writer_version = GREATEST(f.required_writer_version, EXCLUDED.required_writer_version)";
        // The partition level of the lock order: every declared partition's row, in one order (a partition not
        // registered yet has no row, but the statement's ROW SHARE table lock still waits for a schema upgrade).
        lockPartitions = "SELECT partition_id FROM " + PgSql.qualified(pgSchema, "sync_partitions")
                + " WHERE partition_id = ANY($1) ORDER BY partition_id COLLATE \"C\" FOR UPDATE";
        insertCheckpoint = INSERT_CHECKPOINT_SQL.formatted(checkpoints);
        raiseFence = RAISE_FENCE_SQL.formatted(fences);
        pendingCheckpoints = "SELECT " + CHECKPOINT_COLS + " FROM " + checkpoints
                + " WHERE schema_version = $1 AND state <> 'activated'"
                + " ORDER BY partition_id COLLATE \"C\", name COLLATE \"C\"";
        checkpointsOfPartition = "SELECT " + CHECKPOINT_COLS + " FROM " + checkpoints
                + " WHERE partition_id = $1 ORDER BY name COLLATE \"C\"";
        claimCheckpoint = "UPDATE " + checkpoints + " SET owner_epoch = owner_epoch + 1,"
                + " state = 'backfilling', updated_at_ms = $4"
                + " WHERE partition_id = $1 AND name = $2 AND schema_version = $3 AND state <> 'activated'"
                + " RETURNING " + CHECKPOINT_COLS;
        advanceCheckpoint = "UPDATE " + checkpoints + " SET watermark = $4, observed_rows = $5,"
                + " updated_at_ms = $6 WHERE partition_id = $1 AND name = $2 AND owner_epoch = $3"
                + " AND state = 'backfilling'";
        sourceChangedAbove = "SELECT EXISTS (SELECT 1 FROM " + PgSql.qualified(pgSchema, "sync_changes")
                + " WHERE partition_id = $1 AND tbl = ANY($2) AND commit_seq > $3)";
        activateCheckpoint = "UPDATE " + checkpoints + " SET state = 'activated',"
                + " watermark = $3, updated_at_ms = $4 WHERE partition_id = $1 AND name = $2";
        selectCheckpoint =
                "SELECT " + CHECKPOINT_COLS + " FROM " + checkpoints + " WHERE partition_id = $1 AND name = $2";
        selectCheckpointForUpdate = selectCheckpoint + " FOR UPDATE";
        abandonCheckpoint = "DELETE FROM " + checkpoints
                + " WHERE partition_id = $1 AND name = $2 AND schema_version = $3 AND state <> 'activated'"
                + " RETURNING " + CHECKPOINT_COLS;
    }

    // ---- writer fence ---------------------------------------------------------------------------------

    /** Raises the fence of every registered partition to {@code version}, never lowering one. */
    Uni<Void> raiseAllFences(SqlClient conn, int version) {
        return conn.preparedQuery(raiseAllFences).execute(Tuple.of(version)).replaceWithVoid();
    }

    /**
     * Installs declarations (state {@code declared}; an existing row, whatever its state, is left alone) and
     * raises each declared partition's fence to the checkpoint's version, never lowering it — in the package's
     * lock order: the declared partitions' rows first ({@code FOR UPDATE}, sorted), then the checkpoint rows,
     * then the fence rows. The boot migration and an admin declare both come through here, so neither can hold
     * a fence row while waiting for a checkpoint row the other holds.
     */
    Uni<Void> installCheckpoints(SqlClient c, List<CheckpointDeclaration> declarations, long nowMs) {
        if (declarations.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        List<Tuple> rows = new ArrayList<>();
        List<Tuple> fences = new ArrayList<>();
        TreeSet<String> partitions = new TreeSet<>();
        for (CheckpointDeclaration d : declarations) {
            rows.add(Tuple.of(d.partition(), d.name(), d.schemaVersion(), nowMs));
            fences.add(Tuple.of(d.partition(), d.schemaVersion()));
            partitions.add(d.partition());
        }
        return c.preparedQuery(lockPartitions)
                .execute(Tuple.tuple().addArrayOfString(partitions.toArray(String[]::new)))
                .chain(() -> c.preparedQuery(insertCheckpoint).executeBatch(rows))
                .chain(() -> c.preparedQuery(raiseFence).executeBatch(fences))
                .replaceWithVoid();
    }

    /** The writer-fence trigger's failure as {@code sync.storage.writer_fence_rejected}; anything else unchanged. */
    static Throwable fenceRejection(Throwable t, int writerVersion) {
        if (t instanceof PgException pe && FENCE_SQLSTATE.equals(pe.getSqlState())) {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("writerVersion", writerVersion);
            try {
                d.put(
                        "requiredWriterVersion",
                        Integer.parseInt(String.valueOf(pe.getDetail()).trim()));
            } catch (NumberFormatException ignored) {
                // the trigger always sets it; tolerate a foreign one
            }
            return new StorageException(
                    StorageException.WRITER_FENCE_REJECTED,
                    "the partition's writer fence rejects appends by this schema version",
                    d,
                    t);
        }
        return t;
    }

    // ---- checkpoints ----------------------------------------------------------------------------------

    Uni<List<StoredCheckpoint>> readPendingCheckpoints(int runningSchemaVersion) {
        return pool.preparedQuery(pendingCheckpoints)
                .execute(Tuple.of(runningSchemaVersion))
                .map(CheckpointStore::checkpoints);
    }

    Uni<List<StoredCheckpoint>> readCheckpoints(String partition) {
        return pool.preparedQuery(checkpointsOfPartition)
                .execute(Tuple.of(partition))
                .map(CheckpointStore::checkpoints);
    }

    /**
     * Inserts the declared row if absent and raises the partition's fence (never lowering), in one transaction
     * taking the partition, checkpoint and fence locks in that order ({@link #installCheckpoints}).
     */
    Uni<StoredCheckpoint> declareCheckpoint(String partition, String name, int schemaVersion, long nowMs) {
        CheckpointDeclaration declaration;
        try {
            declaration = new CheckpointDeclaration(partition, name, schemaVersion);
        } catch (RuntimeException e) {
            return Uni.createFrom()
                    .failure(new StorageException(
                            StorageException.INVALID_ARGUMENT,
                            "invalid checkpoint declaration",
                            Map.of("reason", String.valueOf(e.getMessage()))));
        }
        return PgSql.readCommitted(
                pool,
                conn -> installCheckpoints(conn, List.of(declaration), nowMs)
                        .chain(() -> selectCheckpoint(conn, partition, name, false))
                        .map(Objects::requireNonNull));
    }

    /**
     * {@code UPDATE ... owner_epoch + 1, state = 'backfilling'} for a non-activated checkpoint at that version;
     * an activated one is returned unchanged; anything else (absent, another version) is not found.
     */
    Uni<StoredCheckpoint> abandonCheckpoint(String partition, String name, int schemaVersion) {
        return pool.preparedQuery(abandonCheckpoint)
                .execute(Tuple.of(partition, name, schemaVersion))
                .chain(rs -> {
                    Row r = first(rs);
                    if (r != null) {
                        return Uni.createFrom().item(checkpoint(r));
                    }
                    return selectCheckpoint(pool, partition, name, false).map(existing -> {
                        if (existing != null
                                && existing.schemaVersion() == schemaVersion
                                && existing.state() == CheckpointState.ACTIVATED) {
                            Map<String, Object> d = new LinkedHashMap<>();
                            d.put("name", name);
                            d.put("schemaVersion", schemaVersion);
                            throw new StorageException(
                                    StorageException.CHECKPOINT_ACTIVATED, "the checkpoint is activated", d);
                        }
                        throw checkpointNotFound(name, schemaVersion);
                    });
                });
    }

    Uni<StoredCheckpoint> claimCheckpoint(String partition, String name, int schemaVersion, long nowMs) {
        return pool.preparedQuery(claimCheckpoint)
                .execute(Tuple.of(partition, name, schemaVersion, nowMs))
                .chain(rs -> {
                    Row r = first(rs);
                    if (r != null) {
                        return Uni.createFrom().item(checkpoint(r));
                    }
                    return selectCheckpoint(pool, partition, name, false).map(existing -> {
                        if (existing == null
                                || existing.schemaVersion() != schemaVersion
                                || existing.state() != CheckpointState.ACTIVATED) {
                            throw checkpointNotFound(name, schemaVersion);
                        }
                        return existing;
                    });
                });
    }

    Uni<Boolean> advanceCheckpoint(
            String partition, String name, long ownerEpoch, long watermark, long observedRows, long nowMs) {
        return advanceCheckpoint(pool, partition, name, ownerEpoch, watermark, observedRows, nowMs);
    }

    /** CAS on the owner epoch of a backfilling checkpoint; one statement, so a retry is harmless. */
    Uni<Boolean> advanceCheckpoint(
            SqlClient c,
            String partition,
            String name,
            long ownerEpoch,
            long watermark,
            long observedRows,
            long nowMs) {
        return c.preparedQuery(advanceCheckpoint)
                .execute(Tuple.of(partition, name, ownerEpoch, watermark, observedRows, nowMs))
                .map(rs -> rs.rowCount() == 1);
    }

    /**
     * One transaction: lock the partition row (the horizon is read here, before the change scan, and no push
     * or prune can run until we commit), lock the checkpoint row and verify the owner epoch, then look for a
     * change to a source table above the watermark ({@code STALE}), else compare the horizon
     * ({@code UNVERIFIABLE}), else activate. An already activated checkpoint with the same owner answers
     * {@code ACTIVATED} unchanged (a retry after a lost reply).
     */
    Uni<ActivationResult> activateCheckpoint(
            String partition, String name, long ownerEpoch, long watermark, List<String> sourceTables, long nowMs) {
        List<String> sources = List.copyOf(sourceTables);
        return PgSql.readCommitted(
                pool,
                conn -> registry.lockPartition(conn, partition)
                        .chain(state -> selectCheckpoint(conn, partition, name, true)
                                .chain(cp -> {
                                    if (cp == null) {
                                        return Uni.createFrom().failure(checkpointNotFound(name, null));
                                    }
                                    if (cp.ownerEpoch() != ownerEpoch || cp.state() == CheckpointState.DECLARED) {
                                        Map<String, Object> d = new LinkedHashMap<>();
                                        d.put("name", name);
                                        d.put("ownerEpoch", ownerEpoch);
                                        d.put("currentOwnerEpoch", cp.ownerEpoch());
                                        return Uni.createFrom()
                                                .failure(new StorageException(
                                                        StorageException.CHECKPOINT_OWNER_CHANGED,
                                                        "the checkpoint was claimed by another owner",
                                                        d));
                                    }
                                    if (cp.state() == CheckpointState.ACTIVATED) {
                                        return Uni.createFrom().item(ActivationResult.ACTIVATED);
                                    }
                                    Uni<Boolean> changed = sources.isEmpty()
                                            ? Uni.createFrom().item(Boolean.FALSE)
                                            : conn.preparedQuery(sourceChangedAbove)
                                                    .execute(Tuple.of(partition)
                                                            .addArrayOfString(sources.toArray(String[]::new))
                                                            .addValue(watermark))
                                                    .map(rs -> first(rs).getBoolean(0));
                                    return changed.chain(stale -> {
                                        if (stale) {
                                            return Uni.createFrom().item(ActivationResult.STALE);
                                        }
                                        if (!sources.isEmpty() && state.horizonSeq() > watermark) {
                                            return Uni.createFrom().item(ActivationResult.UNVERIFIABLE);
                                        }
                                        return conn.preparedQuery(activateCheckpoint)
                                                .execute(Tuple.of(partition, name, watermark, nowMs))
                                                .replaceWith(ActivationResult.ACTIVATED);
                                    });
                                })));
    }

    private Uni<StoredCheckpoint> selectCheckpoint(SqlClient c, String partition, String name, boolean forUpdate) {
        return c.preparedQuery(forUpdate ? selectCheckpointForUpdate : selectCheckpoint)
                .execute(Tuple.of(partition, name))
                .map(rs -> {
                    Row r = first(rs);
                    return r == null ? null : checkpoint(r);
                });
    }

    private static StorageException checkpointNotFound(String name, Integer schemaVersion) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("name", name);
        if (schemaVersion != null) {
            d.put("schemaVersion", schemaVersion);
        }
        return new StorageException(StorageException.CHECKPOINT_NOT_FOUND, "the checkpoint is not declared", d);
    }

    private static StoredCheckpoint checkpoint(Row r) {
        return new StoredCheckpoint(
                r.getString(0),
                r.getString(1),
                r.getInteger(2),
                CheckpointState.of(r.getString(3)),
                r.getLong(4),
                r.getLong(5),
                r.getLong(6),
                r.getLong(7));
    }

    private static List<StoredCheckpoint> checkpoints(RowSet<Row> rs) {
        List<StoredCheckpoint> out = new ArrayList<>();
        for (Row r : rs) {
            out.add(checkpoint(r));
        }
        return out;
    }
}
