package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;
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
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

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
 *   <li>{@code sync_commit_scopes(partition_id, tbl, scope_key, commit_seq) PK} plus the index
 *       {@code (partition_id, commit_seq)} for pruning (an earlier release's {@code sync_commit_scopes_by_key}
 *       is dropped concurrently: no statement reads it);
 *   <li>{@code sync_rows_<table>} — typed app columns (string/json/blob_ref text, integer bigint, float
 *       double precision, boolean boolean, bytes/crdt bytea; NOT NULL for non-nullable columns at creation)
 *       plus {@code _sync_partition text}, {@code _sync_row_id text COLLATE "C"}, {@code _sync_server_version
 *       bigint}, {@code _sync_scopes jsonb} (all NOT NULL), {@code _sync_payload bytea} (unused, NULL),
 *       {@code _sync_column_versions bytea}; PK {@code (_sync_partition, _sync_row_id)}; one unique index
 *       {@code ("_sync_partition", <columns>)} per declared unique index ({@link UniqueIndexes}: created with a new
 *       table, built concurrently on an existing one, dropped once no longer declared);
 *   <li>{@code sync_row_scopes(partition_id, tbl, scope_key, row_id) PK} plus {@code (partition_id, tbl,
 *       row_id)};
 *   <li>{@code sync_push_results(partition_id, client_id, client_commit_id) PK} with status, commit_seq,
 *       result bytea, created_at_ms, index {@code sync_push_results_by_age (partition_id, created_at_ms)} for
 *       pruning by age (built {@code CONCURRENTLY} on an existing table);
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
 *   <li>{@code sync_blob_refs}, {@code sync_blob_uploads}, {@code sync_blob_sweeps} (with {@code pending}) and
 *       the {@code sync_blob_sweep_seq} sequence — the blob reference index, the uploaders and orphan-sweep marks
 *       ({@link BlobReferenceIndex});
 *   <li>{@code sync_jobs(name PK, last_started_at_ms, last_finished_at_ms, ran_by, lease_owner, lease_until_ms)}
 *       — scheduled job runs and their claims, lease rows ({@link JobLocks});
 *   <li>{@code sync_reactions} — §6.9 durable reactions and their delivery state ({@link PostgresReactionStore});
 *   <li>{@code sync_auth_leases(partition_id, client_id) PK} with the sealed §7.3.1 lease record, the §2.1
 *       {@code log_epoch} it was issued in, and the unique index {@code sync_auth_leases_by_id (partition_id,
 *       lease_id)} ({@link PostgresAuthLeaseStore});
 *   <li>{@code sync_console_sessions(id_hash PK)} — operator console sessions: the SHA-256 of the session id, who
 *       signed in, the CSRF token and the expiry ({@link ConsoleSessions});
 *   <li>{@code sync_tenant_load(pod_id, partition_id) PK} — each pod's loudest tenants of the last minute, with
 *       the time the pod wrote them ({@link TenantLoadTable}).
 * </ul>
 *
 * Each of these is a {@link DdlStep} with a catalog probe: a start-up that finds every object runs no DDL.
 *
 * Row ids use {@code COLLATE "C"} so bootstrap pages order by bytes and use the primary-key index.
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
    private static final String FENCE_TRIGGER = "sync_commits_writer_fence";
    /** {@code (q text, args text[]) RETURNS text}: {@code q}'s rows as a JSON array, or {@code {"sqlstate"}}. */
    static final String GUARDED_QUERY = "sync_guarded_query";
    /** {@code lock_timeout} of start-up DDL and of the schema-upgrade transaction. */
    static final long DDL_LOCK_TIMEOUT_MS = 5000;
    /** Attempts of a start-up DDL transaction that hit its lock timeout (backoff 0.2 s to 5 s between). */
    static final int DDL_ATTEMPTS = 20;

    private final Pool pool;
    private final String pgSchema;
    private final InstalledSchema installed;
    private final CheckpointStore checkpoints;
    private final UniqueIndexes unique;

    private final String readMarkerSql;
    private final String writeMarkerSql;
    private final String storedSchemaVersion;

    StorageSchemaMigration(Pool pool, String pgSchema, InstalledSchema installed, CheckpointStore checkpoints) {
        this.pool = pool;
        this.pgSchema = pgSchema;
        this.installed = installed;
        this.checkpoints = checkpoints;
        this.unique = new UniqueIndexes(pool, pgSchema);
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
     * The catalog-checked start-up DDL: one catalog read evaluates every step's probe; when nothing is missing
     * (every boot but the first on a database) that is all — no transaction, no DDL, no lock on any table.
     * Otherwise one READ COMMITTED transaction under {@code lock_timeout} {@value #DDL_LOCK_TIMEOUT_MS} ms and
     * the transaction advisory lock {@code lockName} (concurrent starters — pods, test classes — apply it one
     * at a time) re-reads the probes and runs the steps still missing, in order; a lock timeout rolls it back
     * and it is retried ({@link #retryingLockTimeouts}). {@link DdlStep#concurrent() Concurrent} index builds on
     * existing tables run last, outside any transaction, one starter at a time (a session advisory lock); on a
     * table created by the same start-up the index is created with it. Notices are silenced.
     */
    static Uni<Void> applyDdl(Pool pool, String lockName, List<DdlStep> steps) {
        List<DdlStep> concurrent = steps.stream().filter(DdlStep::concurrent).toList();
        List<String> probes = new ArrayList<>(steps.stream().map(DdlStep::probe).toList());
        concurrent.forEach(s -> probes.add(s.tableProbe()));
        return probe(pool, probes).chain(present -> {
            List<DdlStep> missing = new ArrayList<>();
            List<DdlStep> built = new ArrayList<>();
            for (int i = 0; i < steps.size(); i++) {
                DdlStep s = steps.get(i);
                if (present[i]) {
                    continue;
                }
                // an index of a table this start-up creates is created with it; on an existing table, concurrently
                boolean existingTable = s.concurrent() && present[steps.size() + concurrent.indexOf(s)];
                (existingTable ? built : missing).add(s);
            }
            Uni<Void> tx = missing.isEmpty()
                    ? Uni.createFrom().voidItem()
                    : ddlTransaction(
                            pool,
                            conn -> xactLock(conn, lockName)
                                    .chain(() -> probe(
                                            conn,
                                            missing.stream().map(DdlStep::probe).toList()))
                                    .chain(still -> {
                                        List<String> sql = new ArrayList<>();
                                        for (int i = 0; i < missing.size(); i++) {
                                            if (!still[i]) {
                                                sql.add(missing.get(i).sql());
                                            }
                                        }
                                        return execAll(conn, sql);
                                    }));
            return tx.chain(() -> buildConcurrently(pool, lockName, built));
        });
    }

    /** The answers of {@code probes}, in order (one statement; reads the catalog only). */
    private static Uni<boolean[]> probe(SqlClient c, List<String> probes) {
        if (probes.isEmpty()) {
            return Uni.createFrom().item(new boolean[0]);
        }
        return c.query("SELECT " + String.join(", ", probes)).execute().map(rs -> {
            Row r = first(rs);
            boolean[] present = new boolean[probes.size()];
            for (int i = 0; i < present.length; i++) {
                present[i] = Boolean.TRUE.equals(r.getBoolean(i));
            }
            return present;
        });
    }

    /**
     * {@code CREATE INDEX CONCURRENTLY} of the missing {@code steps} (an invalid leftover dropped first), on one
     * pooled connection outside a transaction, under the session advisory lock {@code lockName + ":concurrent"}.
     * Writers are never blocked; this starter waits for the build.
     */
    private static Uni<Void> buildConcurrently(Pool pool, String lockName, List<DdlStep> steps) {
        if (steps.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        Tuple lock = Tuple.of(lockName + ":concurrent");
        return pool.withConnection(conn -> conn.query("SET client_min_messages = warning")
                .execute()
                .chain(() -> conn.preparedQuery("SELECT pg_advisory_lock(hashtext($1))")
                        .execute(lock))
                .chain(() -> probe(conn, steps.stream().map(DdlStep::probe).toList()))
                .chain(present -> {
                    Uni<Void> chain = Uni.createFrom().voidItem();
                    for (int i = 0; i < steps.size(); i++) {
                        DdlStep s = steps.get(i);
                        if (!present[i]) {
                            chain = chain.chain(
                                            () -> conn.query(s.dropInvalid()).execute())
                                    .chain(() -> conn.query(s.concurrentSql()).execute())
                                    .replaceWithVoid();
                        }
                    }
                    return chain;
                })
                .eventually(() -> conn.preparedQuery("SELECT pg_advisory_unlock(hashtext($1))")
                        .execute(lock)
                        .chain(() -> conn.query("RESET client_min_messages").execute())
                        .onFailure()
                        .recoverWithNull()));
    }

    /**
     * A READ COMMITTED transaction for DDL and the schema upgrade: {@code lock_timeout}
     * {@value #DDL_LOCK_TIMEOUT_MS} ms (a DDL lock request queued behind a long transaction would otherwise
     * stall every push queued behind it), notices silenced; retried on lock timeouts.
     */
    private static <T> Uni<T> ddlTransaction(Pool pool, Function<SqlConnection, Uni<T>> work) {
        return retryingLockTimeouts(PgSql.readCommitted(
                pool,
                conn -> conn.query("SET LOCAL lock_timeout = " + DDL_LOCK_TIMEOUT_MS
                                + "; SET LOCAL statement_timeout = 0; SET LOCAL client_min_messages = warning")
                        .execute()
                        .chain(() -> work.apply(conn))));
    }

    /** Re-subscribes {@code u} (a whole transaction) after a lock timeout, with backoff, a bounded number of times. */
    static <T> Uni<T> retryingLockTimeouts(Uni<T> u) {
        return u.onFailure(e -> e instanceof PgException pe && "55P03".equals(pe.getSqlState()))
                .retry()
                .withBackOff(Duration.ofMillis(200), Duration.ofSeconds(5))
                .atMost(DDL_ATTEMPTS);
    }

    private static Uni<RowSet<Row>> xactLock(SqlConnection conn, String lockName) {
        return conn.preparedQuery("SELECT pg_advisory_xact_lock(hashtext($1))").execute(Tuple.of(lockName));
    }

    /**
     * The storage DDL as catalog-checked steps ({@link DdlStep}): the tables and indexes of the sync storage, the
     * columns added after their table's first release, the writer-fence function and trigger.
     */
    List<DdlStep> coreDdl() {
        List<DdlStep> steps = new ArrayList<>(tablesDdl());
        steps.addAll(PostgresAuthLeaseStore.ddl(pgSchema)); // §7.3 auth leases
        steps.addAll(ConsoleSessions.ddl(pgSchema)); // operator console sign-ins
        steps.addAll(TenantLoadTable.ddl(pgSchema)); // each pod's loudest tenants
        return List.copyOf(steps);
    }

    private List<DdlStep> tablesDdl() {
        return List.of(
                DdlStep.schema(pgSchema, "CREATE SCHEMA IF NOT EXISTS " + q(pgSchema)),
                table(
                        "sync_schema",
                        "(id integer PRIMARY KEY CHECK (id = 1),"
                                + " schema_version integer NOT NULL, layouts text NOT NULL, updated_at_ms bigint NOT NULL)"),
                table(
                        "sync_partitions",
                        "(partition_id text PRIMARY KEY,"
                                + " log_epoch text NOT NULL, max_commit_seq bigint NOT NULL DEFAULT 0,"
                                + " horizon_seq bigint NOT NULL DEFAULT 0, created_at_ms bigint NOT NULL,"
                                + " last_seen_at_ms bigint NOT NULL)"),
                table(
                        "sync_commits",
                        "(partition_id text NOT NULL,"
                                + " commit_seq bigint NOT NULL, created_at_ms bigint NOT NULL, actor_id text NOT NULL,"
                                + " client_id text NOT NULL, client_commit_id text NOT NULL, change_count integer NOT NULL,"
                                + " tables text[] NOT NULL, writer_version bigint, PRIMARY KEY (partition_id, commit_seq))"),
                table(
                        "sync_changes",
                        "(partition_id text NOT NULL,"
                                + " commit_seq bigint NOT NULL, change_index integer NOT NULL, tbl text NOT NULL,"
                                + " row_id text COLLATE \"C\" NOT NULL, op integer NOT NULL, row_version bigint,"
                                + " scopes jsonb NOT NULL, payload bytea, PRIMARY KEY (partition_id, commit_seq, change_index))"),
                table(
                        "sync_commit_scopes",
                        "(partition_id text NOT NULL,"
                                + " tbl text NOT NULL, scope_key text NOT NULL, commit_seq bigint NOT NULL,"
                                + " PRIMARY KEY (partition_id, tbl, scope_key, commit_seq))"),
                // read by no statement (log windows probe the primary key, pruning by_seq): one index write less
                // per scope entry of every commit
                DdlStep.droppedIndex(pgSchema, "sync_commit_scopes_by_key", "sync_commit_scopes"),
                index("sync_commit_scopes_by_seq", "sync_commit_scopes", "(partition_id, commit_seq)"),
                table(
                        "sync_row_scopes",
                        "(partition_id text NOT NULL,"
                                + " tbl text NOT NULL, scope_key text NOT NULL, row_id text COLLATE \"C\" NOT NULL,"
                                + " PRIMARY KEY (partition_id, tbl, scope_key, row_id))"),
                index("sync_row_scopes_by_row", "sync_row_scopes", "(partition_id, tbl, row_id)"),
                table(
                        "sync_push_results",
                        "(partition_id text NOT NULL,"
                                + " client_id text NOT NULL, client_commit_id text NOT NULL, status integer NOT NULL,"
                                + " commit_seq bigint, result bytea NOT NULL, created_at_ms bigint NOT NULL,"
                                + " PRIMARY KEY (partition_id, client_id, client_commit_id))"),
                table(
                        "sync_clients",
                        "(partition_id text NOT NULL,"
                                + " client_id text NOT NULL, actor_id text NOT NULL, cursor bigint NOT NULL,"
                                + " updated_at_ms bigint NOT NULL, subscriptions jsonb, wire_version integer,"
                                + " PRIMARY KEY (partition_id, client_id))"),
                table(
                        "sync_tombstones",
                        "(partition_id text NOT NULL,"
                                + " tbl text NOT NULL, row_id text COLLATE \"C\" NOT NULL, commit_seq bigint NOT NULL,"
                                + " PRIMARY KEY (partition_id, tbl, row_id))"),
                index("sync_tombstones_by_seq", "sync_tombstones", "(partition_id, commit_seq)"),
                table(
                        "sync_backfill_checkpoints",
                        "(partition_id text NOT NULL,"
                                + " name text NOT NULL, schema_version integer NOT NULL, state text NOT NULL"
                                + " CHECK (state IN ('declared', 'backfilling', 'activated')),"
                                + " watermark bigint NOT NULL DEFAULT 0, owner_epoch bigint NOT NULL DEFAULT 0,"
                                + " observed_rows bigint NOT NULL DEFAULT 0, updated_at_ms bigint NOT NULL,"
                                + " PRIMARY KEY (partition_id, name))"),
                table(
                        "sync_writer_fence",
                        "(partition_id text PRIMARY KEY," + " required_writer_version integer NOT NULL)"),
                // §5.9.4 blob reference index: the primary key serves the download authorization lookup with
                // the row's stored scopes included; the row index serves maintenance on upsert/delete.
                table(
                        "sync_blob_refs",
                        "(partition_id text NOT NULL,"
                                + " blob_id text NOT NULL, tbl text NOT NULL, row_id text COLLATE \"C\" NOT NULL,"
                                + " scopes jsonb NOT NULL, PRIMARY KEY (partition_id, blob_id, tbl, row_id) INCLUDE (scopes))"),
                index("sync_blob_refs_by_row", "sync_blob_refs", "(partition_id, tbl, row_id)"),
                // §5.9.3 / §5.9.6 who uploaded a blob (entitled to reference it before any row it can read does)
                table(
                        "sync_blob_uploads",
                        "(partition_id text NOT NULL, blob_id text NOT NULL,"
                                + " actor_id text NOT NULL, uploaded_at_ms bigint NOT NULL,"
                                + " PRIMARY KEY (partition_id, blob_id, actor_id))"),
                // §5.9.2 orphan-sweep marks (see readBlobSweepMark); pending until the sweep deleted the object
                DdlStep.relation(
                        pgSchema, "sync_blob_sweep_seq", "CREATE SEQUENCE IF NOT EXISTS " + t("sync_blob_sweep_seq")),
                table(
                        "sync_blob_sweeps",
                        "(partition_id text NOT NULL,"
                                + " blob_id text NOT NULL, sweep_seq bigint NOT NULL, swept_at_ms bigint NOT NULL,"
                                + " pending boolean NOT NULL DEFAULT false, PRIMARY KEY (partition_id, blob_id))"),
                index("sync_blob_sweeps_by_seq", "sync_blob_sweeps", "(partition_id, sweep_seq)"),
                // one row per scheduled job: when it last ran, on which pod, and who holds it until when (JobLocks)
                table(
                        "sync_jobs",
                        "(name text PRIMARY KEY, last_started_at_ms bigint NOT NULL,"
                                + " last_finished_at_ms bigint, ran_by text NOT NULL,"
                                + " lease_owner text, lease_until_ms bigint)"),
                // §6.9 durable reactions: appended with their commit, claimed by delivery workers
                table(
                        "sync_reactions",
                        "(id bigserial PRIMARY KEY, partition_id text NOT NULL,"
                                + " client_id text NOT NULL, client_commit_id text NOT NULL, commit_seq bigint NOT NULL,"
                                + " reaction_key text NOT NULL, type text NOT NULL, version integer NOT NULL, payload jsonb NOT NULL,"
                                + " idempotency_key text NOT NULL, status text NOT NULL"
                                + " CHECK (status IN ('pending', 'leased', 'completed', 'dead-letter')),"
                                + " attempts integer NOT NULL, max_attempts integer NOT NULL, due_at_ms bigint NOT NULL,"
                                + " lease_owner text, lease_expires_at_ms bigint, last_error_code text, last_error_details jsonb,"
                                + " failed_at_ms bigint, completed_at_ms bigint, created_at_ms bigint NOT NULL,"
                                + " UNIQUE (partition_id, client_id, client_commit_id, reaction_key))"),
                index("sync_reactions_due", "sync_reactions", "(due_at_ms, id) WHERE status IN ('pending', 'leased')"),
                // columns added after their table's first release
                DdlStep.column(
                        pgSchema,
                        "sync_commits",
                        "writer_version",
                        "ALTER TABLE " + t("sync_commits") + " ADD COLUMN IF NOT EXISTS writer_version bigint"),
                DdlStep.column(
                        pgSchema,
                        "sync_jobs",
                        "lease_owner",
                        "ALTER TABLE " + t("sync_jobs") + " ADD COLUMN IF NOT EXISTS lease_owner text"),
                DdlStep.column(
                        pgSchema,
                        "sync_jobs",
                        "lease_until_ms",
                        "ALTER TABLE " + t("sync_jobs") + " ADD COLUMN IF NOT EXISTS lease_until_ms bigint"),
                DdlStep.column(
                        pgSchema,
                        "sync_blob_sweeps",
                        "pending",
                        "ALTER TABLE " + t("sync_blob_sweeps")
                                + " ADD COLUMN IF NOT EXISTS pending boolean NOT NULL DEFAULT false"),
                DdlStep.function(
                        pgSchema,
                        FENCE_TRIGGER,
                        "CREATE OR REPLACE FUNCTION " + t(FENCE_TRIGGER)
                                + "() RETURNS trigger LANGUAGE plpgsql AS $fn$"
                                + " DECLARE required integer;"
                                + " BEGIN"
                                + " SELECT f.required_writer_version INTO required FROM " + t("sync_writer_fence")
                                + " f"
                                + " WHERE f.partition_id = NEW.partition_id;"
                                + " IF FOUND AND (NEW.writer_version IS NULL OR NEW.writer_version < required) THEN"
                                + " RAISE EXCEPTION 'sync.storage.writer_fence_rejected' USING ERRCODE = '"
                                + CheckpointStore.FENCE_SQLSTATE + "',"
                                + " DETAIL = required::text;"
                                + " END IF;"
                                + " RETURN NEW;"
                                + " END $fn$"),
                // §6.7 queryAuthoritative inside a push transaction (PushTransaction#queryRows): a failing registered
                // statement (an error, the statement timeout) is caught here, so it never aborts the transaction
                DdlStep.function(
                        pgSchema,
                        GUARDED_QUERY,
                        "CREATE OR REPLACE FUNCTION " + t(GUARDED_QUERY)
                                + "(q text, args text[]) RETURNS text LANGUAGE plpgsql AS $fn$"
                                + " DECLARE out text;"
                                + " BEGIN"
                                + " EXECUTE 'SELECT coalesce(json_agg(r), ''[]'')::text FROM (' || q || ') AS r'"
                                + " INTO out USING args;"
                                + " RETURN out;"
                                + " EXCEPTION WHEN query_canceled THEN RETURN json_build_object('sqlstate', SQLSTATE)::text;"
                                + " WHEN OTHERS THEN RETURN json_build_object('sqlstate', SQLSTATE)::text;"
                                + " END $fn$"),
                DdlStep.trigger(
                        pgSchema,
                        "sync_commits",
                        FENCE_TRIGGER,
                        "CREATE TRIGGER " + q(FENCE_TRIGGER) + " BEFORE INSERT ON " + t("sync_commits")
                                + " FOR EACH ROW EXECUTE FUNCTION " + t(FENCE_TRIGGER) + "()"),
                // §2.3 retention of push results (Pruning): added to a table that may be busy, so built concurrently
                DdlStep.concurrentIndex(
                        pgSchema, "sync_push_results_by_age", "sync_push_results", "(partition_id, created_at_ms)"));
    }

    private DdlStep table(String name, String definition) {
        return DdlStep.relation(pgSchema, name, "CREATE TABLE IF NOT EXISTS " + t(name) + " " + definition);
    }

    private DdlStep index(String name, String table, String columns) {
        return DdlStep.relation(
                pgSchema, name, "CREATE INDEX IF NOT EXISTS " + name + " ON " + t(table) + " " + columns);
    }

    String createRowTableDdl(TableSchema table) {
        StringBuilder sb = new StringBuilder("CREATE TABLE IF NOT EXISTS ")
                .append(t(RowTable.physicalName(table.name())))
                .append(" (");
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

    /** Whether the PostgreSQL schema {@code namespace} has a {@code sync_partitions} table (one catalog read). */
    Uni<Boolean> holdsSyncTables(String namespace) {
        return pool.preparedQuery("SELECT to_regclass(format('%I.sync_partitions', $1::text)) IS NOT NULL")
                .execute(Tuple.of(namespace))
                .map(rows -> rows.iterator().next().getBoolean(0));
    }

    /**
     * The catalog-checked core DDL ({@link #applyDdl}: none at all on an up-to-date database), then one
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
        return applyDdl(pool, lockName(), coreDdl())
                .chain(() -> ddlTransaction(
                        pool,
                        conn -> xactLock(conn, lockName())
                                .chain(() -> readMarker(conn))
                                .chain(marker -> {
                                    if (marker == null || marker.getInteger(0) < running.version()) {
                                        return Uni.createFrom().item(Boolean.TRUE);
                                    }
                                    return sameVersionOrNewer(conn, running, marker, declarations, nowMs)
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
                    Uni<Void> ddl;
                    if (marker == null) {
                        ddl = createFresh(conn, running);
                    } else if (marker.getInteger(0) < running.version()) {
                        ddl = upgrade(conn, running, TableLayout.parse(marker.getString(1)));
                    } else {
                        return sameVersionOrNewer(conn, running, marker, declarations, nowMs);
                    }
                    return ddl.chain(() -> checkpoints.installCheckpoints(conn, declarations, nowMs))
                            .chain(() -> checkpoints.raiseAllFences(conn, running.version()));
                });
    }

    private Uni<Void> sameVersionOrNewer(
            SqlConnection conn,
            CompiledSchema running,
            Row marker,
            List<CheckpointDeclaration> declarations,
            long nowMs) {
        int stored = marker.getInteger(0);
        if (stored == running.version()) {
            return verifySameVersion(conn, running, TableLayout.parse(marker.getString(1)))
                    .chain(() -> checkpoints.installCheckpoints(conn, declarations, nowMs));
        }
        return Uni.createFrom()
                .failure(new StorageException(
                        StorageException.SCHEMA_NOT_READY,
                        "stored schema version is newer than the running schema",
                        Map.of("storedVersion", stored, "runningVersion", running.version())));
    }

    private String lockName() {
        return "syncular.ensureSchema:" + pgSchema;
    }

    private Uni<Row> readMarker(SqlConnection conn) {
        return conn.query(readMarkerSql).execute().map(PgSql::first);
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
            ddl.addAll(UniqueIndexes.createWithTable(pgSchema, ts));
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
        Uni<RowSet<Row>> columns = conn.preparedQuery(
                        "SELECT table_name::text, column_name::text, data_type::text, is_nullable::text"
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
                        primaryKeys
                                .computeIfAbsent(r.getString(0), k -> new ArrayList<>())
                                .add(r.getString(1));
                    }
                    StorageException e = physicalMismatch(running, catalog, primaryKeys);
                    if (e != null) {
                        throw e;
                    }
                    return null;
                }))
                .replaceWithVoid();
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
                    return physical(
                            ts.name(), internal[0], "nullability", nullability(internal[2]), nullability(actual[1]));
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

    private static StorageException physical(
            String table, String column, String reason, String expected, String actual) {
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
        return new StorageException(
                StorageException.PHYSICAL_LAYOUT_MISMATCH,
                "database catalog disagrees with the storage layout of a synced table",
                d);
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
                // a new table is empty: its unique indexes are created with it (existing tables: reconcile)
                ddl.addAll(UniqueIndexes.createWithTable(pgSchema, ts));
                continue;
            }
            TableLayout now = TableLayout.of(ts);
            if (before.columns().size() > now.columns().size()
                    || !now.columns().subList(0, before.columns().size()).equals(before.columns())
                    || !before.primaryKey().equals(now.primaryKey())) {
                return Uni.createFrom()
                        .failure(new StorageException(
                                StorageException.UNSUPPORTED_MIGRATION,
                                "schema upgrade is not additive",
                                Map.of("table", ts.name())));
            }
            for (int i = before.columns().size(); i < ts.columnCount(); i++) {
                ColumnSchema c = ts.column(i);
                ddl.add("ALTER TABLE " + physical + " ADD COLUMN IF NOT EXISTS " + q(c.name()) + " "
                        + RowTable.sqlType(c.type()));
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
                .onFailure(e -> e instanceof PgException pe && "42P01".equals(pe.getSqlState()))
                .recoverWithItem(0);
    }

    private static Uni<Void> execAll(SqlConnection conn, List<String> statements) {
        return Multi.createFrom()
                .iterable(statements)
                .onItem()
                .transformToUniAndConcatenate(sql -> conn.query(sql).execute())
                .collect()
                .last()
                .replaceWithVoid();
    }
}
