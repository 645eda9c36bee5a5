package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.lit;
import static dev.syncular.server.storage.postgres.PgSql.qualified;

/**
 * One start-up DDL statement with the catalog probe that tells whether its object already exists. Start-up
 * runs a statement only when its probe answers {@code false} ({@link PostgresSyncStorage#applyDdl}): on an
 * up-to-date database a boot reads the catalog once and issues no DDL, so it takes no lock that a push could
 * wait for ({@code CREATE INDEX} takes SHARE, {@code ALTER TABLE} ACCESS EXCLUSIVE, even when the object
 * exists). Probes read {@code pg_catalog} only ({@code to_regclass}, {@code pg_attribute}, {@code pg_proc},
 * {@code pg_trigger}, {@code pg_index}): they lock no table.
 *
 * @param probe       a boolean SQL expression, true when the object exists
 * @param sql         the statement creating it
 * @param dropInvalid {@code null}, or for a {@code CREATE INDEX CONCURRENTLY} on a table that may already hold
 *                    data ({@link #concurrent()}) the statement dropping an invalid leftover of an interrupted
 *                    build, run before {@code sql}. Such a step runs outside any transaction (it never blocks
 *                    writers), after the other steps; its probe also requires the index to be valid.
 */
public record DdlStep(String probe, String sql, String dropInvalid) {

    /** Whether this step builds an index concurrently (outside a transaction). */
    public boolean concurrent() {
        return dropInvalid != null;
    }

    /** The PostgreSQL schema (namespace). */
    public static DdlStep schema(String pgSchema, String sql) {
        return new DdlStep("EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = " + lit(pgSchema) + ")", sql, null);
    }

    /** A table, index or sequence {@code name} of {@code pgSchema}. */
    public static DdlStep relation(String pgSchema, String name, String sql) {
        return new DdlStep(regclass(pgSchema, name) + " IS NOT NULL", sql, null);
    }

    /** Column {@code column} of table {@code table}. */
    public static DdlStep column(String pgSchema, String table, String column, String sql) {
        return new DdlStep("EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = " + regclass(pgSchema, table)
                + " AND attname = " + lit(column) + " AND NOT attisdropped)", sql, null);
    }

    /** Function {@code name} of {@code pgSchema}. */
    public static DdlStep function(String pgSchema, String name, String sql) {
        return new DdlStep("EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
                + " WHERE n.nspname = " + lit(pgSchema) + " AND p.proname = " + lit(name) + ")", sql, null);
    }

    /** Trigger {@code name} on table {@code table}. */
    public static DdlStep trigger(String pgSchema, String table, String name, String sql) {
        return new DdlStep("EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = " + regclass(pgSchema, table)
                + " AND tgname = " + lit(name) + ")", sql, null);
    }

    /** A valid index {@code name}, built with {@code CREATE INDEX CONCURRENTLY IF NOT EXISTS} ({@code sql}). */
    public static DdlStep concurrentIndex(String pgSchema, String name, String sql) {
        return new DdlStep("EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = " + regclass(pgSchema, name)
                + " AND indisvalid)", sql, "DROP INDEX CONCURRENTLY IF EXISTS " + qualified(pgSchema, name));
    }

    private static String regclass(String pgSchema, String name) {
        return "to_regclass(" + lit(qualified(pgSchema, name)) + ")";
    }
}
