package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.q;

import java.util.ArrayList;
import java.util.List;

/**
 * The DDL plan of the sync storage's own tables (the tables serve §2.1–§2.3, §3.1, §4.5–§4.7, §5.9.4; the writer
 * fence §2.4), as catalog-checked {@link DdlStep}s that {@link StartupDdl#applyDdl} runs:
 *
 * <ul>
 *   <li>{@code sync_schema(id=1, schema_version, layouts text JSON, updated_at_ms, applied_ddl text JSON)} — the
 *       marker ({@link TableLayout}) with the statements of the migration that wrote it;
 *   <li>{@code sync_partitions(partition_id PK, log_epoch, max_commit_seq, horizon_seq, created_at_ms,
 *       last_seen_at_ms)} — the registry, also the per-partition lock row;
 *   <li>the commit log ({@link LogLayout}: plain tables, or hash-partitioned by {@code partition_id}):
 *       {@code sync_commits(partition_id, commit_seq) PK} with created/actor/client/clientCommitId,
 *       change_count, the commit's table list and {@code trace_parent} (the W3C {@code traceparent} of the sampled
 *       push span, NULL when the push was not traced: the fan-out of every pod links to it);
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
 *       subscriptions jsonb, wire_version, schema_version;
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
 */
final class CoreTables {
    private static final String FENCE_TRIGGER = "sync_commits_writer_fence";
    /** {@code (q text, args text[]) RETURNS text}: {@code q}'s rows as a JSON array, or {@code {"sqlstate"}}. */
    static final String GUARDED_QUERY = "sync_guarded_query";

    private final String pgSchema;
    private final int logLeaves;

    /**
     * @param logLeaves the leaves of each log table a new database gets ({@link LogLayout#PLAIN}: plain tables);
     *                  an existing log keeps its layout
     */
    CoreTables(String pgSchema, int logLeaves) {
        this.pgSchema = pgSchema;
        this.logLeaves = LogLayout.checkedLeaves(logLeaves);
    }

    private String t(String name) {
        return PgSql.qualified(pgSchema, name);
    }

    /**
     * The storage DDL as catalog-checked steps ({@link DdlStep}): the tables and indexes of the sync storage, the
     * columns added after their table's first release, the writer-fence function and trigger.
     */
    List<DdlStep> coreDdl() {
        List<DdlStep> steps = new ArrayList<>(tablesDdl());
        // the log tables' secondary indexes, as LogLayout declares them (the online move builds the same)
        for (LogLayout.LogTable table : LogLayout.TABLES) {
            for (String[] index : table.indexes()) {
                steps.add(index(index[0], table.name(), index[1]));
            }
        }
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
                // §2.1, §2.2 the commit log, plain or hash-partitioned (LogLayout)
                logTable(LogLayout.TABLES.get(0)),
                logTable(LogLayout.TABLES.get(1)),
                logTable(LogLayout.TABLES.get(2)),
                // read by no statement (log windows probe the primary key, pruning by_seq): one index write less
                // per scope entry of every commit
                DdlStep.droppedIndex(pgSchema, "sync_commit_scopes_by_key", "sync_commit_scopes"),
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
                        "sync_clients",
                        "schema_version",
                        "ALTER TABLE " + t("sync_clients") + " ADD COLUMN IF NOT EXISTS schema_version integer"),
                DdlStep.column(
                        pgSchema,
                        "sync_schema",
                        "applied_ddl",
                        "ALTER TABLE " + t("sync_schema") + " ADD COLUMN IF NOT EXISTS applied_ddl text"),
                DdlStep.column(
                        pgSchema,
                        "sync_commits",
                        "writer_version",
                        "ALTER TABLE " + t("sync_commits") + " ADD COLUMN IF NOT EXISTS writer_version bigint"),
                DdlStep.column(
                        pgSchema,
                        "sync_commits",
                        "trace_parent",
                        "ALTER TABLE " + t("sync_commits") + " ADD COLUMN IF NOT EXISTS trace_parent text"),
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
                DdlStep.trigger(pgSchema, "sync_commits", FENCE_TRIGGER, fenceTrigger(pgSchema, "sync_commits")),
                // §2.3 retention of push results (Pruning): added to a table that may be busy, so built concurrently
                DdlStep.concurrentIndex(
                        pgSchema, "sync_push_results_by_age", "sync_push_results", "(partition_id, created_at_ms)"));
    }

    /** {@code CREATE TRIGGER} of the §2.4 writer fence on {@code table} (the commits, or their next layout). */
    static String fenceTrigger(String pgSchema, String table) {
        return "CREATE TRIGGER " + q(FENCE_TRIGGER) + " BEFORE INSERT ON " + PgSql.qualified(pgSchema, table)
                + " FOR EACH ROW EXECUTE FUNCTION " + PgSql.qualified(pgSchema, FENCE_TRIGGER) + "()";
    }

    /** A log table of {@link LogLayout}: created with its leaves, or plain. */
    private DdlStep logTable(LogLayout.LogTable table) {
        return DdlStep.relation(pgSchema, table.name(), LogLayout.createStatements(pgSchema, table, logLeaves));
    }

    private DdlStep table(String name, String definition) {
        return DdlStep.relation(pgSchema, name, "CREATE TABLE IF NOT EXISTS " + t(name) + " " + definition);
    }

    private DdlStep index(String name, String table, String columns) {
        return DdlStep.relation(
                pgSchema, name, "CREATE INDEX IF NOT EXISTS " + name + " ON " + t(table) + " " + columns);
    }
}
