package dev.syncular.server.storage.postgres;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.ActivationResult;
import dev.syncular.server.storage.BlobReference;
import dev.syncular.server.storage.ChangeToWrite;
import dev.syncular.server.storage.CheckpointDeclaration;
import dev.syncular.server.storage.CheckpointState;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.ColumnVersions;
import dev.syncular.server.storage.CommitQuery;
import dev.syncular.server.storage.CommitWindow;
import dev.syncular.server.storage.GateCheck;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.PruneResult;
import dev.syncular.server.storage.PushOutcome;
import dev.syncular.server.storage.PushReadHint;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.RequestEntry;
import dev.syncular.server.storage.ServeGate;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredChange;
import dev.syncular.server.storage.StoredCheckpoint;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.storage.Tombstone;
import dev.syncular.server.wire.ColumnType;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Op;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.buffer.Buffer;
import io.vertx.pgclient.PgException;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * {@link SyncStorage} over the Vert.x reactive PostgreSQL client. All objects live in one PostgreSQL
 * schema (namespace) given at construction, so instances and tests isolate by schema; every identifier
 * is quoted and qualified. Non-blocking throughout; nothing is cached but the compiled schema.
 *
 * <h2>DDL (§2.1–§2.4, §3.1, §4.5, §4.6)</h2>
 *
 * <ul>
 *   <li>{@code sync_schema(id=1, schema_version, layouts text JSON, updated_at_ms)} — the marker;
 *   <li>{@code sync_partitions(partition_id PK, log_epoch, max_commit_seq, horizon_seq, created_at_ms,
 *       last_seen_at_ms)} — the registry, also the per-partition lock row;
 *   <li>{@code sync_commits(partition_id, commit_seq) PK} with created/actor/client/clientCommitId,
 *       change_count and the commit's table list;
 *   <li>{@code sync_changes(partition_id, commit_seq, change_index) PK} with tbl, row_id, op (1/2),
 *       row_version, scopes jsonb, payload bytea (u32 column count + full-row codec bytes);
 *   <li>{@code sync_commit_scopes(partition_id, tbl, scope_key, commit_seq) PK} plus indexes
 *       {@code (partition_id, scope_key, commit_seq)} and {@code (partition_id, commit_seq)} for pruning;
 *   <li>{@code sync_rows_<table>} — typed app columns (string/json/blob_ref text, integer bigint, float
 *       double precision, boolean boolean, bytes/crdt bytea; NOT NULL for non-nullable columns at creation)
 *       plus {@code _sync_partition text}, {@code _sync_row_id text COLLATE "C"}, {@code _sync_server_version
 *       bigint}, {@code _sync_scopes jsonb} (all NOT NULL), {@code _sync_payload bytea} (unused, NULL),
 *       {@code _sync_column_versions bytea}; PK {@code (_sync_partition, _sync_row_id)};
 *   <li>{@code sync_row_scopes(partition_id, tbl, scope_key, row_id) PK} plus {@code (partition_id, tbl,
 *       row_id)};
 *   <li>{@code sync_push_results(partition_id, client_id, client_commit_id) PK} with status, commit_seq,
 *       result bytea, created_at_ms;
 *   <li>{@code sync_clients(partition_id, client_id) PK} with actor_id, cursor, updated_at_ms,
 *       subscriptions jsonb, wire_version;
 *   <li>{@code sync_tombstones(partition_id, tbl, row_id) PK} with commit_seq, index
 *       {@code (partition_id, commit_seq)};
 *   <li>{@code sync_backfill_checkpoints(partition_id, name) PK} with schema_version, state
 *       ({@code declared|backfilling|activated}), watermark, owner_epoch, observed_rows, updated_at_ms;
 *   <li>{@code sync_writer_fence(partition_id PK, required_writer_version)} plus the nullable
 *       {@code sync_commits.writer_version} and the {@code BEFORE INSERT} trigger
 *       {@code sync_commits_writer_fence}: an append whose writer_version is NULL or below the partition's
 *       required version raises SQLSTATE {@value #FENCE_SQLSTATE} (mapped to
 *       {@code sync.storage.writer_fence_rejected}); a partition without a fence row is unrestricted.
 * </ul>
 *
 * <h2>Schema upgrade writer fence (§2.4)</h2>
 *
 * A schema-version bump runs in its own transaction whose first statement is
 * {@code LOCK TABLE sync_partitions IN EXCLUSIVE MODE}: it waits for every in-flight push (which holds a
 * partition row lock) and blocks every later push at its first statement, without the old binary's
 * cooperation. In that transaction it applies the DDL and marker, raises the fence of every registered
 * partition to the new version (never lowering) and installs the declared checkpoints. Every append writes
 * {@code writer_version} = the schema version this instance was ensured at.
 *
 * Row ids use {@code COLLATE "C"} so bootstrap pages order by bytes and use the primary-key index.
 */
public final class PostgresSyncStorage implements SyncStorage {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String PARTITION_COLS = "partition_id, log_epoch, max_commit_seq, horizon_seq, created_at_ms, last_seen_at_ms";
    private static final String CHECKPOINT_COLS =
            "partition_id, name, schema_version, state, watermark, owner_epoch, observed_rows, updated_at_ms";
    /** The SQLSTATE the writer-fence trigger raises (a custom class, never used by PostgreSQL itself). */
    static final String FENCE_SQLSTATE = "SY001";
    private static final String FENCE_TRIGGER = "sync_commits_writer_fence";

    private final Pool pool;
    private final String pgSchema;
    private volatile CompiledSchema schema;
    private volatile Map<String, RowTable> tables = Map.of();

    /**
     * @param pool     the reactive pool
     * @param pgSchema the PostgreSQL schema (namespace) holding every storage object; created if absent
     */
    public PostgresSyncStorage(Pool pool, String pgSchema) {
        this.pool = Objects.requireNonNull(pool, "pool");
        this.pgSchema = Objects.requireNonNull(pgSchema, "pgSchema");
        this.sql = new Sql();
    }

    /**
     * Every statement text of the hot paths, built once (the pool's prepared-statement cache is keyed by the
     * text: a statement rebuilt per call costs the concatenation and a fresh hash of a long string every time).
     */
    private final Sql sql;

    private final class Sql {
        final String readMarker = "SELECT schema_version, layouts FROM " + t("sync_schema") + " WHERE id = 1";
        final String writeMarker = "INSERT INTO " + t("sync_schema") + " (id, schema_version, layouts, updated_at_ms)"
                + " VALUES (1, $1, $2, $3) ON CONFLICT (id) DO UPDATE SET schema_version = EXCLUDED.schema_version,"
                + " layouts = EXCLUDED.layouts, updated_at_ms = EXCLUDED.updated_at_ms";
        final String raiseAllFences = "INSERT INTO " + t("sync_writer_fence") + " AS f (partition_id, required_writer_version)"
                + " SELECT partition_id, $1 FROM " + t("sync_partitions")
                + " ON CONFLICT (partition_id) DO UPDATE"
                + " SET required_writer_version = GREATEST(f.required_writer_version, EXCLUDED.required_writer_version)";
        final String insertCheckpoint = INSERT_CHECKPOINT_SQL.formatted(t("sync_backfill_checkpoints"));
        final String raiseFence = RAISE_FENCE_SQL.formatted(t("sync_writer_fence"));
        // partition registry
        final String selectPartition = "SELECT " + PARTITION_COLS + " FROM " + t("sync_partitions") + " WHERE partition_id = $1";
        final String lockPartition = selectPartition + " FOR UPDATE";
        final String refreshLastSeen = "UPDATE " + t("sync_partitions") + " AS p SET last_seen_at_ms ="
                + " GREATEST(p.last_seen_at_ms, $2) WHERE p.partition_id = (SELECT partition_id FROM "
                + t("sync_partitions") + " WHERE partition_id = $1 FOR UPDATE SKIP LOCKED)"
                + " RETURNING " + PARTITION_COLS;
        final String insertPartition = "INSERT INTO " + t("sync_partitions") + " AS p (" + PARTITION_COLS + ")"
                + " VALUES ($1, $2, 0, 0, $3, $3) ON CONFLICT (partition_id) DO UPDATE"
                + " SET last_seen_at_ms = GREATEST(p.last_seen_at_ms, EXCLUDED.last_seen_at_ms)"
                + " RETURNING " + PARTITION_COLS;
        final String listPartitions = "SELECT " + PARTITION_COLS + " FROM " + t("sync_partitions")
                + " ORDER BY partition_id COLLATE \"C\"";
        final String rotateLogEpoch = "UPDATE " + t("sync_partitions") + " SET log_epoch = $2"
                + " WHERE partition_id = $1 RETURNING " + PARTITION_COLS;
        final String deleteClients = "DELETE FROM " + t("sync_clients") + " WHERE partition_id = $1";
        // serve gate and checkpoints
        final String serveGate = serveGateSql(true);
        final String serveGateAllVersions = serveGateSql(false);
        final String enterRequest = entrySql();
        final String pendingCheckpoints = "SELECT " + CHECKPOINT_COLS + " FROM " + t("sync_backfill_checkpoints")
                + " WHERE schema_version = $1 AND state <> 'activated'"
                + " ORDER BY partition_id COLLATE \"C\", name COLLATE \"C\"";
        final String storedSchemaVersion = "SELECT COALESCE((SELECT schema_version FROM " + t("sync_schema") + " WHERE id = 1), 0)";
        final String checkpointsOfPartition = "SELECT " + CHECKPOINT_COLS + " FROM " + t("sync_backfill_checkpoints")
                + " WHERE partition_id = $1 ORDER BY name COLLATE \"C\"";
        final String claimCheckpoint = "UPDATE " + t("sync_backfill_checkpoints") + " SET owner_epoch = owner_epoch + 1,"
                + " state = 'backfilling', updated_at_ms = $4"
                + " WHERE partition_id = $1 AND name = $2 AND schema_version = $3 AND state <> 'activated'"
                + " RETURNING " + CHECKPOINT_COLS;
        final String advanceCheckpoint = "UPDATE " + t("sync_backfill_checkpoints") + " SET watermark = $4, observed_rows = $5,"
                + " updated_at_ms = $6 WHERE partition_id = $1 AND name = $2 AND owner_epoch = $3"
                + " AND state = 'backfilling'";
        final String sourceChangedAbove = "SELECT EXISTS (SELECT 1 FROM " + t("sync_changes")
                + " WHERE partition_id = $1 AND tbl = ANY($2) AND commit_seq > $3)";
        final String activateCheckpoint = "UPDATE " + t("sync_backfill_checkpoints") + " SET state = 'activated',"
                + " watermark = $3, updated_at_ms = $4 WHERE partition_id = $1 AND name = $2";
        final String selectCheckpoint = "SELECT " + CHECKPOINT_COLS + " FROM " + t("sync_backfill_checkpoints")
                + " WHERE partition_id = $1 AND name = $2";
        final String selectCheckpointForUpdate = selectCheckpoint + " FOR UPDATE";
        // push
        final String findPushResult = "SELECT status, commit_seq, result, created_at_ms FROM " + t("sync_push_results")
                + " WHERE partition_id = $1 AND client_id = $2 AND client_commit_id = $3";
        /**
         * The records of several idempotency keys of partition {@code $1} ({@code $2} client ids, {@code $3}
         * client commit ids, parallel arrays): key columns, then the {@link #findPushResult} columns.
         */
        final String findPushResults = "SELECT r.client_id, r.client_commit_id, r.status, r.commit_seq, r.result,"
                + " r.created_at_ms FROM unnest($2::text[], $3::text[]) AS k(c, cc) JOIN " + t("sync_push_results") + " r"
                + " ON r.partition_id = $1 AND r.client_id = k.c AND r.client_commit_id = k.cc";
        final String readTombstone = "SELECT commit_seq FROM " + t("sync_tombstones")
                + " WHERE partition_id = $1 AND tbl = $2 AND row_id = $3";
        /**
         * A commit's log writes in one statement (§2.1, §2.2): the {@code sync_commits} row ({@code $1..$9};
         * its {@code BEFORE INSERT} writer-fence trigger fires as for a plain insert and fails the whole
         * statement), its changes from parallel arrays ({@code $10..$16}: change index, table, row id, op,
         * row version, scopes JSON text, payload), its scope-index keys ({@code $17} tables, {@code $18} keys)
         * and the partition's {@code max_commit_seq}. Data-modifying CTEs run to completion whether or not the
         * main query reads them, and all of them or none take effect.
         */
        final String appendCommit = appendCommitSql(false);
        /**
         * {@link #appendCommit} plus the commit's idempotency record ({@code $19..$24}: client id, client commit
         * id, status, commit seq, result, created at), inserted {@code ON CONFLICT DO NOTHING}; the one row
         * returned counts the records inserted (0: the key already holds a result).
         */
        final String appendCommitWithResult = appendCommitSql(true);
        final String deleteRowScopes = "DELETE FROM " + t("sync_row_scopes") + " WHERE partition_id = $1 AND tbl = $2 AND row_id = $3";
        final String insertRowScopes = "INSERT INTO " + t("sync_row_scopes") + " (partition_id, tbl, scope_key, row_id)"
                + " SELECT $1, $2, k, $3 FROM unnest($4::text[]) AS u(k) ON CONFLICT DO NOTHING";
        final String deleteTombstone = "DELETE FROM " + t("sync_tombstones") + " WHERE partition_id = $1 AND tbl = $2 AND row_id = $3";
        final String deleteBlobRefs = "DELETE FROM " + t("sync_blob_refs") + " WHERE partition_id = $1 AND tbl = $2 AND row_id = $3";
        final String insertBlobRefs = "INSERT INTO " + t("sync_blob_refs") + " (partition_id, blob_id, tbl, row_id, scopes)"
                + " SELECT $1, b, $2, $3, $4::text::jsonb FROM unnest($5::text[]) AS u(b) ON CONFLICT DO NOTHING";
        final String upsertTombstone = "INSERT INTO " + t("sync_tombstones") + " (partition_id, tbl, row_id, commit_seq)"
                + " VALUES ($1, $2, $3, $4) ON CONFLICT (partition_id, tbl, row_id) DO UPDATE SET commit_seq = EXCLUDED.commit_seq";
        final String forgetBlobSweeps = "DELETE FROM " + t("sync_blob_sweeps") + " WHERE partition_id = $1 AND swept_at_ms < $2";
        final String recordBlobSweeps = "INSERT INTO " + t("sync_blob_sweeps") + " (partition_id, blob_id, sweep_seq, swept_at_ms)"
                + " SELECT $1, b, s.v, $2 FROM unnest($3::text[]) AS u(b),"
                + " (SELECT nextval(" + lit(t("sync_blob_sweep_seq")) + "::regclass) AS v) AS s"
                + " ON CONFLICT (partition_id, blob_id) DO UPDATE SET sweep_seq = EXCLUDED.sweep_seq,"
                + " swept_at_ms = EXCLUDED.swept_at_ms";
        final String blobsSweptSince = "SELECT blob_id FROM " + t("sync_blob_sweeps")
                + " WHERE partition_id = $1 AND sweep_seq > $2 AND blob_id = ANY($3)";
        final String insertPushResult = "INSERT INTO " + t("sync_push_results") + " (partition_id, client_id, client_commit_id,"
                + " status, commit_seq, result, created_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING";
        // pull
        final String scopePin = "SELECT COALESCE(max(s.seq), 0) FROM unnest($3::text[]) AS k(key),"
                + " LATERAL (SELECT commit_seq AS seq FROM " + t("sync_commit_scopes")
                + " WHERE partition_id = $1 AND tbl = $2 AND scope_key = k.key AND commit_seq <= $4"
                + " ORDER BY commit_seq DESC LIMIT 1) s";
        /**
         * One batch of a commit window in one statement: the next {@code $6} distinct commit seqs of the scope
         * index ({@code $4 < seq <= $5}), each with its commit and its changes to table {@code $2} — a seq
         * without such a change still comes back once (NULL commit and change columns), so the batch size
         * and the last scanned seq are those of the index.
         */
        final String commitWindow = "SELECT s.commit_seq, c.created_at_ms, c.actor_id, c.client_id, c.client_commit_id,"
                + " ch.row_id, ch.op, ch.row_version, ch.scopes::text, ch.payload"
                + " FROM (SELECT DISTINCT commit_seq FROM " + t("sync_commit_scopes")
                + " WHERE partition_id = $1 AND tbl = $2 AND scope_key = ANY($3) AND commit_seq > $4 AND commit_seq <= $5"
                + " ORDER BY commit_seq LIMIT $6) s"
                + " LEFT JOIN (" + t("sync_commits") + " c JOIN " + t("sync_changes") + " ch"
                + " ON ch.partition_id = c.partition_id AND ch.commit_seq = c.commit_seq AND ch.tbl = $2)"
                + " ON c.partition_id = $1 AND c.commit_seq = s.commit_seq"
                + " ORDER BY s.commit_seq, ch.change_index";
        final String rowScopesTable = t("sync_row_scopes");
        // blob reference index
        final String blobReferences = "SELECT tbl, row_id, scopes::text FROM " + t("sync_blob_refs")
                + " WHERE partition_id = $1 AND blob_id = $2 ORDER BY tbl, row_id LIMIT $3";
        final String blobReferencesAfter = "SELECT tbl, row_id, scopes::text FROM " + t("sync_blob_refs")
                + " WHERE partition_id = $1 AND blob_id = $2 AND (tbl, row_id) > ($4, $5) ORDER BY tbl, row_id LIMIT $3";
        final String referencedBlobIds = "SELECT DISTINCT blob_id FROM " + t("sync_blob_refs")
                + " WHERE partition_id = $1 AND blob_id = ANY($2)";
        final String blobSweepMark = "SELECT COALESCE(max(sweep_seq), 0) FROM " + t("sync_blob_sweeps") + " WHERE partition_id = $1";
        // client records
        final String upsertClient = "INSERT INTO " + t("sync_clients") + " (partition_id, client_id, actor_id, cursor, updated_at_ms,"
                + " subscriptions, wire_version) VALUES ($1, $2, $3, $4, $5, $6::text::jsonb, $7)"
                + " ON CONFLICT (partition_id, client_id) DO UPDATE SET actor_id = EXCLUDED.actor_id, cursor = EXCLUDED.cursor,"
                + " updated_at_ms = EXCLUDED.updated_at_ms, subscriptions = EXCLUDED.subscriptions, wire_version = EXCLUDED.wire_version";
        /**
         * The request exit in one statement: the client record upsert as a data-modifying CTE ({@code $3..$9},
         * the record's columns in table order) and the {@link #serveGateSql} read
         * ({@code $1} partition, {@code $2} running version). The gate reads no {@code sync_clients} row, so
         * the CTE's write being invisible to the statement's own snapshot changes nothing; that snapshot is
         * taken when the statement starts, after every earlier statement of the request.
         */
        final String finishRequest = "WITH up AS (INSERT INTO " + t("sync_clients") + " (partition_id, client_id, actor_id,"
                + " cursor, updated_at_ms, subscriptions, wire_version) VALUES ($3, $4, $5, $6, $7, $8::text::jsonb, $9)"
                + " ON CONFLICT (partition_id, client_id) DO UPDATE SET actor_id = EXCLUDED.actor_id, cursor = EXCLUDED.cursor,"
                + " updated_at_ms = EXCLUDED.updated_at_ms, subscriptions = EXCLUDED.subscriptions, wire_version = EXCLUDED.wire_version) "
                + serveGateSql(true);
        final String readClient = "SELECT " + CLIENT_COLS + " FROM " + t("sync_clients") + " WHERE partition_id = $1 AND client_id = $2";
        final String listClients = "SELECT " + CLIENT_COLS + " FROM " + t("sync_clients")
                + " WHERE partition_id = $1 ORDER BY client_id COLLATE \"C\"";
        // pruning
        final String setHorizon = "UPDATE " + t("sync_partitions") + " SET horizon_seq = $2 WHERE partition_id = $1";
        final String pruneCommitScopes = "DELETE FROM " + t("sync_commit_scopes") + " WHERE partition_id = $1 AND commit_seq <= $2";
        final String pruneChanges = "DELETE FROM " + t("sync_changes") + " WHERE partition_id = $1 AND commit_seq <= $2";
        final String pruneCommits = "DELETE FROM " + t("sync_commits") + " WHERE partition_id = $1 AND commit_seq <= $2";
        final String pruneTombstones = "DELETE FROM " + t("sync_tombstones") + " WHERE partition_id = $1 AND commit_seq <= $2";
    }

    public String pgSchema() {
        return pgSchema;
    }

    /** The qualified, quoted name of a storage object. */
    public String qualified(String name) {
        return q(pgSchema) + "." + q(name);
    }

    /** The physical projection table of a synced table (unqualified). */
    public static String rowTableName(String table) {
        return RowTable.physicalName(table);
    }

    /** A quoted PostgreSQL identifier (shared by the stores that live in the same PostgreSQL schema). */
    /**
     * Runs idempotent DDL in one transaction under an advisory lock on {@code lockName}, so concurrent
     * starters (pods, test classes) apply it one at a time. Notices are silenced.
     */
    public static Uni<Void> applyDdl(Pool pool, String lockName, List<String> ddl) {
        return pool.withTransaction(conn -> conn.preparedQuery("SELECT pg_advisory_xact_lock(hashtext($1))")
                .execute(Tuple.of(lockName))
                .chain(() -> conn.query("SET LOCAL client_min_messages = warning").execute())
                .chain(() -> io.smallrye.mutiny.Multi.createFrom().iterable(ddl)
                        .onItem().transformToUniAndConcatenate(sql -> conn.query(sql).execute())
                        .collect().last())
                .replaceWithVoid());
    }

    public static String q(String ident) {
        return '"' + ident.replace("\"", "\"\"") + '"';
    }

    private String t(String name) {
        return qualified(name);
    }

    // ------------------------------------------------------------------------------------------------
    // ensureSchema (§2.4)
    // ------------------------------------------------------------------------------------------------

    List<String> coreDdl() {
        return List.of(
                "CREATE SCHEMA IF NOT EXISTS " + q(pgSchema),
                "CREATE TABLE IF NOT EXISTS " + t("sync_schema") + " (id integer PRIMARY KEY CHECK (id = 1),"
                        + " schema_version integer NOT NULL, layouts text NOT NULL, updated_at_ms bigint NOT NULL)",
                "CREATE TABLE IF NOT EXISTS " + t("sync_partitions") + " (partition_id text PRIMARY KEY,"
                        + " log_epoch text NOT NULL, max_commit_seq bigint NOT NULL DEFAULT 0,"
                        + " horizon_seq bigint NOT NULL DEFAULT 0, created_at_ms bigint NOT NULL,"
                        + " last_seen_at_ms bigint NOT NULL)",
                "CREATE TABLE IF NOT EXISTS " + t("sync_commits") + " (partition_id text NOT NULL,"
                        + " commit_seq bigint NOT NULL, created_at_ms bigint NOT NULL, actor_id text NOT NULL,"
                        + " client_id text NOT NULL, client_commit_id text NOT NULL, change_count integer NOT NULL,"
                        + " tables text[] NOT NULL, writer_version bigint, PRIMARY KEY (partition_id, commit_seq))",
                "CREATE TABLE IF NOT EXISTS " + t("sync_changes") + " (partition_id text NOT NULL,"
                        + " commit_seq bigint NOT NULL, change_index integer NOT NULL, tbl text NOT NULL,"
                        + " row_id text COLLATE \"C\" NOT NULL, op integer NOT NULL, row_version bigint,"
                        + " scopes jsonb NOT NULL, payload bytea, PRIMARY KEY (partition_id, commit_seq, change_index))",
                "CREATE TABLE IF NOT EXISTS " + t("sync_commit_scopes") + " (partition_id text NOT NULL,"
                        + " tbl text NOT NULL, scope_key text NOT NULL, commit_seq bigint NOT NULL,"
                        + " PRIMARY KEY (partition_id, tbl, scope_key, commit_seq))",
                "CREATE INDEX IF NOT EXISTS sync_commit_scopes_by_key ON " + t("sync_commit_scopes")
                        + " (partition_id, scope_key, commit_seq)",
                "CREATE INDEX IF NOT EXISTS sync_commit_scopes_by_seq ON " + t("sync_commit_scopes")
                        + " (partition_id, commit_seq)",
                "CREATE TABLE IF NOT EXISTS " + t("sync_row_scopes") + " (partition_id text NOT NULL,"
                        + " tbl text NOT NULL, scope_key text NOT NULL, row_id text COLLATE \"C\" NOT NULL,"
                        + " PRIMARY KEY (partition_id, tbl, scope_key, row_id))",
                "CREATE INDEX IF NOT EXISTS sync_row_scopes_by_row ON " + t("sync_row_scopes")
                        + " (partition_id, tbl, row_id)",
                "CREATE TABLE IF NOT EXISTS " + t("sync_push_results") + " (partition_id text NOT NULL,"
                        + " client_id text NOT NULL, client_commit_id text NOT NULL, status integer NOT NULL,"
                        + " commit_seq bigint, result bytea NOT NULL, created_at_ms bigint NOT NULL,"
                        + " PRIMARY KEY (partition_id, client_id, client_commit_id))",
                "CREATE TABLE IF NOT EXISTS " + t("sync_clients") + " (partition_id text NOT NULL,"
                        + " client_id text NOT NULL, actor_id text NOT NULL, cursor bigint NOT NULL,"
                        + " updated_at_ms bigint NOT NULL, subscriptions jsonb, wire_version integer,"
                        + " PRIMARY KEY (partition_id, client_id))",
                "CREATE TABLE IF NOT EXISTS " + t("sync_tombstones") + " (partition_id text NOT NULL,"
                        + " tbl text NOT NULL, row_id text COLLATE \"C\" NOT NULL, commit_seq bigint NOT NULL,"
                        + " PRIMARY KEY (partition_id, tbl, row_id))",
                "CREATE INDEX IF NOT EXISTS sync_tombstones_by_seq ON " + t("sync_tombstones")
                        + " (partition_id, commit_seq)",
                "CREATE TABLE IF NOT EXISTS " + t("sync_backfill_checkpoints") + " (partition_id text NOT NULL,"
                        + " name text NOT NULL, schema_version integer NOT NULL, state text NOT NULL"
                        + " CHECK (state IN ('declared', 'backfilling', 'activated')),"
                        + " watermark bigint NOT NULL DEFAULT 0, owner_epoch bigint NOT NULL DEFAULT 0,"
                        + " observed_rows bigint NOT NULL DEFAULT 0, updated_at_ms bigint NOT NULL,"
                        + " PRIMARY KEY (partition_id, name))",
                "CREATE TABLE IF NOT EXISTS " + t("sync_writer_fence") + " (partition_id text PRIMARY KEY,"
                        + " required_writer_version integer NOT NULL)",
                // §5.9.4 blob reference index: the primary key serves the download authorization lookup with
                // the row's stored scopes included; the row index serves maintenance on upsert/delete.
                "CREATE TABLE IF NOT EXISTS " + t("sync_blob_refs") + " (partition_id text NOT NULL,"
                        + " blob_id text NOT NULL, tbl text NOT NULL, row_id text COLLATE \"C\" NOT NULL,"
                        + " scopes jsonb NOT NULL, PRIMARY KEY (partition_id, blob_id, tbl, row_id) INCLUDE (scopes))",
                "CREATE INDEX IF NOT EXISTS sync_blob_refs_by_row ON " + t("sync_blob_refs") + " (partition_id, tbl, row_id)",
                // §5.9.2 orphan-sweep marks (see readBlobSweepMark)
                "CREATE SEQUENCE IF NOT EXISTS " + t("sync_blob_sweep_seq"),
                "CREATE TABLE IF NOT EXISTS " + t("sync_blob_sweeps") + " (partition_id text NOT NULL,"
                        + " blob_id text NOT NULL, sweep_seq bigint NOT NULL, swept_at_ms bigint NOT NULL,"
                        + " PRIMARY KEY (partition_id, blob_id))",
                "CREATE INDEX IF NOT EXISTS sync_blob_sweeps_by_seq ON " + t("sync_blob_sweeps") + " (partition_id, sweep_seq)",
                // Guarded so a database that already has them sees no DDL (ALTER/CREATE TRIGGER would take
                // an ACCESS EXCLUSIVE lock on sync_commits on every start-up).
                "DO $do$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = " + lit(t("sync_commits"))
                        + "::regclass AND attname = 'writer_version' AND NOT attisdropped) THEN"
                        + " ALTER TABLE " + t("sync_commits") + " ADD COLUMN IF NOT EXISTS writer_version bigint;"
                        + " END IF; END $do$",
                "DO $do$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
                        + " WHERE n.nspname = " + lit(pgSchema) + " AND p.proname = " + lit(FENCE_TRIGGER) + ") THEN"
                        + " CREATE FUNCTION " + t(FENCE_TRIGGER) + "() RETURNS trigger LANGUAGE plpgsql AS $fn$"
                        + " DECLARE required integer;"
                        + " BEGIN"
                        + " SELECT f.required_writer_version INTO required FROM " + t("sync_writer_fence") + " f"
                        + " WHERE f.partition_id = NEW.partition_id;"
                        + " IF FOUND AND (NEW.writer_version IS NULL OR NEW.writer_version < required) THEN"
                        + " RAISE EXCEPTION 'sync.storage.writer_fence_rejected' USING ERRCODE = '" + FENCE_SQLSTATE + "',"
                        + " DETAIL = required::text;"
                        + " END IF;"
                        + " RETURN NEW;"
                        + " END $fn$;"
                        + " END IF; END $do$",
                "DO $do$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = " + lit(t("sync_commits"))
                        + "::regclass AND tgname = " + lit(FENCE_TRIGGER) + ") THEN"
                        + " CREATE TRIGGER " + q(FENCE_TRIGGER) + " BEFORE INSERT ON " + t("sync_commits")
                        + " FOR EACH ROW EXECUTE FUNCTION " + t(FENCE_TRIGGER) + "();"
                        + " END IF; END $do$");
    }

    /** A SQL string literal. */
    static String lit(String text) {
        return "'" + text.replace("'", "''") + "'";
    }

    String createRowTableDdl(TableSchema table) {
        StringBuilder sb = new StringBuilder("CREATE TABLE IF NOT EXISTS ")
                .append(t(RowTable.physicalName(table.name()))).append(" (");
        for (ColumnSchema c : table.columns()) {
            sb.append(q(c.name())).append(' ').append(RowTable.sqlType(c.type()));
            if (!c.nullable()) {
                sb.append(" NOT NULL");
            }
            sb.append(", ");
        }
        sb.append("\"_sync_partition\" text NOT NULL, \"_sync_row_id\" text COLLATE \"C\" NOT NULL,")
                .append(" \"_sync_server_version\" bigint NOT NULL, \"_sync_scopes\" jsonb NOT NULL,")
                .append(" \"_sync_payload\" bytea, \"_sync_column_versions\" bytea,")
                .append(" PRIMARY KEY (\"_sync_partition\", \"_sync_row_id\"))");
        return sb.toString();
    }

    @Override
    public Uni<Void> ensureSchema(CompiledSchema running) {
        return ensureSchema(running, List.of());
    }

    /**
     * Two transactions. The first (under the ensureSchema advisory lock) applies the idempotent core DDL and
     * reads the marker: an equal version is verified and the declarations installed right there; a newer
     * stored version refuses. A missing or older marker ends it and runs {@link #migrate} in a second
     * transaction whose first statement is the {@code sync_partitions} table lock, which re-reads the marker
     * (another process may have migrated meanwhile) before acting.
     */
    @Override
    public Uni<Void> ensureSchema(CompiledSchema running, List<CheckpointDeclaration> checkpoints) {
        Objects.requireNonNull(running, "schema");
        List<CheckpointDeclaration> declarations = List.copyOf(checkpoints);
        long nowMs = System.currentTimeMillis();
        return pool.withTransaction(conn -> advisoryLock(conn)
                        // "already exists, skipping" notices of the idempotent DDL are noise
                        .chain(() -> conn.query("SET LOCAL client_min_messages = warning").execute())
                        .chain(() -> execAll(conn, coreDdl()))
                        .chain(() -> readMarker(conn))
                        .chain(marker -> {
                            if (marker == null || marker.getInteger(0) < running.version()) {
                                return Uni.createFrom().item(Boolean.TRUE);
                            }
                            return sameVersionOrNewer(conn, running, marker, declarations, nowMs).replaceWith(Boolean.FALSE);
                        }))
                .chain(needsMigration -> needsMigration
                        ? pool.withTransaction(conn -> migrate(conn, running, declarations, nowMs))
                        : Uni.createFrom().voidItem())
                .invoke(() -> install(running));
    }

    private Uni<Void> migrate(SqlConnection conn, CompiledSchema running, List<CheckpointDeclaration> declarations, long nowMs) {
        // §2.4 writer fence: the table lock is the transaction's FIRST statement. EXCLUSIVE conflicts with the
        // ROW SHARE lock of a push's SELECT ... FOR UPDATE on its partition row, so this waits for in-flight
        // pushes and blocks later ones (of any binary) until the new marker and the fences are committed.
        return conn.query("LOCK TABLE " + t("sync_partitions") + " IN EXCLUSIVE MODE").execute()
                .chain(() -> advisoryLock(conn))
                .chain(() -> conn.query("SET LOCAL client_min_messages = warning").execute())
                .chain(() -> readMarker(conn))
                .chain(marker -> {
                    Uni<Void> ddl;
                    if (marker == null) {
                        ddl = createFresh(conn, running);
                    } else if (marker.getInteger(0) < running.version()) {
                        ddl = upgrade(conn, running, TableLayout.parse(marker.getString(1)));
                    } else {
                        return sameVersionOrNewer(conn, running, marker, declarations, nowMs);
                    }
                    return ddl.chain(() -> raiseAllFences(conn, running.version()))
                            .chain(() -> installCheckpoints(conn, declarations, nowMs));
                });
    }

    private Uni<Void> sameVersionOrNewer(
            SqlConnection conn, CompiledSchema running, Row marker, List<CheckpointDeclaration> declarations, long nowMs) {
        int stored = marker.getInteger(0);
        if (stored == running.version()) {
            return verifySameVersion(conn, running, TableLayout.parse(marker.getString(1)))
                    .chain(() -> installCheckpoints(conn, declarations, nowMs));
        }
        return Uni.createFrom().failure(new StorageException(StorageException.SCHEMA_NOT_READY,
                "stored schema version is newer than the running schema",
                Map.of("storedVersion", stored, "runningVersion", running.version())));
    }

    private Uni<RowSet<Row>> advisoryLock(SqlConnection conn) {
        return conn.preparedQuery("SELECT pg_advisory_xact_lock(hashtext($1))")
                .execute(Tuple.of("syncular.ensureSchema:" + pgSchema));
    }

    private Uni<Row> readMarker(SqlConnection conn) {
        return conn.query(sql.readMarker).execute()
                .map(PostgresSyncStorage::first);
    }

    /** Raises the fence of every registered partition to {@code version}, never lowering one. */
    private Uni<Void> raiseAllFences(SqlConnection conn, int version) {
        return conn.preparedQuery(sql.raiseAllFences)
                .execute(Tuple.of(version))
                .replaceWithVoid();
    }

    /**
     * Installs declarations (state {@code declared}; an existing row, whatever its state, is left alone) and
     * raises each declared partition's fence to the checkpoint's version, never lowering it.
     */
    private Uni<Void> installCheckpoints(SqlClient c, List<CheckpointDeclaration> declarations, long nowMs) {
        if (declarations.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        List<Tuple> rows = new ArrayList<>();
        List<Tuple> fences = new ArrayList<>();
        for (CheckpointDeclaration d : declarations) {
            rows.add(Tuple.of(d.partition(), d.name(), d.schemaVersion(), nowMs));
            fences.add(Tuple.of(d.partition(), d.schemaVersion()));
        }
        return c.preparedQuery(sql.insertCheckpoint).executeBatch(rows)
                .chain(() -> c.preparedQuery(sql.raiseFence).executeBatch(fences))
                .replaceWithVoid();
    }

    private static final String INSERT_CHECKPOINT_SQL = "INSERT INTO %s (" + CHECKPOINT_COLS + ")"
            + " VALUES ($1, $2, $3, 'declared', 0, 0, 0, $4) ON CONFLICT (partition_id, name) DO NOTHING";
    private static final String RAISE_FENCE_SQL = "INSERT INTO %s AS f (partition_id, required_writer_version)"
            + " VALUES ($1, $2) ON CONFLICT (partition_id) DO UPDATE"
            + " SET required_writer_version = GREATEST(f.required_writer_version, EXCLUDED.required_writer_version)";

    private void install(CompiledSchema running) {
        Map<String, RowTable> m = new HashMap<>();
        for (TableSchema ts : running.tables()) {
            m.put(ts.name(), new RowTable(ts, t(RowTable.physicalName(ts.name()))));
        }
        this.tables = Map.copyOf(m);
        this.schema = running;
    }

    private Uni<Void> createFresh(SqlConnection conn, CompiledSchema running) {
        List<String> ddl = new ArrayList<>();
        for (TableSchema ts : running.tables()) {
            ddl.add(createRowTableDdl(ts));
        }
        return execAll(conn, ddl).chain(() -> writeMarker(conn, running));
    }

    private Uni<Void> writeMarker(SqlConnection conn, CompiledSchema running) {
        return conn.preparedQuery(sql.writeMarker)
                .execute(Tuple.of(running.version(), TableLayout.render(running), System.currentTimeMillis()))
                .replaceWithVoid();
    }

    /** §2.4 same-version readiness: compare persisted layouts, then the catalog; never writes. */
    private Uni<Void> verifySameVersion(SqlConnection conn, CompiledSchema running, Map<String, TableLayout> stored) {
        StorageException storedMismatch = TableLayout.compare(running, stored);
        if (storedMismatch != null) {
            return Uni.createFrom().failure(storedMismatch);
        }
        List<String> physicalNames = new ArrayList<>();
        for (TableSchema ts : running.tables()) {
            physicalNames.add(RowTable.physicalName(ts.name()));
        }
        String[] names = physicalNames.toArray(String[]::new);
        Uni<RowSet<Row>> columns = conn.preparedQuery("SELECT table_name::text, column_name::text, data_type::text, is_nullable::text"
                        + " FROM information_schema.columns WHERE table_schema = $1 AND table_name = ANY($2)")
                .execute(Tuple.of(pgSchema).addArrayOfString(names));
        Uni<RowSet<Row>> pks = conn.preparedQuery("SELECT c.relname::text, a.attname::text, k.ord"
                        + " FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid"
                        + " JOIN pg_namespace n ON n.oid = c.relnamespace"
                        + " CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)"
                        + " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum"
                        + " WHERE i.indisprimary AND n.nspname = $1 AND c.relname = ANY($2) ORDER BY c.relname, k.ord")
                .execute(Tuple.of(pgSchema).addArrayOfString(names));
        return columns.chain(cols -> pks.map(pk -> {
            Map<String, Map<String, String[]>> catalog = new HashMap<>();
            for (Row r : cols) {
                catalog.computeIfAbsent(r.getString(0), k -> new HashMap<>())
                        .put(r.getString(1), new String[] {r.getString(2), r.getString(3)});
            }
            Map<String, List<String>> primaryKeys = new HashMap<>();
            for (Row r : pk) {
                primaryKeys.computeIfAbsent(r.getString(0), k -> new ArrayList<>()).add(r.getString(1));
            }
            StorageException e = physicalMismatch(running, catalog, primaryKeys);
            if (e != null) {
                throw e;
            }
            return null;
        })).replaceWithVoid();
    }

    private static StorageException physicalMismatch(
            CompiledSchema running, Map<String, Map<String, String[]>> catalog, Map<String, List<String>> primaryKeys) {
        for (TableSchema ts : running.tables()) {
            String physical = RowTable.physicalName(ts.name());
            Map<String, String[]> cols = catalog.get(physical);
            if (cols == null || cols.isEmpty()) {
                return physical(ts.name(), null, "missing_table", null, null);
            }
            for (ColumnSchema c : ts.columns()) {
                if (!cols.containsKey(c.name())) {
                    return physical(ts.name(), c.name(), "missing_column", null, null);
                }
            }
            for (String[] internal : RowTable.INTERNAL_COLUMNS) {
                String[] actual = cols.get(internal[0]);
                if (actual == null) {
                    return physical(ts.name(), internal[0], "missing_column", null, null);
                }
                if (!internal[1].equals(actual[0])) {
                    return physical(ts.name(), internal[0], "type", internal[1], actual[0]);
                }
                if (!internal[2].equals(actual[1])) {
                    return physical(ts.name(), internal[0], "nullability", nullability(internal[2]), nullability(actual[1]));
                }
            }
            List<String> pk = primaryKeys.getOrDefault(physical, List.of());
            if (!pk.equals(List.of("_sync_partition", "_sync_row_id"))) {
                return physical(ts.name(), null, "primary_key", null, null);
            }
        }
        return null;
    }

    private static String nullability(String isNullable) {
        return "YES".equals(isNullable) ? "nullable" : "not_null";
    }

    private static StorageException physical(String table, String column, String reason, String expected, String actual) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("table", table);
        if (column != null) {
            d.put("column", column);
        }
        d.put("reason", reason);
        if (expected != null) {
            d.put("expected", expected);
            d.put("actual", actual);
        }
        return new StorageException(StorageException.PHYSICAL_LAYOUT_MISMATCH,
                "database catalog disagrees with the storage layout of a synced table", d);
    }

    /**
     * Lower stored version: additive upgrade in the caller's transaction. New tables are created; an existing
     * table's persisted columns must be an unchanged prefix of the running columns (name, type, nullability),
     * and the trailing new columns are added nullable. {@code _sync_column_versions} is added when absent.
     */
    private Uni<Void> upgrade(SqlConnection conn, CompiledSchema running, Map<String, TableLayout> stored) {
        List<String> ddl = new ArrayList<>();
        for (TableSchema ts : running.tables()) {
            TableLayout before = stored.get(ts.name());
            String physical = t(RowTable.physicalName(ts.name()));
            ddl.add(createRowTableDdl(ts));
            if (before == null) {
                continue;
            }
            TableLayout now = TableLayout.of(ts);
            if (before.columns().size() > now.columns().size()
                    || !now.columns().subList(0, before.columns().size()).equals(before.columns())
                    || !before.primaryKey().equals(now.primaryKey())) {
                return Uni.createFrom().failure(new StorageException(StorageException.UNSUPPORTED_MIGRATION,
                        "schema upgrade is not additive", Map.of("table", ts.name())));
            }
            for (int i = before.columns().size(); i < ts.columnCount(); i++) {
                ColumnSchema c = ts.column(i);
                ddl.add("ALTER TABLE " + physical + " ADD COLUMN IF NOT EXISTS " + q(c.name()) + " " + RowTable.sqlType(c.type()));
            }
            ddl.add("ALTER TABLE " + physical + " ADD COLUMN IF NOT EXISTS \"_sync_column_versions\" bytea");
        }
        return execAll(conn, ddl).chain(() -> writeMarker(conn, running));
    }

    // ------------------------------------------------------------------------------------------------
    // partition registry (§2.1)
    // ------------------------------------------------------------------------------------------------

    static String newLogEpoch() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    /**
     * How stale the stored {@code last_seen_at_ms} may get before a touch writes it (in between, touches are
     * merged in {@link #seenOverlay} and reported by this instance's reads).
     */
    static final long LAST_SEEN_REFRESH_MS = 60_000L;
    private static final int MAX_OVERLAY = 100_000;
    /** Per partition: the newest touch time not yet written to {@code sync_partitions.last_seen_at_ms}. */
    private final java.util.concurrent.ConcurrentHashMap<String, Long> seenOverlay = new java.util.concurrent.ConcurrentHashMap<>();

    /** {@code state} with this instance's unwritten touches merged into its last-seen time. */
    private PartitionState withOverlay(PartitionState state) {
        if (state == null) {
            return null;
        }
        Long seen = seenOverlay.get(state.partition());
        return seen == null || seen <= state.lastSeenAtMs() ? state : new PartitionState(state.partition(), state.logEpoch(),
                state.maxCommitSeq(), state.horizonSeq(), state.createdAtMs(), seen);
    }

    /**
     * A plain read in the common case: the partition row is inserted only when missing, and its last-seen
     * time is written at most every {@link #LAST_SEEN_REFRESH_MS} (without ever waiting for the partition
     * row lock a push holds: {@code SKIP LOCKED}); touches in between are kept in memory and merged into
     * this instance's partition reads.
     */
    @Override
    public Uni<PartitionState> touchPartition(String partition, long nowMs) {
        return pool.preparedQuery(sql.selectPartition)
                .execute(Tuple.of(partition))
                .chain(rs -> {
                    Row r = first(rs);
                    return r == null ? insertPartition(partition, nowMs) : touched(partitionState(r), nowMs);
                });
    }

    /** The touch of a registered partition whose stored row is {@code stored}; see {@link #touchPartition}. */
    private Uni<PartitionState> touched(PartitionState stored, long nowMs) {
        String partition = stored.partition();
        PartitionState seen = withOverlay(stored);
        if (nowMs <= seen.lastSeenAtMs()) {
            return Uni.createFrom().item(seen);
        }
        if (nowMs - stored.lastSeenAtMs() < LAST_SEEN_REFRESH_MS
                && (seenOverlay.size() < MAX_OVERLAY || seenOverlay.containsKey(partition))) {
            seenOverlay.merge(partition, nowMs, Math::max);
            return Uni.createFrom().item(withOverlay(stored));
        }
        return pool.preparedQuery(sql.refreshLastSeen)
                .execute(Tuple.of(partition, nowMs))
                .map(us -> {
                    Row u = first(us);
                    if (u == null) {
                        // a push holds the row: keep the touch in memory, a later one writes it
                        seenOverlay.merge(partition, nowMs, Math::max);
                        return withOverlay(stored);
                    }
                    PartitionState written = partitionState(u);
                    seenOverlay.computeIfPresent(partition, (k, v) -> v <= written.lastSeenAtMs() ? null : v);
                    return withOverlay(written);
                });
    }

    private Uni<PartitionState> insertPartition(String partition, long nowMs) {
        return pool.preparedQuery(sql.insertPartition)
                .execute(Tuple.of(partition, newLogEpoch(), nowMs))
                .map(rs -> withOverlay(partitionState(first(rs))));
    }

    @Override
    public Uni<PartitionState> readPartition(String partition) {
        return pool.preparedQuery(sql.selectPartition)
                .execute(Tuple.of(partition))
                .map(rs -> {
                    Row r = first(rs);
                    return r == null ? null : withOverlay(partitionState(r));
                });
    }

    @Override
    public Uni<List<PartitionState>> listPartitions() {
        return pool.query(sql.listPartitions)
                .execute()
                .map(rs -> {
                    List<PartitionState> out = new ArrayList<>();
                    for (Row r : rs) {
                        out.add(withOverlay(partitionState(r)));
                    }
                    return out;
                });
    }

    @Override
    public Uni<PartitionState> rotateLogEpoch(String partition) {
        return pool.withTransaction(conn -> conn.preparedQuery(sql.rotateLogEpoch)
                        .execute(Tuple.of(partition, newLogEpoch()))
                        .chain(rs -> {
                            Row r = first(rs);
                            if (r == null) {
                                return Uni.createFrom().failure(unknownPartition());
                            }
                            PartitionState state = withOverlay(partitionState(r));
                            return conn.preparedQuery(sql.deleteClients)
                                    .execute(Tuple.of(partition))
                                    .replaceWith(state);
                        }));
    }

    private static PartitionState partitionState(Row r) {
        return new PartitionState(r.getString(0), r.getString(1), r.getLong(2), r.getLong(3), r.getLong(4), r.getLong(5));
    }

    private static StorageException unknownPartition() {
        return new StorageException(StorageException.UNKNOWN_PARTITION, "partition is not registered", Map.of());
    }

    private Uni<PartitionState> lockPartition(SqlConnection conn, String partition) {
        return conn.preparedQuery(sql.lockPartition)
                .execute(Tuple.of(partition))
                .map(rs -> {
                    Row r = first(rs);
                    if (r == null) {
                        throw unknownPartition();
                    }
                    return partitionState(r);
                });
    }

    // ------------------------------------------------------------------------------------------------
    // backfill checkpoints and serve gate (§2.4, RFC 0007)
    // ------------------------------------------------------------------------------------------------

    /**
     * One statement, one snapshot: the marker (0 when absent), the partition's log epoch ({@code null} when
     * unregistered) and its non-activated checkpoints at the running version as a JSON array. With
     * {@code atVersion} false, the checkpoints of every schema version ({@code $2} is not used).
     */
    private String serveGateSql(boolean atVersion) {
        return "SELECT COALESCE((SELECT schema_version FROM " + t("sync_schema") + " WHERE id = 1), 0),"
                + " p.log_epoch, " + pendingCheckpointsSql(atVersion) + ", p.horizon_seq"
                + " FROM (VALUES (1)) AS one(x) LEFT JOIN " + t("sync_partitions") + " p ON p.partition_id = $1";
    }

    /** See {@link Sql#appendCommit} and {@link Sql#appendCommitWithResult}. */
    private String appendCommitSql(boolean withResult) {
        return "WITH c AS (INSERT INTO " + t("sync_commits") + " (partition_id, commit_seq, created_at_ms, actor_id,"
                + " client_id, client_commit_id, change_count, tables, writer_version)"
                + " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)),"
                + " ch AS (INSERT INTO " + t("sync_changes") + " (partition_id, commit_seq, change_index, tbl, row_id, op,"
                + " row_version, scopes, payload) SELECT $1, $2, u.i, u.t, u.r, u.o, u.v, u.s::jsonb, u.p"
                + " FROM unnest($10::integer[], $11::text[], $12::text[], $13::integer[], $14::bigint[], $15::text[],"
                + " $16::bytea[]) AS u(i, t, r, o, v, s, p)),"
                + " sc AS (INSERT INTO " + t("sync_commit_scopes") + " (partition_id, tbl, scope_key, commit_seq)"
                + " SELECT $1, u.t, u.k, $2 FROM unnest($17::text[], $18::text[]) AS u(t, k) ON CONFLICT DO NOTHING),"
                + " mx AS (UPDATE " + t("sync_partitions") + " SET max_commit_seq = $2 WHERE partition_id = $1)"
                + (withResult
                        ? ", pr AS (INSERT INTO " + t("sync_push_results") + " (partition_id, client_id, client_commit_id,"
                                + " status, commit_seq, result, created_at_ms) VALUES ($1, $19, $20, $21, $22, $23, $24)"
                                + " ON CONFLICT DO NOTHING RETURNING 1)"
                                + " SELECT count(*) FROM pr"
                        : " SELECT 1");
    }

    /** The non-activated checkpoints of partition {@code $1} (at version {@code $2}) as a JSON array text. */
    private String pendingCheckpointsSql(boolean atVersion) {
        return "(SELECT json_agg(json_build_object('partition_id', c.partition_id, 'name', c.name,"
                + " 'schema_version', c.schema_version, 'state', c.state, 'watermark', c.watermark,"
                + " 'owner_epoch', c.owner_epoch, 'observed_rows', c.observed_rows, 'updated_at_ms', c.updated_at_ms)"
                + " ORDER BY c.name COLLATE \"C\")"
                + " FROM " + t("sync_backfill_checkpoints") + " c"
                + " WHERE c.partition_id = $1" + (atVersion ? " AND c.schema_version = $2" : "")
                + " AND c.state <> 'activated')::text";
    }

    /**
     * The request entry read ({@code $1} partition, {@code $2} running version, {@code $3} client id): the
     * {@link #serveGateSql} columns (0-3), then the partition row (4-7: id, max commit seq, created,
     * last seen; the id is NULL when unregistered) and the client record (8-12; NULL when absent).
     */
    private String entrySql() {
        return "SELECT COALESCE((SELECT schema_version FROM " + t("sync_schema") + " WHERE id = 1), 0),"
                + " p.log_epoch, " + pendingCheckpointsSql(true) + ", p.horizon_seq,"
                + " p.partition_id, p.max_commit_seq, p.created_at_ms, p.last_seen_at_ms,"
                + " cl.actor_id, cl.cursor, cl.updated_at_ms, cl.subscriptions::text, cl.wire_version"
                + " FROM (VALUES (1)) AS one(x) LEFT JOIN " + t("sync_partitions") + " p ON p.partition_id = $1"
                + " LEFT JOIN " + t("sync_clients") + " cl ON cl.partition_id = $1 AND cl.client_id = $3";
    }

    /** One statement: partition state, serve gate and client record from one snapshot; see {@link SyncStorage}. */
    @Override
    public Uni<RequestEntry> enterRequest(String partition, String clientId, int runningSchemaVersion, long nowMs) {
        Tuple args = Tuple.of(partition, runningSchemaVersion, clientId);
        return pool.preparedQuery(sql.enterRequest).execute(args).chain(rs -> {
            Row r = first(rs);
            if (r.getString(4) == null) {
                // unregistered: register it (the touch), then read again — once per partition
                return insertPartition(partition, nowMs)
                        .chain(() -> pool.preparedQuery(sql.enterRequest).execute(args))
                        .map(again -> requestEntry(first(again), partition, clientId, runningSchemaVersion));
            }
            RequestEntry entry = requestEntry(r, partition, clientId, runningSchemaVersion);
            PartitionState stored = storedPartition(r);
            // The touch: usually in memory; the snapshot's state is kept (only last-seen merged) so partition
            // state, gate and client record stay mutually consistent.
            return touched(stored, nowMs).map(t -> t.lastSeenAtMs() <= entry.partition().lastSeenAtMs() ? entry
                    : new RequestEntry(withLastSeen(entry.partition(), t.lastSeenAtMs()), entry.gate(), entry.client()));
        });
    }

    /** The stored partition row of an {@link #entrySql} row (no overlay). */
    private static PartitionState storedPartition(Row r) {
        return new PartitionState(r.getString(4), r.getString(1), r.getLong(5), r.getLong(3), r.getLong(6), r.getLong(7));
    }

    private RequestEntry requestEntry(Row r, String partition, String clientId, int runningSchemaVersion) {
        if (r.getString(4) == null) {
            throw unknownPartition();
        }
        ClientRecord client = r.getString(8) == null ? null : new ClientRecord(partition, clientId, r.getString(8),
                r.getLong(9), r.getLong(10), r.getString(11), r.getInteger(12));
        return new RequestEntry(withOverlay(storedPartition(r)), serveGate(r, runningSchemaVersion), client);
    }

    private static PartitionState withLastSeen(PartitionState s, long lastSeenAtMs) {
        return new PartitionState(s.partition(), s.logEpoch(), s.maxCommitSeq(), s.horizonSeq(), s.createdAtMs(),
                Math.max(s.lastSeenAtMs(), lastSeenAtMs));
    }

    @Override
    public Uni<GateCheck> readGateCheck(String partition, int runningSchemaVersion) {
        return pool.preparedQuery(sql.serveGate).execute(Tuple.of(partition, runningSchemaVersion))
                .map(rs -> gateCheck(first(rs), runningSchemaVersion));
    }

    private static GateCheck gateCheck(Row r, int runningSchemaVersion) {
        Long horizon = r.getLong(3);
        return new GateCheck(serveGate(r, runningSchemaVersion), horizon == null ? 0L : horizon);
    }

    /**
     * One statement (see {@link Sql#finishRequest}): the upsert's failure fails it and nothing is read past
     * it; the gate is read from a snapshot taken after every earlier statement of the request.
     */
    @Override
    public Uni<GateCheck> finishRequest(String partition, int runningSchemaVersion, ClientRecord client) {
        if (client == null) {
            return readGateCheck(partition, runningSchemaVersion);
        }
        return pool.preparedQuery(sql.finishRequest)
                .execute(Tuple.of(partition, runningSchemaVersion).addValue(client.partition()).addValue(client.clientId())
                        .addValue(client.actorId())
                        .addValue(client.cursor()).addValue(client.updatedAtMs()).addValue(client.subscriptionsJson())
                        .addValue(client.wireVersion()))
                .map(rs -> gateCheck(first(rs), runningSchemaVersion));
    }

    private Uni<ServeGate> readServeGate(SqlClient c, String partition, int runningSchemaVersion) {
        return c.preparedQuery(sql.serveGate).execute(Tuple.of(partition, runningSchemaVersion))
                .map(rs -> serveGate(first(rs), runningSchemaVersion));
    }

    /** The gate of a {@link #serveGateSql} row, keeping only the checkpoints at {@code runningSchemaVersion}. */
    private static ServeGate serveGate(Row r, int runningSchemaVersion) {
        String pending = r.getString(2);
        List<StoredCheckpoint> list = new ArrayList<>();
        if (pending != null) {
            try {
                for (JsonNode n : JSON.readTree(pending)) {
                    if (n.path("schema_version").asInt() != runningSchemaVersion) {
                        continue;
                    }
                    list.add(new StoredCheckpoint(n.path("partition_id").asText(), n.path("name").asText(),
                            n.path("schema_version").asInt(), CheckpointState.of(n.path("state").asText()),
                            n.path("watermark").asLong(), n.path("owner_epoch").asLong(),
                            n.path("observed_rows").asLong(), n.path("updated_at_ms").asLong()));
                }
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("serve gate checkpoints are not JSON", e);
            }
        }
        return new ServeGate(r.getInteger(0), r.getString(1), list);
    }

    @Override
    public Uni<ServeGate> readServeGate(String partition, int runningSchemaVersion) {
        return readServeGate(pool, partition, runningSchemaVersion);
    }

    @Override
    public Uni<List<StoredCheckpoint>> readPendingCheckpoints(int runningSchemaVersion) {
        return pool.preparedQuery(sql.pendingCheckpoints)
                .execute(Tuple.of(runningSchemaVersion))
                .map(PostgresSyncStorage::checkpoints);
    }

    @Override
    public Uni<Integer> readStoredSchemaVersion() {
        return pool.query(sql.storedSchemaVersion)
                .execute()
                .map(rs -> first(rs).getInteger(0))
                // before the first ensureSchema the marker table does not exist yet: no marker
                .onFailure(e -> e instanceof PgException pe && "42P01".equals(pe.getSqlState())).recoverWithItem(0);
    }

    @Override
    public Uni<List<StoredCheckpoint>> readCheckpoints(String partition) {
        return pool.preparedQuery(sql.checkpointsOfPartition)
                .execute(Tuple.of(partition))
                .map(PostgresSyncStorage::checkpoints);
    }

    /** Inserts the declared row if absent and raises the partition's fence (never lowering), in one transaction. */
    @Override
    public Uni<StoredCheckpoint> declareCheckpoint(String partition, String name, int schemaVersion, long nowMs) {
        CheckpointDeclaration declaration;
        try {
            declaration = new CheckpointDeclaration(partition, name, schemaVersion);
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(new StorageException(StorageException.INVALID_ARGUMENT,
                    "invalid checkpoint declaration", Map.of("reason", String.valueOf(e.getMessage()))));
        }
        return pool.withTransaction(conn -> installCheckpoints(conn, List.of(declaration), nowMs)
                .chain(() -> selectCheckpoint(conn, partition, name, false))
                .map(Objects::requireNonNull));
    }

    /**
     * {@code UPDATE ... owner_epoch + 1, state = 'backfilling'} for a non-activated checkpoint at that version;
     * an activated one is returned unchanged; anything else (absent, another version) is not found.
     */
    @Override
    public Uni<StoredCheckpoint> claimCheckpoint(String partition, String name, int schemaVersion, long nowMs) {
        return pool.preparedQuery(sql.claimCheckpoint)
                .execute(Tuple.of(partition, name, schemaVersion, nowMs))
                .chain(rs -> {
                    Row r = first(rs);
                    if (r != null) {
                        return Uni.createFrom().item(checkpoint(r));
                    }
                    return selectCheckpoint(pool, partition, name, false).map(existing -> {
                        if (existing == null || existing.schemaVersion() != schemaVersion
                                || existing.state() != CheckpointState.ACTIVATED) {
                            throw checkpointNotFound(name, schemaVersion);
                        }
                        return existing;
                    });
                });
    }

    @Override
    public Uni<Boolean> advanceCheckpoint(
            String partition, String name, long ownerEpoch, long watermark, long observedRows, long nowMs) {
        return advanceCheckpoint(pool, partition, name, ownerEpoch, watermark, observedRows, nowMs);
    }

    /** CAS on the owner epoch of a backfilling checkpoint; one statement, so a retry is harmless. */
    private Uni<Boolean> advanceCheckpoint(
            SqlClient c, String partition, String name, long ownerEpoch, long watermark, long observedRows, long nowMs) {
        return c.preparedQuery(sql.advanceCheckpoint)
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
    @Override
    public Uni<ActivationResult> activateCheckpoint(
            String partition, String name, long ownerEpoch, long watermark, List<String> sourceTables, long nowMs) {
        List<String> sources = List.copyOf(sourceTables);
        return pool.withTransaction(conn -> lockPartition(conn, partition)
                .chain(state -> selectCheckpoint(conn, partition, name, true).chain(cp -> {
                    if (cp == null) {
                        return Uni.createFrom().failure(checkpointNotFound(name, null));
                    }
                    if (cp.ownerEpoch() != ownerEpoch || cp.state() == CheckpointState.DECLARED) {
                        Map<String, Object> d = new LinkedHashMap<>();
                        d.put("name", name);
                        d.put("ownerEpoch", ownerEpoch);
                        d.put("currentOwnerEpoch", cp.ownerEpoch());
                        return Uni.createFrom().failure(new StorageException(StorageException.CHECKPOINT_OWNER_CHANGED,
                                "the checkpoint was claimed by another owner", d));
                    }
                    if (cp.state() == CheckpointState.ACTIVATED) {
                        return Uni.createFrom().item(ActivationResult.ACTIVATED);
                    }
                    Uni<Boolean> changed = sources.isEmpty()
                            ? Uni.createFrom().item(Boolean.FALSE)
                            : conn.preparedQuery(sql.sourceChangedAbove)
                                    .execute(Tuple.of(partition).addArrayOfString(sources.toArray(String[]::new)).addValue(watermark))
                                    .map(rs -> first(rs).getBoolean(0));
                    return changed.chain(stale -> {
                        if (stale) {
                            return Uni.createFrom().item(ActivationResult.STALE);
                        }
                        if (!sources.isEmpty() && state.horizonSeq() > watermark) {
                            return Uni.createFrom().item(ActivationResult.UNVERIFIABLE);
                        }
                        return conn.preparedQuery(sql.activateCheckpoint)
                                .execute(Tuple.of(partition, name, watermark, nowMs))
                                .replaceWith(ActivationResult.ACTIVATED);
                    });
                })));
    }

    private Uni<StoredCheckpoint> selectCheckpoint(SqlClient c, String partition, String name, boolean forUpdate) {
        return c.preparedQuery(forUpdate ? sql.selectCheckpointForUpdate : sql.selectCheckpoint)
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
        return new StoredCheckpoint(r.getString(0), r.getString(1), r.getInteger(2), CheckpointState.of(r.getString(3)),
                r.getLong(4), r.getLong(5), r.getLong(6), r.getLong(7));
    }

    private static List<StoredCheckpoint> checkpoints(RowSet<Row> rs) {
        List<StoredCheckpoint> out = new ArrayList<>();
        for (Row r : rs) {
            out.add(checkpoint(r));
        }
        return out;
    }

    /** The writer-fence trigger's failure as {@code sync.storage.writer_fence_rejected}; anything else unchanged. */
    private static Throwable fenceRejection(Throwable t, int writerVersion) {
        if (t instanceof PgException pe && FENCE_SQLSTATE.equals(pe.getSqlState())) {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("writerVersion", writerVersion);
            try {
                d.put("requiredWriterVersion", Integer.parseInt(String.valueOf(pe.getDetail()).trim()));
            } catch (NumberFormatException ignored) {
                // the trigger always sets it; tolerate a foreign one
            }
            return new StorageException(StorageException.WRITER_FENCE_REJECTED,
                    "the partition's writer fence rejects appends by this schema version", d, t);
        }
        return t;
    }

    // ------------------------------------------------------------------------------------------------
    // push (§2.3, §6.4)
    // ------------------------------------------------------------------------------------------------

    /**
     * Most partition transactions run in one database transaction (group commit). Kept well below 64, the
     * per-backend subtransaction cache of PostgreSQL (each batched transaction runs in a savepoint).
     */
    static final int MAX_GROUP = 16;

    /** A queued partition transaction: its work and where its outcome goes (after the commit). */
    private static final class Job {
        final Function<PushTx, Uni<Object>> work;
        /** The work's announced first reads, or null. */
        final PushReadHint hint;
        final java.util.concurrent.CompletableFuture<Object> result = new java.util.concurrent.CompletableFuture<>();
        Object item;
        Throwable failure;

        Job(Function<PushTx, Uni<Object>> work, PushReadHint hint) {
            this.work = work;
            this.hint = hint;
        }
    }

    /** The in-process queue of one partition; {@code running} while a drainer owns it. */
    private static final class PartitionQueue {
        final java.util.ArrayDeque<Job> jobs = new java.util.ArrayDeque<>();
        boolean running;
        boolean dead;
    }

    private final java.util.concurrent.ConcurrentHashMap<String, PartitionQueue> partitionQueues =
            new java.util.concurrent.ConcurrentHashMap<>();

    /** Reads of partition transactions answered from a group's read-ahead (see {@link PreReads}). */
    private final java.util.concurrent.atomic.LongAdder readAheadAnswers = new java.util.concurrent.atomic.LongAdder();

    /** How many {@link PushTx#findPushResult} / {@link PushTx#readRows} calls a read-ahead answered so far (tests). */
    long readAheadAnswers() {
        return readAheadAnswers.sum();
    }

    /**
     * Partition transactions queue in-process (waiting ones hold no pool connection) and the queue drains in
     * groups: one database transaction takes the partition row lock (serializing with other server
     * instances; {@code BEGIN}, the lock and the serve gate read go out pipelined), runs the queued works one
     * after the other — each in its own savepoint when there are several, so a failing work rolls back alone
     * — and commits once (one lock hand-off and one WAL flush for the group). Every work's outcome is
     * delivered only after that commit. Writes of {@link PgPushTx} are pipelined and awaited before a work
     * ends.
     */
    @Override
    public <T> Uni<T> inPartitionTransaction(String partition, Function<PushTx, Uni<T>> work) {
        return inPartitionTransaction(partition, null, work);
    }

    /**
     * {@link #inPartitionTransaction(String, Function)}; the group's first round trip also reads ahead what the
     * hinted works will read first (see {@link PreReads}).
     */
    @Override
    @SuppressWarnings("unchecked")
    public <T> Uni<T> inPartitionTransaction(String partition, PushReadHint hint, Function<PushTx, Uni<T>> work) {
        return Uni.createFrom().deferred(() -> {
            Job job = new Job((Function<PushTx, Uni<Object>>) (Function<?, ?>) work, hint);
            while (true) {
                PartitionQueue q = partitionQueues.computeIfAbsent(partition, k -> new PartitionQueue());
                boolean start;
                synchronized (q) {
                    if (q.dead) {
                        continue;
                    }
                    q.jobs.add(job);
                    start = !q.running;
                    q.running = true;
                }
                if (start) {
                    drain(partition, q);
                }
                break;
            }
            return Uni.createFrom().completionStage(job.result).map(o -> (T) o);
        });
    }

    private void drain(String partition, PartitionQueue q) {
        List<Job> group = new ArrayList<>();
        synchronized (q) {
            while (group.size() < MAX_GROUP && !q.jobs.isEmpty()) {
                group.add(q.jobs.poll());
            }
            if (group.isEmpty()) {
                q.running = false;
                q.dead = true;
                partitionQueues.remove(partition, q);
                return;
            }
        }
        runGroup(partition, group).subscribe().with(v -> {
            deliver(group, null);
            drain(partition, q);
        }, e -> {
            deliver(group, e);
            drain(partition, q);
        });
    }

    private static void deliver(List<Job> group, Throwable groupFailure) {
        for (Job j : group) {
            if (groupFailure != null) {
                j.result.completeExceptionally(groupFailure);
            } else if (j.failure != null) {
                j.result.completeExceptionally(j.failure);
            } else {
                j.result.complete(j.item);
            }
        }
    }

    /**
     * One database transaction for {@code group}; fails (everything rolled back) when the lock, a lone
     * work, a read-ahead statement or the commit fails, else each job holds its own outcome.
     */
    private Uni<Void> runGroup(String partition, List<Job> group) {
        return pool.getConnection().chain(conn -> {
            java.util.concurrent.CompletableFuture<io.vertx.mutiny.sqlclient.Transaction> begin =
                    conn.begin().subscribeAsCompletionStage();
            java.util.concurrent.CompletableFuture<RowSet<Row>> lock = conn.preparedQuery(sql.lockPartition)
                    .execute(Tuple.of(partition)).subscribeAsCompletionStage();
            // A statement of its own, not folded into the lock: one statement's gate columns would come from a
            // snapshot taken before the lock wait, missing what the previous lock holder committed (§2.4: the
            // gate is re-evaluated under the lock). A plpgsql function doing both (a fresh snapshot per
            // statement) measured no cheaper for PostgreSQL than the two pipelined statements.
            java.util.concurrent.CompletableFuture<RowSet<Row>> gate = conn.preparedQuery(sql.serveGateAllVersions)
                    .execute(Tuple.of(partition)).subscribeAsCompletionStage();
            // The hinted works' first reads, pipelined behind the gate read: they run after the lock is granted
            // (each statement its own snapshot), in the same round trip.
            PreReads pre = new PreReads(conn, partition, group);
            return Uni.createFrom().completionStage(begin).chain(tx -> Uni.createFrom().completionStage(lock)
                    .chain(rs -> Uni.createFrom().completionStage(gate).chain(g -> pre.await().chain(() -> {
                        Row r = first(rs);
                        if (r == null) {
                            throw unknownPartition();
                        }
                        GroupState gs = new GroupState(conn, withOverlay(partitionState(r)), first(g), pre);
                        if (group.size() == 1) {
                            Job only = group.get(0);
                            PgPushTx ptx = gs.next(null);
                            return Uni.createFrom().deferred(() -> only.work.apply(ptx)).call(ptx::flush)
                                    .invoke(item -> only.item = item).replaceWithVoid();
                        }
                        return Multi.createFrom().iterable(group)
                                .onItem().transformToUniAndConcatenate(job -> runInSavepoint(gs, job))
                                .collect().last();
                    })))
                    .call(tx::commit)
                    .onFailure().call(e -> tx.rollback().onFailure().recoverWithNull()))
                    .onFailure().call(e -> Uni.createFrom().completionStage(lock.handle((x, y) -> null)
                            .thenCombine(gate.handle((x, y) -> null), (x, y) -> null)
                            .thenCombine(pre.settled(), (x, y) -> null)).replaceWithVoid())
                    .eventually(conn::close);
        });
    }

    /**
     * What the works of a group wrote so far, through {@link PgPushTx}: projection rows ({@code table NUL
     * rowId}), idempotency keys ({@code clientId NUL clientCommitId}), and whether the serve gate's inputs may
     * have moved ({@link PushTx#advanceCheckpoint}). Kept for failed (rolled back) works too — a read-ahead
     * is only ever used less, never wrongly. A {@link PreRead} answers only reads nothing in here touches.
     */
    private static final class GroupWrites {
        final Set<String> rows = new java.util.HashSet<>();
        final Set<String> keys = new java.util.HashSet<>();
        boolean gateMoved;
    }

    private static String rowKey(String table, String rowId) {
        return table + '\u0000' + rowId;
    }

    private static String pushKey(String clientId, String clientCommitId) {
        return clientId + '\u0000' + clientCommitId;
    }

    /**
     * One work's read-ahead: its idempotency lookup (§2.3) and the rows it announced, read under the partition
     * lock in the group's first round trip. Answers {@link PgPushTx#findPushResult} / {@link PgPushTx#readRows}
     * when the request is covered exactly (same key; every requested id read ahead) and nothing of it was
     * written in the group since (see {@link GroupWrites}); anything else queries as without it.
     */
    private static final class PreRead {
        final PushReadHint hint;
        /** Whether the key was read ahead; then {@link #outcome} is its record or null. */
        boolean keyRead;
        /** The key's record could not be decoded: left to the work's own lookup, which reports it. */
        boolean keyUndecodable;
        PushOutcome outcome;
        /** Per table, the ids read ahead (found or not). */
        final Map<String, Set<String>> covered = new HashMap<>();
        /** Per table, the rows found. */
        final Map<String, Map<String, StoredRow>> found = new HashMap<>();

        PreRead(PushReadHint hint) {
            this.hint = hint;
        }

        boolean answers(String clientId, String clientCommitId, GroupWrites writes) {
            return keyRead && hint.clientId().equals(clientId) && hint.clientCommitId().equals(clientCommitId)
                    && !writes.keys.contains(pushKey(clientId, clientCommitId));
        }

        /** The rows as {@code readRows} returns them (request order, missing ids absent), or null when not covered. */
        Map<String, StoredRow> rows(String table, List<String> rowIds, GroupWrites writes) {
            Set<String> ids = covered.get(table);
            if (ids == null || rowIds.isEmpty()) {
                return null;
            }
            for (String id : rowIds) {
                if (!ids.contains(id) || writes.rows.contains(rowKey(table, id))) {
                    return null;
                }
            }
            return inRequestOrder(rowIds, found.getOrDefault(table, Map.of()));
        }
    }

    /**
     * The read-ahead of a group (§6.3: each push's idempotency key is checked under the partition lock). Works
     * whose hints are pairwise disjoint from every other hinted work's (no shared idempotency key, no shared
     * row) get a {@link PreRead}: one statement for all their keys and one per table for all their rows, sent
     * pipelined right behind {@code BEGIN}, the lock and the gate read — the group's first round trip. Works
     * with overlapping hints or none read as without a read-ahead.
     *
     * <p>Sound because, in the group's transaction, nothing else writes these rows or keys: pushes are
     * serialized by the partition lock, row projections and push results are written only by partition
     * transactions (the storage's other writers — pruning, log-epoch rotation, checkpoint activation — take the
     * lock too, and touch neither), and writes of the group's own works are tracked in {@link GroupWrites}
     * (disjointness keeps the hinted works off each other's read-ahead; a cascade (§6.11) or an unhinted work
     * that does write one turns that read back into a query).
     */
    private final class PreReads {
        /** Per job of the group (same index): its read-ahead, or null. */
        final PreRead[] byJob;
        /** The statements sent, each completing after its results are distributed. */
        private final List<java.util.concurrent.CompletableFuture<Void>> sent = new ArrayList<>();

        PreReads(SqlConnection conn, String partition, List<Job> group) {
            byJob = new PreRead[group.size()];
            Map<String, Integer> uses = new HashMap<>();
            for (Job j : group) {
                if (j.hint != null) {
                    for (String k : keysOf(j.hint)) {
                        uses.merge(k, 1, Integer::sum);
                    }
                }
            }
            Map<String, PreRead> byKey = new HashMap<>();
            Map<String, List<String>> idsByTable = new LinkedHashMap<>();
            Map<String, PreRead> byRow = new HashMap<>();
            for (int i = 0; i < byJob.length; i++) {
                PushReadHint h = group.get(i).hint;
                if (h == null || keysOf(h).stream().anyMatch(k -> uses.get(k) > 1)) {
                    continue;
                }
                PreRead p = new PreRead(h);
                byJob[i] = p;
                byKey.put(pushKey(h.clientId(), h.clientCommitId()), p);
                h.rows().forEach((table, ids) -> {
                    for (String id : ids) {
                        if (byRow.putIfAbsent(rowKey(table, id), p) == null) {
                            idsByTable.computeIfAbsent(table, t -> new ArrayList<>()).add(id);
                        }
                    }
                });
            }
            if (byKey.isEmpty()) {
                return;
            }
            // the idempotency keys: one statement (a scalar one for a single key, as the locked lookup)
            Uni<RowSet<Row>> keys;
            if (byKey.size() == 1) {
                PushReadHint h = byKey.values().iterator().next().hint;
                keys = conn.preparedQuery(sql.findPushResult).execute(Tuple.of(partition, h.clientId(), h.clientCommitId()))
                        .invoke(rs -> outcome(byKey.values().iterator().next(), first(rs), 0));
            } else {
                String[] clientIds = new String[byKey.size()];
                String[] commitIds = new String[byKey.size()];
                int n = 0;
                for (PreRead p : byKey.values()) {
                    clientIds[n] = p.hint.clientId();
                    commitIds[n++] = p.hint.clientCommitId();
                }
                keys = conn.preparedQuery(sql.findPushResults)
                        .execute(Tuple.of(partition).addArrayOfString(clientIds).addArrayOfString(commitIds))
                        .invoke(rs -> {
                            for (Row r : rs) {
                                PreRead p = byKey.get(pushKey(r.getString(0), r.getString(1)));
                                if (p != null) {
                                    outcome(p, r, 2);
                                }
                            }
                        });
            }
            sent.add(keys.invoke(rs -> byKey.values().forEach(p -> p.keyRead = !p.keyUndecodable)).replaceWithVoid()
                    .subscribeAsCompletionStage());
            // the rows: one statement per table for every read-ahead work (a scalar one for a single id)
            idsByTable.forEach((table, ids) -> {
                RowTable rt = tables.get(table);
                if (rt == null) {
                    return; // unknown here: the work's own read reports it
                }
                Uni<RowSet<Row>> read = ids.size() == 1
                        ? conn.preparedQuery(rt.readRowSql).execute(Tuple.of(partition, ids.get(0)))
                        : conn.preparedQuery(rt.readRowsSql).execute(Tuple.of(partition).addArrayOfString(ids.toArray(String[]::new)));
                sent.add(read.invoke(rs -> {
                    List<StoredRow> rows = new ArrayList<>();
                    try {
                        for (Row r : rs) {
                            rows.add(storedRow(rt.schema, r));
                        }
                    } catch (RuntimeException e) {
                        return; // undecodable: not read ahead, the work's own read reports it
                    }
                    for (String id : ids) {
                        byRow.get(rowKey(table, id)).covered.computeIfAbsent(table, t -> new java.util.HashSet<>()).add(id);
                    }
                    for (StoredRow row : rows) {
                        PreRead p = byRow.get(rowKey(table, row.rowId()));
                        if (p != null) {
                            p.found.computeIfAbsent(table, t -> new HashMap<>()).put(row.rowId(), row);
                        }
                    }
                }).replaceWithVoid().subscribeAsCompletionStage());
            });
        }

        private static void outcome(PreRead p, Row r, int at) {
            try {
                p.outcome = r == null ? null : pushOutcome(r, at);
            } catch (RuntimeException e) {
                p.keyUndecodable = true;
            }
        }

        /** Completes when every read-ahead statement is answered; fails with the first failure. */
        Uni<Void> await() {
            if (sent.isEmpty()) {
                return Uni.createFrom().voidItem();
            }
            return allSettled(sent);
        }

        /** Completes (never fails) when every read-ahead statement is answered. */
        java.util.concurrent.CompletableFuture<Void> settled() {
            return java.util.concurrent.CompletableFuture.allOf(
                    sent.stream().map(f -> f.handle((v, e) -> null)).toArray(java.util.concurrent.CompletableFuture[]::new));
        }
    }

    /**
     * Completes once every pipelined statement of {@code sent} is answered; fails with the first failure in
     * sending order (later ones are its consequence).
     */
    private static Uni<Void> allSettled(List<? extends java.util.concurrent.CompletableFuture<?>> sent) {
        java.util.concurrent.CompletableFuture<Void> all = java.util.concurrent.CompletableFuture
                .allOf(sent.stream().map(f -> f.handle((v, e) -> null)).toArray(java.util.concurrent.CompletableFuture[]::new));
        return Uni.createFrom().completionStage(all).chain(() -> {
            for (java.util.concurrent.CompletableFuture<?> f : sent) {
                if (f.isCompletedExceptionally()) {
                    Throwable cause = f.handle((v, e) -> e).join();
                    while (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) {
                        cause = cause.getCause();
                    }
                    return Uni.createFrom().failure(cause);
                }
            }
            return Uni.createFrom().voidItem();
        });
    }

    /** The idempotency key and the rows of a hint, each once. */
    private static Set<String> keysOf(PushReadHint h) {
        Set<String> keys = new LinkedHashSet<>();
        keys.add("k" + pushKey(h.clientId(), h.clientCommitId()));
        h.rows().forEach((table, ids) -> ids.forEach(id -> keys.add("r" + rowKey(table, id))));
        return keys;
    }

    /**
     * The running state of a group transaction: the commit sequence carries from work to work, and so do the
     * serve gate row read under the lock, the read-ahead and the record of what the works wrote.
     */
    private final class GroupState {
        final SqlConnection conn;
        final PartitionState locked;
        long maxCommitSeq;
        /** The serve gate row read right after the lock (all schema versions). */
        final Row gate;
        final PreReads pre;
        final GroupWrites writes = new GroupWrites();
        int index;

        GroupState(SqlConnection conn, PartitionState locked, Row gate, PreReads pre) {
            this.conn = conn;
            this.locked = locked;
            this.maxCommitSeq = locked.maxCommitSeq();
            this.gate = gate;
            this.pre = pre;
        }

        PgPushTx next(String savepoint) {
            PgPushTx ptx = new PgPushTx(conn, new PartitionState(locked.partition(), locked.logEpoch(), maxCommitSeq,
                    locked.horizonSeq(), locked.createdAtMs(), locked.lastSeenAtMs()), writes, pre.byJob[index]);
            index++;
            if (savepoint != null) {
                ptx.pending.add(conn.query("SAVEPOINT " + savepoint).execute().subscribeAsCompletionStage());
            }
            if (!writes.gateMoved) {
                // §2.4: each work's gate is evaluated under the lock. The row read right after the lock is what
                // a fresh read would return: its inputs (marker, log epoch, horizon, checkpoints) are written
                // by no work of the group but a checkpoint advance (then gateMoved), and otherwise only by
                // lock holders or by transactions that could as well have committed right after this read.
                ptx.gate = gate;
            } else {
                // a fresh gate read, pipelined behind the previous work's statements
                ptx.gateRead = conn.preparedQuery(sql.serveGateAllVersions).execute(Tuple.of(locked.partition()))
                        .subscribeAsCompletionStage();
            }
            return ptx;
        }
    }

    private Uni<Void> runInSavepoint(GroupState gs, Job job) {
        String name = "syncular_group_" + (gs.index + 1);
        PgPushTx ptx = gs.next(name);
        return Uni.createFrom().deferred(() -> job.work.apply(ptx)).call(ptx::flush)
                .onItem().invoke(item -> {
                    job.item = item;
                    gs.maxCommitSeq = ptx.maxCommitSeq;
                    // Not released: the next work's savepoint nests inside this one (at most MAX_GROUP deep), which
                    // rolls that work back alone just the same, and the COMMIT ends them all — one statement less
                    // per work.
                })
                .replaceWithVoid()
                .onFailure().recoverWithUni(e -> {
                    job.failure = e;
                    ptx.dropHeld();
                    return ptx.flush().onFailure().recoverWithNull()
                            .chain(() -> gs.conn.query("ROLLBACK TO SAVEPOINT " + name).execute())
                            .chain(() -> gs.conn.query("RELEASE SAVEPOINT " + name).execute())
                            .replaceWithVoid();
                });
    }

    @Override
    public Uni<PushOutcome> findPushResult(String partition, String clientId, String clientCommitId) {
        return findPushResult(pool, partition, clientId, clientCommitId);
    }

    private Uni<PushOutcome> findPushResult(SqlClient c, String partition, String clientId, String clientCommitId) {
        return c.preparedQuery(sql.findPushResult)
                .execute(Tuple.of(partition, clientId, clientCommitId))
                .map(rs -> {
                    Row r = first(rs);
                    return r == null ? null : pushOutcome(r, 0);
                });
    }

    /** A push result from the status, commit seq, result and created-at columns starting at {@code at}. */
    private static PushOutcome pushOutcome(Row r, int at) {
        return new PushOutcome(CommitStatus.of(r.getInteger(at)), r.getLong(at + 1), bytes(r.getBuffer(at + 2)), r.getLong(at + 3));
    }

    /** An {@link PushTx#appendCommit} statement not sent yet and the writes issued after it; see {@code PgPushTx#held}. */
    private static final class HeldAppend {
        final Tuple args;
        final int writerVersion;
        final List<Uni<?>> after = new ArrayList<>();

        HeldAppend(Tuple args, int writerVersion) {
            this.args = args;
            this.writerVersion = writerVersion;
        }
    }

    private static StorageException duplicatePushResult() {
        return new StorageException(StorageException.DUPLICATE_PUSH_RESULT, "idempotency key already holds a result", Map.of());
    }

    private final class PgPushTx implements PushTx {
        private final SqlConnection conn;
        private final PartitionState locked;
        /** What the group's works wrote so far (this one included). */
        private final GroupWrites writes;
        /** This work's read-ahead, or null. */
        private final PreRead pre;
        private long maxCommitSeq;
        private int savepoints;
        /** The serve gate row read right after the lock (all schema versions); used by the first read. */
        Row gate;
        /** A pipelined serve gate read (all schema versions) for the first {@link #readServeGate}, or null. */
        java.util.concurrent.CompletableFuture<RowSet<Row>> gateRead;
        /** Writes sent (pipelined) and not awaited yet, in order. */
        List<java.util.concurrent.CompletableFuture<?>> pending = new ArrayList<>();
        /**
         * The last {@link #appendCommit}, not sent yet, and the writes issued after it (unsubscribed, in
         * order): held so that the commit's idempotency record, saved after its row writes, joins the commit's
         * statement ({@link Sql#appendCommitWithResult}). Released, in issue order, by {@link #savePushResult}
         * or at the next read, savepoint or flush.
         */
        private HeldAppend held;

        /**
         * Sends a write now (behind a held append: holds it, to go out after the append); its outcome is awaited
         * by the next read, savepoint or the commit.
         */
        private void send(Uni<?> write) {
            gate = null;
            gateRead = null;
            if (held != null) {
                held.after.add(write);
            } else {
                pending.add(write.subscribeAsCompletionStage());
            }
        }

        /** Forgets the held append and the writes behind it (never sent): the work failed and rolls back. */
        void dropHeld() {
            held = null;
        }

        /** Sends the held append (with {@code result} when not null) and the writes held behind it. */
        private void release(Tuple result) {
            HeldAppend h = held;
            if (h == null) {
                return;
            }
            held = null;
            int writerVersion = h.writerVersion;
            Uni<?> append;
            if (result == null) {
                append = conn.preparedQuery(sql.appendCommit).execute(h.args);
            } else {
                for (int i = 0; i < result.size(); i++) {
                    h.args.addValue(result.getValue(i));
                }
                append = conn.preparedQuery(sql.appendCommitWithResult).execute(h.args).map(rs -> {
                    if (first(rs).getLong(0) == 0) {
                        throw duplicatePushResult();
                    }
                    return null;
                });
            }
            pending.add(append.onFailure().transform(e -> fenceRejection(e, writerVersion)).subscribeAsCompletionStage());
            for (Uni<?> w : h.after) {
                pending.add(w.subscribeAsCompletionStage());
            }
        }

        /** Awaits the pipelined writes; fails with the first failure (later ones are its consequence). */
        Uni<Void> flush() {
            release(null);
            if (pending.isEmpty()) {
                return Uni.createFrom().voidItem();
            }
            List<java.util.concurrent.CompletableFuture<?>> sent = pending;
            pending = new ArrayList<>();
            return allSettled(sent);
        }

        /** {@code read} after the pending writes completed (a failed write fails the read with its error). */
        private <R> Uni<R> afterWrites(Supplier<Uni<R>> read) {
            gate = null;
            gateRead = null;
            return flush().chain(() -> Uni.createFrom().<R>deferred(() -> read.get()));
        }

        PgPushTx(SqlConnection conn, PartitionState locked, GroupWrites writes, PreRead pre) {
            this.conn = conn;
            this.locked = locked;
            this.maxCommitSeq = locked.maxCommitSeq();
            this.writes = writes;
            this.pre = pre;
        }

        @Override
        public String partition() {
            return locked.partition();
        }

        @Override
        public PartitionState state() {
            return new PartitionState(locked.partition(), locked.logEpoch(), maxCommitSeq, locked.horizonSeq(),
                    locked.createdAtMs(), locked.lastSeenAtMs());
        }

        @Override
        public Uni<PushOutcome> findPushResult(String clientId, String clientCommitId) {
            if (pre != null && pre.answers(clientId, clientCommitId, writes)) {
                // read ahead under the lock, and no work of the group wrote the key since (see PreReads)
                readAheadAnswers.increment();
                gate = null;
                gateRead = null;
                return Uni.createFrom().item(pre.outcome);
            }
            return afterWrites(() -> PostgresSyncStorage.this.findPushResult(conn, partition(), clientId, clientCommitId));
        }

        @Override
        public Uni<Map<String, StoredRow>> readRows(String table, List<String> rowIds) {
            Map<String, StoredRow> ahead = pre == null ? null : pre.rows(table, rowIds, writes);
            if (ahead != null) {
                // read ahead under the lock, and no work of the group wrote these rows since (see PreReads)
                readAheadAnswers.increment();
                gate = null;
                gateRead = null;
                return Uni.createFrom().item(ahead);
            }
            return afterWrites(() -> PostgresSyncStorage.this.readRows(conn, partition(), table, rowIds));
        }

        @Override
        public Uni<List<StoredRow>> readRowsWhere(String table, String column, Object value, int limit) {
            return afterWrites(() -> readRowsWhereNow(table, column, value, limit));
        }

        private Uni<List<StoredRow>> readRowsWhereNow(String table, String column, Object value, int limit) {
            RowTable rt;
            ColumnSchema col;
            try {
                rt = table(table);
                col = rt.schema.column(column);
                if (col == null) {
                    throw new StorageException(StorageException.INVALID_ARGUMENT, "unknown column", Map.of("table", table,
                            "column", column));
                }
            } catch (RuntimeException e) {
                return Uni.createFrom().failure(e);
            }
            return conn.preparedQuery(rt.rowsWhereSql(col))
                    .execute(Tuple.of(partition(), bindValue(col.type(), value), limit))
                    .map(rs -> {
                        List<StoredRow> out = new ArrayList<>();
                        for (Row r : rs) {
                            out.add(storedRow(rt.schema, r));
                        }
                        return out;
                    });
        }

        @Override
        public Uni<Tombstone> readTombstone(String table, String rowId) {
            return afterWrites(() -> conn.preparedQuery(sql.readTombstone)
                    .execute(Tuple.of(partition(), table, rowId))
                    .map(rs -> {
                        Row r = first(rs);
                        return r == null ? null : new Tombstone(table, rowId, r.getLong(0));
                    }));
        }

        @Override
        public Uni<ServeGate> readServeGate(int runningSchemaVersion) {
            Row first = gate;
            if (first != null) { // no statement of this work ran yet (any clears it)
                gate = null;
                try {
                    return Uni.createFrom().item(serveGate(first, runningSchemaVersion));
                } catch (RuntimeException e) {
                    return Uni.createFrom().failure(e);
                }
            }
            gate = null;
            java.util.concurrent.CompletableFuture<RowSet<Row>> sent = gateRead;
            if (sent != null) {
                gateRead = null;
                // sent after the pending statements: awaiting them first keeps their failure first
                return flush().chain(() -> Uni.createFrom().completionStage(sent))
                        .map(rs -> serveGate(first(rs), runningSchemaVersion));
            }
            return afterWrites(() -> PostgresSyncStorage.this.readServeGate(conn, partition(), runningSchemaVersion));
        }

        @Override
        public Uni<Boolean> advanceCheckpoint(String name, long ownerEpoch, long watermark, long observedRows, long nowMs) {
            gate = null;
            writes.gateMoved = true;
            return afterWrites(() -> PostgresSyncStorage.this.advanceCheckpoint(conn, partition(), name, ownerEpoch, watermark,
                    observedRows, nowMs));
        }

        @Override
        public Uni<Long> appendCommit(
                String actorId, String clientId, String clientCommitId, long createdAtMs, List<ChangeToWrite> changes) {
            long seq = maxCommitSeq + 1;
            CompiledSchema writer = schema;
            if (writer == null) {
                return Uni.createFrom().failure(new StorageException(StorageException.INVALID_ARGUMENT,
                        "ensureSchema has not completed", Map.of()));
            }
            int writerVersion = writer.version();
            int n = changes.size();
            Integer[] indexes = new Integer[n];
            String[] tables = new String[n];
            String[] rowIds = new String[n];
            Integer[] ops = new Integer[n];
            Long[] rowVersions = new Long[n];
            String[] scopes = new String[n];
            io.vertx.core.buffer.Buffer[] payloads = new io.vertx.core.buffer.Buffer[n];
            List<String> scopeTables = new ArrayList<>();
            List<String> scopeKeys = new ArrayList<>();
            Set<String> commitTables = new LinkedHashSet<>();
            try {
                for (int i = 0; i < n; i++) {
                    ChangeToWrite ch = changes.get(i);
                    RowTable rt = table(ch.table());
                    if (ch.scopes() == null) {
                        throw new StorageException(StorageException.MISSING_SCOPES, "change has no stored scopes", Map.of("table", ch.table()));
                    }
                    commitTables.add(ch.table());
                    for (String key : rt.scopeKeys(ch.scopes())) {
                        scopeTables.add(ch.table());
                        scopeKeys.add(key);
                    }
                    byte[] payload = ch.op() == Op.UPSERT ? rt.encodePayload(ch.row()) : null;
                    indexes[i] = i;
                    tables[i] = ch.table();
                    rowIds[i] = ch.rowId();
                    ops[i] = ch.op().code;
                    rowVersions[i] = ch.rowVersion();
                    scopes[i] = scopesJson(ch.scopes());
                    payloads[i] = payload == null ? null : io.vertx.core.buffer.Buffer.buffer(payload);
                }
            } catch (RuntimeException e) {
                return Uni.createFrom().failure(e);
            }
            Tuple args = Tuple.tuple().addValue(partition()).addValue(seq).addValue(createdAtMs).addValue(actorId)
                    .addValue(clientId).addValue(clientCommitId).addValue(n)
                    .addArrayOfString(commitTables.toArray(String[]::new)).addValue((long) writerVersion)
                    .addArrayOfInteger(indexes).addArrayOfString(tables).addArrayOfString(rowIds).addArrayOfInteger(ops)
                    .addArrayOfLong(rowVersions).addArrayOfString(scopes).addValue(payloads)
                    .addArrayOfString(scopeTables.toArray(String[]::new)).addArrayOfString(scopeKeys.toArray(String[]::new));
            // one statement, held until the idempotency record can join it (see #held)
            release(null);
            gate = null;
            gateRead = null;
            held = new HeldAppend(args, writerVersion);
            maxCommitSeq = seq;
            return Uni.createFrom().item(seq);
        }

        @Override
        public Uni<Void> upsertRow(String table, StoredRow row) {
            return upsertRow(table, row, null);
        }

        /** With {@code stored} (the row as currently stored), no tombstone delete and, for unchanged scopes, no scope-index rewrite. */
        @Override
        public Uni<Void> upsertRow(String table, StoredRow row, StoredRow stored) {
            RowTable rt;
            Tuple args;
            String upsert;
            String[] keys;
            try {
                rt = table(table);
                TableSchema ts = rt.schema;
                Object[] values = row.values();
                if (values.length != ts.columnCount() || row.columnVersions().length != ts.columnCount()) {
                    throw new StorageException(StorageException.INVALID_ARGUMENT, "row has the wrong number of columns", Map.of("table", table));
                }
                keys = rt.scopeKeys(row.scopes());
                args = Tuple.tuple();
                for (int i = 0; i < ts.columnCount(); i++) {
                    args.addValue(bindValue(ts.column(i).type(), values[i]));
                }
                args.addValue(partition()).addValue(row.rowId()).addValue(row.serverVersion()).addValue(scopesJson(row.scopes()))
                        .addValue(io.vertx.core.buffer.Buffer.buffer(ColumnVersions.encode(row.columnVersions())));
                upsert = rt.upsertSql;
            } catch (RuntimeException e) {
                return Uni.createFrom().failure(e);
            }
            writes.rows.add(rowKey(table, row.rowId()));
            send(conn.preparedQuery(upsert).execute(args));
            // the scope index holds exactly the keys of the stored scopes: unchanged keys need no rewrite
            if (stored == null || !stored.rowId().equals(row.rowId())
                    || !java.util.Arrays.equals(rt.scopeKeys(stored.scopes()), keys)) {
                send(conn.preparedQuery(sql.deleteRowScopes)
                        .execute(Tuple.of(partition(), table, row.rowId())));
                send(conn.preparedQuery(sql.insertRowScopes)
                        .execute(Tuple.of(partition(), table, row.rowId()).addArrayOfString(keys)));
            }
            if (stored == null || !stored.rowId().equals(row.rowId())) {
                send(conn.preparedQuery(sql.deleteTombstone)
                        .execute(Tuple.of(partition(), table, row.rowId())));
            }
            if (rt.blobRefColumns.length > 0) {
                // §5.9.4: the row's entries become exactly its current references (old values dropped)
                send(conn.preparedQuery(sql.deleteBlobRefs)
                        .execute(Tuple.of(partition(), table, row.rowId())));
                String[] blobIds = rt.blobIds(row.values());
                if (blobIds.length > 0) {
                    send(conn.preparedQuery(sql.insertBlobRefs)
                            .execute(Tuple.of(partition(), table, row.rowId(), scopesJson(row.scopes())).addArrayOfString(blobIds)));
                }
            }
            return Uni.createFrom().voidItem();
        }

        @Override
        public Uni<Void> deleteRow(String table, String rowId, long commitSeq) {
            RowTable rt;
            try {
                rt = table(table);
            } catch (RuntimeException e) {
                return Uni.createFrom().failure(e);
            }
            writes.rows.add(rowKey(table, rowId));
            send(conn.preparedQuery(rt.deleteSql)
                    .execute(Tuple.of(partition(), rowId)));
            send(conn.preparedQuery(sql.deleteRowScopes)
                    .execute(Tuple.of(partition(), table, rowId)));
            if (rt.blobRefColumns.length > 0) {
                send(conn.preparedQuery(sql.deleteBlobRefs)
                        .execute(Tuple.of(partition(), table, rowId)));
            }
            send(conn.preparedQuery(sql.upsertTombstone)
                    .execute(Tuple.of(partition(), table, rowId, commitSeq)));
            return Uni.createFrom().voidItem();
        }

        @Override
        public Uni<Set<String>> referencedBlobIds(java.util.Collection<String> blobIds) {
            return afterWrites(() -> PostgresSyncStorage.this.readReferencedBlobIds(conn, partition(), blobIds));
        }

        @Override
        public Uni<Void> recordBlobSweep(java.util.Collection<String> blobIds, long nowMs, long forgetBeforeMs) {
            send(conn.preparedQuery(sql.forgetBlobSweeps)
                    .execute(Tuple.of(partition(), forgetBeforeMs)));
            if (!blobIds.isEmpty()) {
                // one nextval for the whole batch: the new mark is above every earlier mark of the partition
                // (sweeps of a partition are serialized by its lock, the sequence only grows)
                send(conn.preparedQuery(sql.recordBlobSweeps)
                        .execute(Tuple.of(partition(), nowMs).addArrayOfString(blobIds.toArray(String[]::new))));
            }
            return flush();
        }

        @Override
        public Uni<Set<String>> blobsSweptSince(java.util.Collection<String> blobIds, long sweepMark) {
            if (blobIds.isEmpty()) {
                return Uni.createFrom().item(Set.of());
            }
            return afterWrites(() -> conn.preparedQuery(sql.blobsSweptSince)
                    .execute(Tuple.of(partition(), sweepMark).addArrayOfString(blobIds.toArray(String[]::new)))
                    .map(PostgresSyncStorage::firstColumnSet));
        }

        @Override
        public Uni<Void> savePushResult(String clientId, String clientCommitId, PushOutcome outcome) {
            // pipelined with the commit's other writes; awaited (with its duplicate check) before COMMIT
            writes.keys.add(pushKey(clientId, clientCommitId));
            Tuple result = Tuple.tuple().addValue(clientId).addValue(clientCommitId).addValue(outcome.status().code)
                    .addValue(outcome.commitSeq()).addValue(io.vertx.core.buffer.Buffer.buffer(outcome.result()))
                    .addValue(outcome.createdAtMs());
            if (held != null) {
                // the applied commit's record: one statement with the commit's log writes
                gate = null;
                gateRead = null;
                release(result);
                return Uni.createFrom().voidItem();
            }
            send(conn.preparedQuery(sql.insertPushResult)
                    .execute(Tuple.of(partition()).addValue(result.getValue(0)).addValue(result.getValue(1))
                            .addValue(result.getValue(2)).addValue(result.getValue(3)).addValue(result.getValue(4))
                            .addValue(result.getValue(5)))
                    .map(rs -> {
                        if (rs.rowCount() == 0) {
                            throw duplicatePushResult();
                        }
                        return null;
                    }));
            return Uni.createFrom().voidItem();
        }

        @Override
        public <T> Uni<T> savepoint(Supplier<Uni<T>> work) {
            String name = "syncular_sp_" + (++savepoints);
            long seqBefore = maxCommitSeq;
            return afterWrites(() -> conn.query("SAVEPOINT " + name).execute())
                    .chain(() -> Uni.createFrom().<T>deferred(() -> work.get()).call(this::flush))
                    .onFailure().call(() -> Uni.createFrom().deferred(() -> {
                                dropHeld();
                                return flush();
                            }).onFailure().recoverWithNull()
                            .chain(() -> conn.query("ROLLBACK TO SAVEPOINT " + name).execute())
                            .invoke(() -> maxCommitSeq = seqBefore))
                    .call(() -> conn.query("RELEASE SAVEPOINT " + name).execute());
        }
    }

    // ------------------------------------------------------------------------------------------------
    // pull (§4.5, §4.7)
    // ------------------------------------------------------------------------------------------------

    @Override
    public Uni<Long> readScopePin(String partition, String table, String variable, Set<String> values, long upToSeq) {
        String[] keys;
        try {
            keys = table(table).scopeKeys(variable, values);
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        // one index probe per key (PRIMARY KEY (partition_id, tbl, scope_key, commit_seq)), newest first
        return pool.preparedQuery(sql.scopePin)
                .execute(Tuple.of(partition, table).addArrayOfString(keys).addValue(upToSeq))
                .map(rs -> rs.iterator().next().getLong(0));
    }

    @Override
    public Uni<CommitWindow> readCommits(String partition, CommitQuery query) {
        RowTable rt;
        String[] keys;
        try {
            rt = table(query.table());
            String variable = query.variables().get(0); // §4.7: the first scope variable, keys sorted
            keys = rt.scopeKeys(variable, query.scopes().get(variable));
            for (String v : query.variables()) {
                rt.scopeKeys(v, query.scopes().get(v)); // validates every variable is declared
            }
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        int batch = Math.min(Math.max(query.changeLimit() + 1, 32), 1000);
        return scanCommits(partition, rt, query, keys, query.afterSeq(), new ArrayList<>(), 0, batch);
    }

    private Uni<CommitWindow> scanCommits(
            String partition, RowTable rt, CommitQuery query, String[] keys, long fromSeq, List<StoredCommit> acc, int accChanges, int batch) {
        if (fromSeq >= query.upToSeq()) {
            return Uni.createFrom().item(new CommitWindow(acc, Math.max(query.upToSeq(), query.afterSeq()), false));
        }
        return pool.preparedQuery(sql.commitWindow)
                .execute(Tuple.of(partition, query.table()).addArrayOfString(keys).addValue(fromSeq).addValue(query.upToSeq()).addValue(batch))
                .chain(rs -> {
                    int seqs = 0;
                    long lastSeq = -1;
                    for (Row r : rs) {
                        long seq = r.getLong(0);
                        if (seq != lastSeq) {
                            seqs++;
                            lastSeq = seq;
                        }
                    }
                    if (seqs == 0) {
                        return Uni.createFrom().item(new CommitWindow(acc, query.upToSeq(), false));
                    }
                    List<StoredCommit> commits = groupCommits(rt, query, rs);
                    int total = accChanges;
                    for (StoredCommit c : commits) {
                        int n = c.changes().size();
                        if (total > 0 && total + n > query.changeLimit()) {
                            // §4.5: never split a commit; nextCursor = last fully delivered commitSeq
                            return Uni.createFrom().item(new CommitWindow(acc, acc.get(acc.size() - 1).commitSeq(), true));
                        }
                        acc.add(c);
                        total += n;
                    }
                    if (seqs < batch) {
                        return Uni.createFrom().item(new CommitWindow(acc, query.upToSeq(), false));
                    }
                    return scanCommits(partition, rt, query, keys, lastSeq, acc, total, batch);
                });
    }

    private static List<StoredCommit> groupCommits(RowTable rt, CommitQuery query, RowSet<Row> rows) {
        List<StoredCommit> out = new ArrayList<>();
        long currentSeq = -1;
        Row head = null;
        List<StoredChange> changes = new ArrayList<>();
        for (Row r : rows) {
            long seq = r.getLong(0);
            if (seq != currentSeq) {
                if (head != null && !changes.isEmpty()) {
                    out.add(commitOf(head, changes));
                }
                currentSeq = seq;
                head = r;
                changes = new ArrayList<>();
            }
            if (r.getValue(5) == null) {
                continue; // an index seq without a change to this table (see Sql#commitWindow)
            }
            Map<String, String> scopes = parseScopes(r.getString(8));
            if (!query.matches(scopes)) {
                continue;
            }
            Op op = Op.of(r.getInteger(6));
            Buffer payload = r.getBuffer(9);
            changes.add(new StoredChange(query.table(), r.getString(5), op, r.getLong(7), scopes,
                    payload == null ? null : rt.decodePayload(payload.getBytes())));
        }
        if (head != null && !changes.isEmpty()) {
            out.add(commitOf(head, changes));
        }
        return out;
    }

    private static StoredCommit commitOf(Row head, List<StoredChange> changes) {
        return new StoredCommit(head.getLong(0), head.getLong(1), head.getString(2), head.getString(3), head.getString(4), changes);
    }

    @Override
    public Uni<List<StoredRow>> readRowsPage(
            String partition, String table, Map<String, Set<String>> scopes, String afterRowId, int limit) {
        return rowsPage(partition, table, scopes, afterRowId, limit, false);
    }

    /** Without the scopes JSON and the column versions: no per-row JSON parse or version decode. */
    @Override
    public Uni<List<StoredRow>> readSnapshotPage(
            String partition, String table, Map<String, Set<String>> scopes, String afterRowId, int limit) {
        return rowsPage(partition, table, scopes, afterRowId, limit, true);
    }

    private static final long[] NO_VERSIONS = new long[0];

    private Uni<List<StoredRow>> rowsPage(
            String partition, String table, Map<String, Set<String>> scopes, String afterRowId, int limit,
            boolean snapshot) {
        RowTable rt;
        String pageSql;
        Tuple args;
        try {
            if (scopes == null || scopes.isEmpty()) {
                throw new StorageException(StorageException.INVALID_ARGUMENT, "effective scopes must not be empty", Map.of("table", table));
            }
            rt = table(table);
            TreeMap<String, Set<String>> sorted = new TreeMap<>(scopes);
            String first = sorted.firstKey();
            // A plain range bound on both sides, never "$4 IS NULL OR ...": the prepared statement's generic plan
            // cannot turn that into an index condition, and every deep page scanned the scope from its start
            // (1.8 s instead of 7 ms at row 800,000). The first page starts at '' — every row id is >= ''.
            String bound = afterRowId == null ? ">=" : ">";
            args = Tuple.of(partition, table).addArrayOfString(rt.scopeKeys(first, sorted.get(first)))
                    .addValue(afterRowId == null ? "" : afterRowId).addValue(limit);
            // With a single scope pattern the index keys of the first variable are exactly its values, so the
            // EXISTS below already is that variable's test: repeating it on the JSON makes the planner
            // estimate a handful of rows (and pick a parallel seq scan + sort over the ordered index scan).
            boolean firstCovered = rt.schema.scopePatterns().size() == 1;
            for (Map.Entry<String, Set<String>> e : sorted.entrySet()) {
                rt.scopeKeys(e.getKey(), e.getValue()); // validates the variable
                if (firstCovered && e.getKey().equals(first)) {
                    continue;
                }
                args.addValue(e.getKey()).addArrayOfString(e.getValue().toArray(String[]::new));
            }
            int extra = (args.size() - 5) / 2;
            pageSql = rt.pageSql((snapshot ? "snapshot:" : "rows:") + extra + bound, k -> {
                StringBuilder sb = new StringBuilder("SELECT ").append(snapshot ? rt.snapshotSelectList : rt.selectList)
                        .append(" FROM ").append(rt.qualifiedName)
                        .append(" r WHERE r.\"_sync_partition\" = $1")
                        .append(" AND r.\"_sync_row_id\" ").append(bound).append(" $4::text COLLATE \"C\"")
                        .append(" AND EXISTS (SELECT 1 FROM ").append(sql.rowScopesTable).append(" s WHERE s.partition_id = $1")
                        .append(" AND s.tbl = $2 AND s.scope_key = ANY($3) AND s.row_id = r.\"_sync_row_id\"")
                        // the same lower bound on the index side: without it the merge join rescans the scope's
                        // index from its first row on every page, and a bootstrap costs O(rows²)
                        .append(" AND s.row_id ").append(bound).append(" $4::text COLLATE \"C\")");
                int p = 5;
                for (int i = 0; i < extra; i++) {
                    sb.append(" AND (r.\"_sync_scopes\" ->> $").append(++p).append("::text) = ANY($").append(++p).append("::text[])");
                }
                return sb.append(" ORDER BY r.\"_sync_row_id\" COLLATE \"C\" LIMIT $5").toString();
            });
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        // Plan guard: right after a bulk load the statistics lag (or say "almost empty"), and PostgreSQL
        // picked nested loops over sequential scans for this query (30-45 s for a 20k-row scope in the
        // benchmark). With sequential scans and parallel workers off for this read-only transaction the
        // plan is index-driven whatever the statistics say (an ordered merge semi-join on the primary keys
        // when they are current: ~30 ms for a 50k-row page).
        // Nested loops off too: on a scope whose statistics are not gathered yet the planner otherwise picks a
        // hash-aggregate + nested loop + sort (5x the ordered merge semi-join on 20k fresh rows). Bitmap scans
        // and sorts off as well: on never-analyzed tables (estimate: 24 rows) the generic plan was a bitmap
        // scan of every row after the cursor plus an external sort of them all, for each batch — 69 ms instead
        // of 14 ms for the first 10,000 of 20,000 fresh rows, and growing with the table (the seconds-long first
        // bootstrap after a bulk load). With all four off, the plan is the ordered primary-key scan merged with
        // the scope index, stopping at the LIMIT.
        // BEGIN with the settings, the page and COMMIT go out pipelined: one round trip per page, not four.
        return pool.withConnection(conn -> {
            java.util.concurrent.CompletableFuture<RowSet<Row>> begin = conn.query("BEGIN; SET LOCAL enable_seqscan = off;"
                    + " SET LOCAL enable_nestloop = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off;"
                    + " SET LOCAL max_parallel_workers_per_gather = 0").execute()
                    .subscribeAsCompletionStage();
            java.util.concurrent.CompletableFuture<RowSet<Row>> page = conn.preparedQuery(pageSql).execute(args)
                    .subscribeAsCompletionStage();
            // after a failed page this COMMIT only ends the aborted transaction (PostgreSQL answers ROLLBACK)
            java.util.concurrent.CompletableFuture<RowSet<Row>> end = conn.query("COMMIT").execute()
                    .subscribeAsCompletionStage();
            // all three are awaited before the connection goes back to the pool; the first failure wins
            return Uni.createFrom().completionStage(java.util.concurrent.CompletableFuture.allOf(
                            begin.handle((v, e) -> null), page.handle((v, e) -> null), end.handle((v, e) -> null)))
                    .chain(() -> Uni.createFrom().completionStage(begin))
                    .chain(() -> Uni.createFrom().completionStage(end))
                    .chain(() -> Uni.createFrom().completionStage(page));
        }).map(rs -> {
            List<StoredRow> out = new ArrayList<>(rs.size());
            TableSchema ts = rt.schema;
            for (Row r : rs) {
                if (snapshot) {
                    Object[] values = new Object[ts.columnCount()];
                    for (int i = 0; i < values.length; i++) {
                        values[i] = readValue(r, 2 + i, ts.column(i).type());
                    }
                    out.add(new StoredRow(r.getString(0), r.getLong(1), values, NO_VERSIONS, Map.of()));
                } else {
                    out.add(storedRow(ts, r));
                }
            }
            return out;
        });
    }

    // ------------------------------------------------------------------------------------------------
    // blob reference index (§5.9.4)
    // ------------------------------------------------------------------------------------------------

    @Override
    public Uni<List<BlobReference>> readBlobReferences(String partition, String blobId, BlobReference after, int limit) {
        Tuple args = Tuple.of(partition, blobId, limit);
        if (after != null) {
            args.addValue(after.table()).addValue(after.rowId());
        }
        return pool.preparedQuery(after == null ? sql.blobReferences : sql.blobReferencesAfter)
                .execute(args)
                .map(rs -> {
                    List<BlobReference> out = new ArrayList<>();
                    for (Row r : rs) {
                        out.add(new BlobReference(r.getString(0), r.getString(1), parseScopes(r.getString(2))));
                    }
                    return out;
                });
    }

    @Override
    public Uni<Set<String>> readReferencedBlobIds(String partition, java.util.Collection<String> blobIds) {
        return readReferencedBlobIds(pool, partition, blobIds);
    }

    private Uni<Set<String>> readReferencedBlobIds(SqlClient c, String partition, java.util.Collection<String> blobIds) {
        if (blobIds.isEmpty()) {
            return Uni.createFrom().item(Set.of());
        }
        return c.preparedQuery(sql.referencedBlobIds)
                .execute(Tuple.of(partition).addArrayOfString(blobIds.toArray(String[]::new)))
                .map(PostgresSyncStorage::firstColumnSet);
    }

    @Override
    public Uni<Long> readBlobSweepMark(String partition) {
        return pool.preparedQuery(sql.blobSweepMark)
                .execute(Tuple.of(partition))
                .map(rs -> rs.iterator().next().getLong(0));
    }

    private static Set<String> firstColumnSet(RowSet<Row> rs) {
        Set<String> out = new java.util.HashSet<>();
        for (Row r : rs) {
            out.add(r.getString(0));
        }
        return out;
    }

    @Override
    public Uni<Map<String, StoredRow>> readRows(String partition, String table, List<String> rowIds) {
        return readRows(pool, partition, table, rowIds);
    }

    private Uni<Map<String, StoredRow>> readRows(SqlClient c, String partition, String table, List<String> rowIds) {
        RowTable rt;
        try {
            rt = table(table);
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        if (rowIds.isEmpty()) {
            return Uni.createFrom().item(Map.of());
        }
        // one id (the common push prefetch): the scalar statement, whose generic plan is kept (see RowTable)
        Uni<RowSet<Row>> read = rowIds.size() == 1
                ? c.preparedQuery(rt.readRowSql).execute(Tuple.of(partition, rowIds.get(0)))
                : c.preparedQuery(rt.readRowsSql).execute(Tuple.of(partition).addArrayOfString(rowIds.toArray(String[]::new)));
        return read
                .map(rs -> {
                    Map<String, StoredRow> found = new HashMap<>();
                    for (Row r : rs) {
                        StoredRow row = storedRow(rt.schema, r);
                        found.put(row.rowId(), row);
                    }
                    return inRequestOrder(rowIds, found);
                });
    }

    /** The found rows keyed and ordered by the requested ids (absent ids left out). */
    private static Map<String, StoredRow> inRequestOrder(List<String> rowIds, Map<String, StoredRow> found) {
        Map<String, StoredRow> out = new LinkedHashMap<>();
        for (String id : rowIds) {
            StoredRow row = found.get(id);
            if (row != null) {
                out.put(id, row);
            }
        }
        return out;
    }

    private static StoredRow storedRow(TableSchema ts, Row r) {
        long version = r.getLong(1);
        Object[] values = new Object[ts.columnCount()];
        for (int i = 0; i < values.length; i++) {
            values[i] = readValue(r, 4 + i, ts.column(i).type());
        }
        Buffer cv = r.getBuffer(3);
        long[] versions = ColumnVersions.decode(cv == null ? null : cv.getBytes(), ts.columnCount(), version);
        return new StoredRow(r.getString(0), version, values, versions, parseScopes(r.getString(2)));
    }

    static Object bindValue(ColumnType type, Object v) {
        if (v == null) {
            return null;
        }
        try {
            return switch (type) {
                case STRING, JSON, BLOB_REF -> (String) v;
                case INTEGER -> ((Number) v).longValue();
                case FLOAT -> ((Number) v).doubleValue();
                case BOOLEAN -> (Boolean) v;
                case BYTES, CRDT -> io.vertx.core.buffer.Buffer.buffer((byte[]) v);
            };
        } catch (ClassCastException e) {
            throw new StorageException(StorageException.INVALID_ARGUMENT, "row value does not match the column type", Map.of("type", type.wireName));
        }
    }

    static Object readValue(Row r, int i, ColumnType type) {
        return switch (type) {
            case STRING, JSON, BLOB_REF -> r.getString(i);
            case INTEGER -> r.getLong(i);
            case FLOAT -> r.getDouble(i);
            case BOOLEAN -> r.getBoolean(i);
            case BYTES, CRDT -> bytes(r.getBuffer(i));
        };
    }

    // ------------------------------------------------------------------------------------------------
    // client records (§4.5)
    // ------------------------------------------------------------------------------------------------

    @Override
    public Uni<Void> upsertClient(ClientRecord c) {
        return pool.preparedQuery(sql.upsertClient).execute(clientArgs(c)).replaceWithVoid();
    }

    private static Tuple clientArgs(ClientRecord c) {
        return Tuple.tuple().addValue(c.partition()).addValue(c.clientId()).addValue(c.actorId()).addValue(c.cursor())
                .addValue(c.updatedAtMs()).addValue(c.subscriptionsJson()).addValue(c.wireVersion());
    }

    private static final String CLIENT_COLS = "partition_id, client_id, actor_id, cursor, updated_at_ms, subscriptions::text, wire_version";

    @Override
    public Uni<ClientRecord> readClient(String partition, String clientId) {
        return pool.preparedQuery(sql.readClient)
                .execute(Tuple.of(partition, clientId))
                .map(rs -> {
                    Row r = first(rs);
                    return r == null ? null : clientRecord(r);
                });
    }

    @Override
    public Uni<List<ClientRecord>> listClients(String partition) {
        return pool.preparedQuery(sql.listClients)
                .execute(Tuple.of(partition))
                .map(rs -> {
                    List<ClientRecord> out = new ArrayList<>();
                    for (Row r : rs) {
                        out.add(clientRecord(r));
                    }
                    return out;
                });
    }

    private static ClientRecord clientRecord(Row r) {
        return new ClientRecord(r.getString(0), r.getString(1), r.getString(2), r.getLong(3), r.getLong(4), r.getString(5), r.getInteger(6));
    }

    // ------------------------------------------------------------------------------------------------
    // pruning (§4.6)
    // ------------------------------------------------------------------------------------------------

    @Override
    public Uni<PruneResult> prune(String partition, String expectedLogEpoch, long throughSeq) {
        return pool.withTransaction(conn -> lockPartition(conn, partition).chain(state -> {
            if (!state.logEpoch().equals(expectedLogEpoch)) {
                return Uni.createFrom().failure(new StorageException(StorageException.LOG_EPOCH_MISMATCH,
                        "partition log epoch changed; recompute retention inputs", Map.of()));
            }
            long previous = state.horizonSeq();
            long horizon = Math.max(previous, Math.min(throughSeq, state.maxCommitSeq()));
            Tuple args = Tuple.of(partition, horizon);
            long[] removed = {0};
            return conn.preparedQuery(sql.setHorizon)
                    .execute(args)
                    .chain(() -> conn.preparedQuery(sql.pruneCommitScopes).execute(args))
                    .chain(() -> conn.preparedQuery(sql.pruneChanges).execute(args))
                    .chain(() -> conn.preparedQuery(sql.pruneCommits).execute(args))
                    .invoke(rs -> removed[0] = rs.rowCount())
                    .chain(() -> conn.preparedQuery(sql.pruneTombstones).execute(args))
                    .map(rs -> new PruneResult(previous, horizon, removed[0]));
        }));
    }

    // ------------------------------------------------------------------------------------------------
    // helpers
    // ------------------------------------------------------------------------------------------------

    private RowTable table(String name) {
        if (schema == null) {
            throw new StorageException(StorageException.INVALID_ARGUMENT, "ensureSchema has not completed", Map.of());
        }
        RowTable rt = tables.get(name);
        if (rt == null) {
            throw new StorageException(StorageException.INVALID_ARGUMENT, "unknown synced table", Map.of("table", name));
        }
        return rt;
    }

    private static Uni<Void> execAll(SqlConnection conn, List<String> statements) {
        return Multi.createFrom().iterable(statements)
                .onItem().transformToUniAndConcatenate(sql -> conn.query(sql).execute())
                .collect().last()
                .replaceWithVoid();
    }

    private static Row first(RowSet<Row> rs) {
        var it = rs.iterator();
        return it.hasNext() ? it.next() : null;
    }

    private static byte[] bytes(Buffer b) {
        return b == null ? null : b.getBytes();
    }

    /** Stored scopes as a JSON object, keys sorted (written per change and per row: no ObjectMapper round). */
    static String scopesJson(Map<String, String> scopes) {
        String[] keys = scopes.keySet().toArray(new String[0]);
        java.util.Arrays.sort(keys);
        StringBuilder sb = new StringBuilder(16 + 24 * keys.length).append('{');
        for (int i = 0; i < keys.length; i++) {
            if (i > 0) {
                sb.append(',');
            }
            dev.syncular.server.wire.CanonicalJson.string(sb, keys[i]);
            sb.append(':');
            String v = scopes.get(keys[i]);
            if (v == null) {
                sb.append("null");
            } else {
                dev.syncular.server.wire.CanonicalJson.string(sb, v);
            }
        }
        return sb.append('}').toString();
    }


    private static final int SCOPES_CACHE_MAX = 4096;
    /**
     * Parsed stored-scopes documents by their text: a partition's changes and rows repeat a handful of scope
     * combinations, so each is parsed once. Bounded (cleared when full); the maps are unmodifiable.
     */
    private static final java.util.concurrent.ConcurrentHashMap<String, Map<String, String>> SCOPES_CACHE =
            new java.util.concurrent.ConcurrentHashMap<>();

    static Map<String, String> parseScopes(String json) {
        Map<String, String> cached = SCOPES_CACHE.get(json);
        if (cached != null) {
            return cached;
        }
        Map<String, String> parsed;
        try {
            parsed = java.util.Collections.unmodifiableMap(JSON.readValue(json, new TypeReference<LinkedHashMap<String, String>>() {}));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored scopes are not a JSON object", e);
        }
        if (SCOPES_CACHE.size() >= SCOPES_CACHE_MAX) {
            SCOPES_CACHE.clear();
        }
        SCOPES_CACHE.put(json, parsed);
        return parsed;
    }

    /** A persisted per-table layout: primary key and (name, type, nullable) columns in declaration order. */
    record TableLayout(String primaryKey, List<ColumnLayout> columns) {
        record ColumnLayout(String name, String type, boolean nullable) {}

        static TableLayout of(TableSchema ts) {
            List<ColumnLayout> cols = new ArrayList<>();
            for (ColumnSchema c : ts.columns()) {
                cols.add(new ColumnLayout(c.name(), c.type().wireName, c.nullable()));
            }
            return new TableLayout(ts.primaryKey(), cols);
        }

        static String render(CompiledSchema s) {
            ObjectNode root = JSON.createObjectNode();
            root.put("schemaVersion", s.version());
            ObjectNode tablesNode = root.putObject("tables");
            for (TableSchema ts : s.tables()) {
                TableLayout l = of(ts);
                ObjectNode tn = tablesNode.putObject(ts.name());
                tn.put("primaryKey", l.primaryKey());
                ArrayNode cols = tn.putArray("columns");
                for (ColumnLayout c : l.columns()) {
                    cols.addObject().put("name", c.name()).put("type", c.type()).put("nullable", c.nullable());
                }
            }
            return root.toString();
        }

        static Map<String, TableLayout> parse(String json) {
            Map<String, TableLayout> out = new LinkedHashMap<>();
            try {
                JsonNode tablesNode = JSON.readTree(json).path("tables");
                var it = tablesNode.fields();
                while (it.hasNext()) {
                    var e = it.next();
                    List<ColumnLayout> cols = new ArrayList<>();
                    for (JsonNode c : e.getValue().path("columns")) {
                        cols.add(new ColumnLayout(c.path("name").asText(), c.path("type").asText(), c.path("nullable").asBoolean()));
                    }
                    out.put(e.getKey(), new TableLayout(e.getValue().path("primaryKey").asText(), cols));
                }
            } catch (JsonProcessingException | RuntimeException e) {
                throw new StorageException(StorageException.STORED_LAYOUT_MISMATCH, "persisted layouts are unreadable", Map.of(), e);
            }
            return out;
        }

        /** §2.4 case 1; {@code null} when the persisted layouts equal the running schema's. */
        static StorageException compare(CompiledSchema running, Map<String, TableLayout> stored) {
            for (TableSchema ts : running.tables()) {
                TableLayout before = stored.get(ts.name());
                if (before == null) {
                    return mismatch(ts.name(), null);
                }
                TableLayout now = of(ts);
                int n = Math.max(before.columns().size(), now.columns().size());
                for (int i = 0; i < n; i++) {
                    ColumnLayout a = i < before.columns().size() ? before.columns().get(i) : null;
                    ColumnLayout b = i < now.columns().size() ? now.columns().get(i) : null;
                    if (!Objects.equals(a, b)) {
                        return mismatch(ts.name(), b != null ? b.name() : a.name());
                    }
                }
                if (!before.primaryKey().equals(now.primaryKey())) {
                    return mismatch(ts.name(), now.primaryKey());
                }
            }
            for (String name : stored.keySet()) {
                if (running.table(name) == null) {
                    return mismatch(name, null);
                }
            }
            return null;
        }

        private static StorageException mismatch(String table, String column) {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("table", table);
            if (column != null) {
                d.put("column", column);
            }
            return new StorageException(StorageException.STORED_LAYOUT_MISMATCH,
                    "persisted table layouts differ from the running schema", d);
        }
    }

    @Override
    public Uni<List<StoredRow>> readAllRows(String partition, String table) {
        RowTable rt;
        try {
            rt = table(table);
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
        return pool.preparedQuery(rt.readAllRowsSql)
                .execute(Tuple.of(partition))
                .map(rs -> {
                    List<StoredRow> out = new ArrayList<>();
                    for (Row r : rs) {
                        out.add(storedRow(rt.schema, r));
                    }
                    return out;
                });
    }
}
