package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.lit;
import static dev.syncular.server.storage.postgres.PgSql.qualified;

/**
 * One start-up DDL statement with the catalog probe that tells whether its object already exists. Start-up
 * runs a statement only when its probe answers {@code false} ({@link PostgresStores#applyDdl}): on an
 * up-to-date database a boot reads the catalog once and issues no DDL, so it takes no lock that a push could
 * wait for ({@code CREATE INDEX} takes SHARE, {@code ALTER TABLE} ACCESS EXCLUSIVE, even when the object
 * exists). Probes read {@code pg_catalog} only ({@code to_regclass}, {@code pg_attribute}, {@code pg_proc},
 * {@code pg_trigger}, {@code pg_index}): they lock no table.
 *
 * @param probe         a boolean SQL expression, true when the object exists
 * @param sql           the statement creating it (in a transaction)
 * @param concurrentSql {@code null}, or for an index added to a table that may already hold data
 *                      ({@link #concurrent()}) its {@code CREATE INDEX CONCURRENTLY}: run outside any
 *                      transaction (it never blocks writers), after the other steps, once {@code dropInvalid} removed
 *                      an invalid leftover of an interrupted build; its probe also requires the index to be valid.
 *                      When the table itself is created by the same start-up ({@code tableProbe} false), the plain
 *                      {@code sql} runs in the transaction instead (the table is new and empty).
 * @param dropInvalid   see {@code concurrentSql}
 * @param tableProbe    see {@code concurrentSql}
 */
public record DdlStep(String probe, String sql, String concurrentSql, String dropInvalid, String tableProbe) {

    /** Whether this step builds an index concurrently on a table that exists. */
    public boolean concurrent() {
        return concurrentSql != null;
    }

    /** The PostgreSQL schema (namespace). */
    public static DdlStep schema(String pgSchema, String sql) {
        return new DdlStep(
                "EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = " + lit(pgSchema) + ")", sql, null, null, null);
    }

    /** A table, index or sequence {@code name} of {@code pgSchema}. */
    public static DdlStep relation(String pgSchema, String name, String sql) {
        return new DdlStep(regclass(pgSchema, name) + " IS NOT NULL", sql, null, null, null);
    }

    /** Column {@code column} of table {@code table}. */
    public static DdlStep column(String pgSchema, String table, String column, String sql) {
        return new DdlStep(
                "EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = " + regclass(pgSchema, table) + " AND attname = "
                        + lit(column) + " AND NOT attisdropped)",
                sql,
                null,
                null,
                null);
    }

    /** {@code column} of {@code table} kept out of line and uncompressed ({@code SET STORAGE EXTERNAL}). */
    public static DdlStep externalStorage(String pgSchema, String table, String column) {
        return new DdlStep(
                "EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = " + regclass(pgSchema, table) + " AND attname = "
                        + lit(column) + " AND attstorage = 'e')",
                "ALTER TABLE " + qualified(pgSchema, table) + " ALTER COLUMN " + column + " SET STORAGE EXTERNAL",
                null,
                null,
                null);
    }

    /** Function {@code name} of {@code pgSchema}. */
    public static DdlStep function(String pgSchema, String name, String sql) {
        return new DdlStep(
                "EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace" + " WHERE n.nspname = "
                        + lit(pgSchema) + " AND p.proname = " + lit(name) + ")",
                sql,
                null,
                null,
                null);
    }

    /** Trigger {@code name} on table {@code table}. */
    public static DdlStep trigger(String pgSchema, String table, String name, String sql) {
        return new DdlStep(
                "EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = " + regclass(pgSchema, table) + " AND tgname = "
                        + lit(name) + ")",
                sql,
                null,
                null,
                null);
    }

    /**
     * A valid index {@code name} on {@code table} ({@code columns}, e.g. {@code (a, b)}), added after the table's
     * first release: built concurrently when the table exists.
     */
    public static DdlStep concurrentIndex(String pgSchema, String name, String table, String columns) {
        String on = " " + name + " ON " + qualified(pgSchema, table) + " " + columns;
        return new DdlStep(
                "EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = " + regclass(pgSchema, name) + " AND indisvalid)",
                "CREATE INDEX IF NOT EXISTS" + on,
                "CREATE INDEX CONCURRENTLY IF NOT EXISTS" + on,
                "DROP INDEX CONCURRENTLY IF EXISTS " + qualified(pgSchema, name),
                regclass(pgSchema, table) + " IS NOT NULL");
    }

    /**
     * No index {@code name} on {@code table}: one an earlier release made and no statement uses any more, dropped
     * concurrently (outside any transaction, never blocking writers) when the table exists.
     */
    public static DdlStep droppedIndex(String pgSchema, String name, String table) {
        return new DdlStep(
                regclass(pgSchema, name) + " IS NULL",
                "DROP INDEX IF EXISTS " + qualified(pgSchema, name),
                "DROP INDEX CONCURRENTLY IF EXISTS " + qualified(pgSchema, name),
                "SELECT 1",
                regclass(pgSchema, table) + " IS NOT NULL");
    }

    private static String regclass(String pgSchema, String name) {
        return "to_regclass(" + lit(qualified(pgSchema, name)) + ")";
    }
}
