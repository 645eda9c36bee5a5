package dev.syncular.server.boot;

import dev.syncular.server.schema.SchemaException;
import dev.syncular.server.storage.StorageConfig;
import dev.syncular.server.storage.StorageException;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.vertx.pgclient.PgException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * Turns the start-up failures an operator causes by configuration — an invalid schema IR, a schema whose tables
 * no longer match what the database stores — into one {@link ConfigurationException} whose message says what is
 * wrong and how to fix it. Quarkus prints a {@code ConfigurationException} as its message only (no stack trace)
 * and exits with status 1; the original exception and its stack trace are logged at DEBUG level
 * ({@code quarkus.log.category."dev.syncular.server.boot.StartupErrors".level=DEBUG}).
 */
final class StartupErrors {
    private static final Logger LOG = Logger.getLogger(StartupErrors.class);

    /** Where the dev/test embedded PostgreSQL keeps its data, relative to the project when run from it. */
    static final String DEV_DATA_DIR = "target/embedded-postgres";

    private StartupErrors() {}

    /**
     * The running schema could not be compiled ({@code schema.invalid}).
     *
     * @param source where the schema came from: the {@code syncular.schema.path} file or the bundled resource
     */
    static ConfigurationException invalidSchema(SchemaException e, String source) {
        LOG.debug("schema compile failure", e);
        return new ConfigurationException("Syncular cannot serve the schema IR " + source + ": " + e.getMessage()
                + " [" + e.code() + ", reason " + e.reason()
                + "]. Fix the schema (docs/SCHEMA.md lists every check) or "
                + "point syncular.schema.path (env SYNCULAR_SCHEMA_PATH) at another file.");
    }

    /** An older document of {@code syncular.schema.window} does not compile or breaks a §9 window rule. */
    static ConfigurationException invalidWindow(SchemaException e, String file) {
        LOG.debug("schema window failure", e);
        return new ConfigurationException(
                windowMessage(file, e.getMessage() + " [" + e.code() + ", reason " + e.reason() + "]"));
    }

    /** An older document of {@code syncular.schema.window} that cannot be part of the window. */
    static ConfigurationException invalidWindow(String file, String problem) {
        return new ConfigurationException(windowMessage(file, problem));
    }

    private static String windowMessage(String file, String problem) {
        return "Syncular cannot serve the schema window (syncular.schema.window, SSP2 §9): " + file + ": " + problem
                + ". An older schema may differ from the current one only by appended nullable columns and new tables"
                + " (docs/SCHEMA.md \"Rolling out a schema change to a mobile fleet\"); remove the document from"
                + " syncular.schema.window (env SYNCULAR_SCHEMA_WINDOW) to stop serving its version.";
    }

    /**
     * The storage migration refused the running schema, or {@code null} when {@code e} is not a configuration
     * problem (the caller rethrows it unchanged).
     *
     * @param pgSchema       {@code syncular.storage.pg-schema}
     * @param schemaVersion  the running schema's version
     * @param embeddedDataDir the data directory of the embedded dev/test PostgreSQL in use, or {@code null}
     */
    static ConfigurationException storage(
            StorageException e, String pgSchema, int schemaVersion, String embeddedDataDir) {
        if (StorageException.UNIQUE_INDEX_DUPLICATES.equals(e.code())) {
            LOG.debug("storage migration failure", e);
            return uniqueIndexDuplicates(e, pgSchema);
        }
        String what;
        switch (e.code()) {
            case StorageException.STORED_LAYOUT_MISMATCH ->
                what = "the running schema (version " + schemaVersion
                        + ") does not match the tables the database stores for schema version " + schemaVersion
                        + where(e.details()) + ": a schema change needs a new schema version.";
            case StorageException.PHYSICAL_LAYOUT_MISMATCH ->
                what = "the sync tables in the database were changed outside "
                        + "the server and no longer match the running schema (version " + schemaVersion + ")"
                        + where(e.details())
                        + detail(e.details()) + ".";
            case StorageException.UNSUPPORTED_MIGRATION ->
                what = "the upgrade to schema version " + schemaVersion
                        + " is not additive" + where(e.details()) + ": existing columns must keep their name, type, "
                        + "nullability and order and the primary key must stay; only new nullable columns (appended) and new "
                        + "tables migrate.";
            default -> {
                return null;
            }
        }
        LOG.debug("storage migration failure", e);
        StringBuilder m = new StringBuilder("Syncular cannot start on PostgreSQL schema \"")
                .append(pgSchema)
                .append("\": ")
                .append(what)
                .append(" [")
                .append(e.code())
                .append("]. Fix it in one of these ways: ");
        int n = 1;
        if (!StorageException.PHYSICAL_LAYOUT_MISMATCH.equals(e.code())) {
            m.append('(').append(n++).append(") ");
            if (StorageException.UNSUPPORTED_MIGRATION.equals(e.code())) {
                m.append("make the change additive (docs/SCHEMA.md, \"Changing a schema\"); ");
            } else {
                m.append(
                        "raise \"schemaVersion\" in the schema IR (an additive change, docs/SCHEMA.md, \"Changing a schema\"); ");
            }
        }
        m.append('(')
                .append(n++)
                .append(") use another, empty storage schema: set syncular.storage.pg-schema "
                        + "(env SYNCULAR_STORAGE_PG_SCHEMA), e.g. -Dsyncular.storage.pg-schema=dev2; ");
        if (embeddedDataDir != null) {
            m.append('(')
                    .append(n)
                    .append(") reset the embedded development database: stop the server and delete its "
                            + "data directory (rm -rf ")
                    .append(embeddedDataDir)
                    .append(").");
        } else if (StorageConfig.LEGACY_PG_SCHEMA.equals(pgSchema)) {
            // public is shared by everything else in the database: never a suggestion to drop it
            m.append('(')
                    .append(n)
                    .append(") move to a storage schema of Syncular's own (syncular.storage.pg-schema) and start there"
                            + " empty; the tables in \"public\" are left as they are.");
        } else {
            m.append('(')
                    .append(n)
                    .append(") on a disposable database where schema \"")
                    .append(pgSchema)
                    .append("\" holds nothing but Syncular's tables, drop it (DROP SCHEMA \"")
                    .append(pgSchema)
                    .append("\" CASCADE) and restart.");
        }
        return new ConfigurationException(m.toString());
    }

    /**
     * A declared unique index that cannot be created because rows already collide on its key: which index, which
     * rows (partition, row ids, key; the bounded list of the details) and the ways out.
     */
    private static ConfigurationException uniqueIndexDuplicates(StorageException e, String pgSchema) {
        Map<String, Object> d = e.details();
        StringBuilder m = new StringBuilder("Syncular cannot start on PostgreSQL schema \"")
                .append(pgSchema)
                .append("\": the schema declares the unique index \"")
                .append(d.get("index"))
                .append("\" on table \"")
                .append(d.get("table"))
                .append("\" (columns ")
                .append(quotedList(d.get("columns")))
                .append("), but rows of one partition already share its key: ");
        String sep = "";
        if (d.get("collisions") instanceof List<?> collisions) {
            for (Object o : collisions) {
                if (o instanceof Map<?, ?> c) {
                    m.append(sep)
                            .append("partition \"")
                            .append(c.get("partition"))
                            .append("\" rows ")
                            .append(quotedList(c.get("rowIds")))
                            .append(" (")
                            .append(c.get("rows"))
                            .append(" rows) with key (")
                            .append(quotedList(c.get("key")))
                            .append(')');
                    sep = "; ";
                }
            }
        }
        if (Boolean.TRUE.equals(d.get("more"))) {
            m.append("; and more");
        }
        m.append(" [")
                .append(e.code())
                .append("]. Fix it in one of these ways: (1) give those rows distinct keys or delete all but one of")
                .append(
                        " each (through a server still running the previous schema, or in the table's sync_rows_ table),")
                .append(" then start again; (2) drop \"unique\": true from the index in the schema IR")
                .append(" (docs/SCHEMA.md, \"Unique indexes\").");
        return new ConfigurationException(m.toString());
    }

    private static String quotedList(Object values) {
        if (!(values instanceof List<?> list)) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        for (Object v : list) {
            if (!sb.isEmpty()) {
                sb.append(", ");
            }
            sb.append('"').append(v).append('"');
        }
        return sb.toString();
    }

    /** The storage namespace is the default and empty while the one of earlier releases holds the sync tables. */
    static String tablesInLegacySchema(String pgSchema) {
        return "Syncular found its tables in PostgreSQL schema \"" + StorageConfig.LEGACY_PG_SCHEMA
                + "\" (the default before 0.2.0) and none in \"" + pgSchema + "\", the default now: it would start"
                + " empty and every client would reset. Set syncular.storage.pg-schema=public (env"
                + " SYNCULAR_STORAGE_PG_SCHEMA, chart postgresql.pgSchema) to keep serving them; to start an empty"
                + " deployment in \"" + pgSchema + "\" beside them, set syncular.storage.pg-schema=" + pgSchema
                + " explicitly.";
    }

    /**
     * The database cannot be reached or refuses the configured credentials, database or privileges, or
     * {@code null} when {@code e} is something else (the caller rethrows it unchanged).
     *
     * @param url  {@code quarkus.datasource.reactive.url} as configured
     * @param user {@code quarkus.datasource.username}
     */
    static ConfigurationException database(Throwable e, String url, String user) {
        String problem = null;
        for (Throwable t = e; t != null && problem == null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ConnectException
                    || t instanceof UnknownHostException
                    || t instanceof NoRouteToHostException) {
                problem = "cannot connect (" + t.getMessage() + ")";
            } else if (t instanceof PgException pg && pg.getSqlState() != null) {
                String state = pg.getSqlState();
                if (state.startsWith("28") || state.equals("3D000") || state.equals("42501")) {
                    problem = "the server refused: " + pg.getErrorMessage() + " (SQLSTATE " + state + ")";
                }
            }
        }
        if (problem == null) {
            return null;
        }
        LOG.debug("database connection failure", e);
        return new ConfigurationException("Syncular cannot use the PostgreSQL database " + withoutCredentials(url)
                + " as user \"" + user
                + "\": " + problem + ". Check quarkus.datasource.reactive.url (env QUARKUS_DATASOURCE_REACTIVE_URL or "
                + "SYNCULAR_PG_URL), quarkus.datasource.username (env SYNCULAR_PG_USER) and quarkus.datasource.password "
                + "(env SYNCULAR_PG_PASSWORD); the user needs CREATE on the database's storage schema "
                + "(syncular.storage.pg-schema).");
    }

    /** The URL without a {@code user:password@} part, so the message never prints a password. */
    static String withoutCredentials(String url) {
        return url.replaceFirst("://[^/@]*@", "://");
    }

    private static String where(Map<String, Object> d) {
        Object table = d.get("table");
        if (table == null) {
            return "";
        }
        Object column = d.get("column");
        return " (table \"" + table + "\"" + (column == null ? "" : ", column \"" + column + "\"") + ")";
    }

    private static String detail(Map<String, Object> d) {
        Object reason = d.get("reason");
        if (reason == null) {
            return "";
        }
        Object expected = d.get("expected");
        return ", " + reason.toString().replace('_', ' ')
                + (expected == null ? "" : " " + d.get("actual") + " where " + expected + " is expected");
    }
}
