package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;
import static dev.syncular.server.storage.postgres.PgSql.lit;
import static dev.syncular.server.storage.postgres.PgSql.q;

import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.CheckpointDeclaration;
import dev.syncular.server.storage.StorageException;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The storage DDL, its migration and the storage readiness checks (§2.4 "Same-version storage readiness",
 * "Schema upgrade writer fence"; the tables serve §2.1–§2.3, §3.1, §4.5–§4.7, §5.9.4).
 *
 * <h2>DDL</h2>
 *
 * <ul>
 *   <li>{@code sync_schema(id=1, schema_version, layouts text JSON, updated_at_ms)} — the marker
 *       ({@link TableLayout});
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
 *       required version raises SQLSTATE {@value CheckpointStore#FENCE_SQLSTATE} (mapped to
 *       {@code sync.storage.writer_fence_rejected}); a partition without a fence row is unrestricted;
 *   <li>{@code sync_blob_refs}, {@code sync_blob_sweeps} and the {@code sync_blob_sweep_seq} sequence —
 *       the blob reference index and orphan-sweep marks ({@link BlobReferenceIndex}).
 * </ul>
 *
 * Row ids use {@code COLLATE "C"} so bootstrap pages order by bytes and use the primary-key index.
 *
 * <h2>Schema upgrade writer fence (§2.4)</h2>
 *
 * A schema-version bump runs in its own transaction whose first statement is
 * {@code LOCK TABLE sync_partitions IN EXCLUSIVE MODE}: it waits for every in-flight push (which holds a
 * partition row lock) and blocks every later push at its first statement, without the old binary's
 * cooperation. In that transaction it applies the DDL and marker, raises the fence of every registered
 * partition to the new version (never lowering) and installs the declared checkpoints. Every append writes
 * {@code writer_version} = the schema version this instance was ensured at ({@link InstalledSchema}).
 */
final class StorageSchemaMigration {
    private static final String FENCE_TRIGGER = "sync_commits_writer_fence";

    private final Pool pool;
    private final String pgSchema;
    private final InstalledSchema installed;
    private final CheckpointStore checkpoints;

    private final String readMarkerSql;
    private final String writeMarkerSql;
    private final String storedSchemaVersion;

    StorageSchemaMigration(Pool pool, String pgSchema, InstalledSchema installed, CheckpointStore checkpoints) {
        this.pool = pool;
        this.pgSchema = pgSchema;
        this.installed = installed;
        this.checkpoints = checkpoints;
        readMarkerSql = "SELECT schema_version, layouts FROM " + t("sync_schema") + " WHERE id = 1";
        writeMarkerSql = "INSERT INTO " + t("sync_schema") + " (id, schema_version, layouts, updated_at_ms)"
                + " VALUES (1, $1, $2, $3) ON CONFLICT (id) DO UPDATE SET schema_version = EXCLUDED.schema_version,"
                + " layouts = EXCLUDED.layouts, updated_at_ms = EXCLUDED.updated_at_ms";
        storedSchemaVersion = "SELECT COALESCE((SELECT schema_version FROM " + t("sync_schema") + " WHERE id = 1), 0)";
    }

    private String t(String name) {
        return PgSql.qualified(pgSchema, name);
    }

    /**
     * Runs idempotent DDL in one transaction under an advisory lock on {@code lockName}, so concurrent
     * starters (pods, test classes) apply it one at a time. Notices are silenced.
     */
    static Uni<Void> applyDdl(Pool pool, String lockName, List<String> ddl) {
        return pool.withTransaction(conn -> conn.preparedQuery("SELECT pg_advisory_xact_lock(hashtext($1))")
                .execute(Tuple.of(lockName))
                .chain(() -> conn.query("SET LOCAL client_min_messages = warning").execute())
                .chain(() -> io.smallrye.mutiny.Multi.createFrom().iterable(ddl)
                        .onItem().transformToUniAndConcatenate(sql -> conn.query(sql).execute())
                        .collect().last())
                .replaceWithVoid());
    }

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
                        + " RAISE EXCEPTION 'sync.storage.writer_fence_rejected' USING ERRCODE = '" + CheckpointStore.FENCE_SQLSTATE + "',"
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

    Uni<Void> ensureSchema(CompiledSchema running) {
        return ensureSchema(running, List.of());
    }

    /**
     * Two transactions. The first (under the ensureSchema advisory lock) applies the idempotent core DDL and
     * reads the marker: an equal version is verified and the declarations installed right there; a newer
     * stored version refuses. A missing or older marker ends it and runs {@link #migrate} in a second
     * transaction whose first statement is the {@code sync_partitions} table lock, which re-reads the marker
     * (another process may have migrated meanwhile) before acting.
     */
    Uni<Void> ensureSchema(CompiledSchema running, List<CheckpointDeclaration> checkpoints) {
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
                .invoke(() -> installed.install(running));
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
                    return ddl.chain(() -> checkpoints.raiseAllFences(conn, running.version()))
                            .chain(() -> checkpoints.installCheckpoints(conn, declarations, nowMs));
                });
    }

    private Uni<Void> sameVersionOrNewer(
            SqlConnection conn, CompiledSchema running, Row marker, List<CheckpointDeclaration> declarations, long nowMs) {
        int stored = marker.getInteger(0);
        if (stored == running.version()) {
            return verifySameVersion(conn, running, TableLayout.parse(marker.getString(1)))
                    .chain(() -> checkpoints.installCheckpoints(conn, declarations, nowMs));
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
        return conn.query(readMarkerSql).execute()
                .map(PgSql::first);
    }

    private Uni<Void> writeMarker(SqlConnection conn, CompiledSchema running) {
        return conn.preparedQuery(writeMarkerSql)
                .execute(Tuple.of(running.version(), TableLayout.render(running), System.currentTimeMillis()))
                .replaceWithVoid();
    }

    private Uni<Void> createFresh(SqlConnection conn, CompiledSchema running) {
        List<String> ddl = new ArrayList<>();
        for (TableSchema ts : running.tables()) {
            ddl.add(createRowTableDdl(ts));
        }
        return execAll(conn, ddl).chain(() -> writeMarker(conn, running));
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

    Uni<Integer> readStoredSchemaVersion() {
        return pool.query(storedSchemaVersion)
                .execute()
                .map(rs -> first(rs).getInteger(0))
                // before the first ensureSchema the marker table does not exist yet: no marker
                .onFailure(e -> e instanceof PgException pe && "42P01".equals(pe.getSqlState())).recoverWithItem(0);
    }

    private static Uni<Void> execAll(SqlConnection conn, List<String> statements) {
        return Multi.createFrom().iterable(statements)
                .onItem().transformToUniAndConcatenate(sql -> conn.query(sql).execute())
                .collect().last()
                .replaceWithVoid();
    }
}
