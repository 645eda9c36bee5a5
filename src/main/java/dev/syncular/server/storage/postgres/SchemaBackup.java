package dev.syncular.server.storage.postgres;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.storage.StorageBackup;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;

/**
 * {@link StorageBackup} on PostgreSQL (the conformance host's {@code backup-restore} capability, §2.1 "Backup restore
 * rule"): every table of the storage's PostgreSQL schema copied into a backup schema beside it
 * ({@code <schema>_backup}), and put back to the captured rows in one transaction. A partitioned table is copied
 * through its parent.
 */
public final class SchemaBackup implements StorageBackup {
    /**
     * A table of {@code pg_tables} that is not a leaf of a partitioned one (the hash-partitioned log, {@link
     * LogLayout}): a parent's rows are its leaves' rows, copied and put back once, through the parent.
     */
    private static final String NOT_A_LEAF = "NOT EXISTS (SELECT 1 FROM pg_class l WHERE l.relname = tablename"
            + " AND l.relnamespace = (SELECT n.oid FROM pg_namespace n WHERE n.nspname = schemaname) AND l.relispartition)";

    private final Pool pool;
    private final String schema;
    private final String backup;

    public SchemaBackup(Pool pool, String schema) {
        this.pool = pool;
        this.schema = schema;
        this.backup = schema + "_backup";
    }

    @Override
    public Uni<Void> capture() {
        return pool.query("DO $$ DECLARE t text; BEGIN"
                        + " EXECUTE format('DROP SCHEMA IF EXISTS %I CASCADE', " + lit(backup) + ");"
                        + " EXECUTE format('CREATE SCHEMA %I', " + lit(backup) + ");"
                        + " FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = " + lit(schema)
                        + " AND " + NOT_A_LEAF + " LOOP"
                        + " EXECUTE format('CREATE TABLE %I.%I AS TABLE %I.%I', " + lit(backup) + ", t, " + lit(schema)
                        + ", t);"
                        + " END LOOP; END $$")
                .execute()
                .replaceWithVoid();
    }

    /**
     * Every table emptied (one {@code TRUNCATE}) and refilled from the backup, referenced tables before the tables
     * whose foreign keys point at them, atomically.
     */
    @Override
    public Uni<Void> restore() {
        String s = lit(schema);
        String b = lit(backup);
        return pool.query("SELECT to_regnamespace(" + b + ") IS NOT NULL")
                .execute()
                .chain(rs -> {
                    if (!rs.iterator().next().getBoolean(0)) {
                        return Uni.createFrom().failure(new SyncError(ErrorCode.NOT_FOUND, "no backup captured"));
                    }
                    return pool.query("DO $$ DECLARE t text; done text[] := '{}'; progress boolean; BEGIN"
                                    + " EXECUTE (SELECT 'TRUNCATE ' || string_agg(format('%I.%I', schemaname, tablename), ', ')"
                                    + " FROM pg_tables WHERE schemaname = " + s + ");"
                                    + " LOOP progress := false;"
                                    + " FOR t IN SELECT p.tablename FROM pg_tables p WHERE p.schemaname = " + s
                                    + " AND " + NOT_A_LEAF.replace("tablename", "p.tablename")
                                    + " AND NOT p.tablename = ANY(done) AND NOT EXISTS (SELECT 1 FROM pg_constraint c"
                                    + " JOIN pg_class r ON r.oid = c.confrelid WHERE c.contype = 'f'"
                                    + " AND c.conrelid = format('%I.%I', " + s + ", p.tablename)::regclass"
                                    + " AND c.confrelid <> c.conrelid AND NOT r.relname = ANY(done)) LOOP"
                                    + " IF to_regclass(format('%I.%I', " + b + ", t)) IS NOT NULL THEN"
                                    + " EXECUTE format('INSERT INTO %I.%I OVERRIDING SYSTEM VALUE SELECT * FROM %I.%I', "
                                    + s + ", t, "
                                    + b + ", t);"
                                    + " END IF; done := done || t; progress := true; END LOOP;"
                                    + " EXIT WHEN NOT progress; END LOOP; END $$")
                            .execute()
                            .replaceWithVoid();
                });
    }

    @Override
    public Uni<Void> drop() {
        return pool.query("DROP SCHEMA IF EXISTS \"" + backup + "\" CASCADE")
                .execute()
                .replaceWithVoid();
    }

    private static String lit(String text) {
        return "'" + text.replace("'", "''") + "'";
    }
}
