package dev.syncular.server.testsupport;

import dev.syncular.server.config.EmbeddedDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Stream;
import org.postgresql.Driver;

/**
 * A streaming hot standby of the JVM's embedded PostgreSQL, for the replica tests on a machine with nothing but Java:
 * the embedded binaries have {@code initdb}, {@code pg_ctl} and {@code postgres} but no {@code pg_basebackup}, so the
 * base backup is the low-level one PostgreSQL documents ("Making a Base Backup Using the Low Level API"):
 * {@code pg_backup_start}, a copy of the data directory while the primary runs, {@code pg_backup_stop} on the same
 * session and its label file written into the copy. A physical replication slot, reserved before the backup starts,
 * keeps every WAL segment the standby still needs; the copy starts with {@code standby.signal} and streams from the
 * primary. Made once per JVM ({@link #port()}, for {@link TestPostgres#replicaUrl()}), stopped and removed when the
 * JVM exits.
 */
final class EmbeddedStandby {
    private static final String SLOT = "syncular_test_standby";
    private static final Duration WAIT = Duration.ofSeconds(120);
    /** Contents the copy leaves out (PostgreSQL's list for base backups, plus the embedded library's lock file). */
    private static final Set<String> EMPTIED_DIRECTORIES = Set.of(
            "pg_wal",
            "pg_replslot",
            "pg_dynshmem",
            "pg_notify",
            "pg_serial",
            "pg_snapshots",
            "pg_stat_tmp",
            "pg_subtrans");

    private static final Set<String> SKIPPED_FILES =
            Set.of("postmaster.pid", "postmaster.opts", "epg-lock", "backup_label", "tablespace_map");

    private EmbeddedStandby() {}

    /** The standby's port once made; a system property, as test classes load this class in several class loaders. */
    private static final String PORT_PROPERTY = "dev.syncular.test.embedded-standby.port";
    /** Interned, hence one object for all class loaders of this JVM. */
    private static final String LOCK = "dev.syncular.server.testsupport.EmbeddedStandby.lock".intern();

    /** The JVM's standby of the embedded primary, made on the first call; answers its port. */
    static int port() {
        synchronized (LOCK) {
            String made = System.getProperty(PORT_PROPERTY);
            if (made != null) {
                return Integer.parseInt(made);
            }
            int port = start();
            System.setProperty(PORT_PROPERTY, Integer.toString(port));
            return port;
        }
    }

    /** Makes and starts the standby; answers its port. The embedded primary must be running. */
    private static int start() {
        int primaryPort = Integer.parseInt(property(EmbeddedDatabase.PORT_PROPERTY));
        Path primaryData = Path.of(property(EmbeddedDatabase.DATA_DIR_PROPERTY));
        PgServerBinaries binaries = PgServerBinaries.embedded();
        try {
            Path dir = binaries.newDirectory("syncular-standby-");
            Path data = dir.resolve("data");
            int port = freePort();
            baseBackup(primaryPort, primaryData, data);
            Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwx------"));
            Files.writeString(data.resolve("standby.signal"), "");
            // Appended last, so these win over anything the copy brought along. A hot standby needs at least the
            // primary's max_connections (the embedded primary runs with 300).
            Files.writeString(
                    data.resolve("postgresql.auto.conf"),
                    "\nport = " + port
                            + "\nlisten_addresses = '127.0.0.1'"
                            + "\nunix_socket_directories = '" + dir + "'"
                            + "\nmax_connections = 300"
                            + "\nhot_standby = on"
                            + "\nprimary_conninfo = 'host=127.0.0.1 port=" + primaryPort
                            + " user=postgres application_name=" + SLOT + "'"
                            + "\nprimary_slot_name = '" + SLOT + "'\n",
                    StandardOpenOption.APPEND);
            Path log = dir.resolve("standby.log");
            binaries.run("pg_ctl", "-D", data.toString(), "-l", log.toString(), "-w", "-t", "120", "start");
            Runtime.getRuntime()
                    .addShutdownHook(new Thread(
                            () -> {
                                try {
                                    binaries.run("pg_ctl", "-D", data.toString(), "-m", "immediate", "-w", "stop");
                                    delete(dir);
                                } catch (IOException | RuntimeException e) {
                                    // the JVM is exiting
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                            },
                            "embedded-standby-shutdown"));
            awaitStreaming(port);
            return port;
        } catch (IOException e) {
            throw new UncheckedIOException("could not make the embedded PostgreSQL's standby", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while making the embedded PostgreSQL's standby", e);
        } catch (SQLException e) {
            throw new IllegalStateException("could not make the embedded PostgreSQL's standby: " + e.getMessage(), e);
        }
    }

    private static void baseBackup(int primaryPort, Path primaryData, Path copy) throws SQLException, IOException {
        try (Connection c = connect(primaryPort);
                Statement st = c.createStatement()) {
            try (ResultSet rs =
                    st.executeQuery("SELECT 1 FROM pg_replication_slots WHERE slot_name = '" + SLOT + "'")) {
                if (!rs.next()) {
                    st.execute("SELECT pg_create_physical_replication_slot('" + SLOT + "', true)");
                }
            }
            grantReplayControl(primaryPort);
            st.execute("SELECT pg_backup_start('" + SLOT + "', true)");
            copyData(primaryData, copy);
            try (ResultSet rs = st.executeQuery("SELECT labelfile, spcmapfile FROM pg_backup_stop(false)")) {
                rs.next();
                Files.writeString(copy.resolve("backup_label"), rs.getString(1));
                String map = rs.getString(2);
                if (map != null && !map.isEmpty()) {
                    Files.writeString(copy.resolve("tablespace_map"), map);
                }
            }
        }
    }

    /**
     * The replica tests pause and resume replay on the standby as the test role: EXECUTE on both functions, granted in
     * the test database and in {@code template1} (for databases created later), replicates with everything else.
     */
    private static void grantReplayControl(int primaryPort) throws SQLException {
        String role = '"' + TestPostgres.user().replace("\"", "\"\"") + '"';
        for (String database : List.of("template1", TestPostgres.DATABASE)) {
            try (Connection c = connect(primaryPort, database);
                    Statement st = c.createStatement()) {
                st.execute("GRANT EXECUTE ON FUNCTION pg_wal_replay_pause() TO " + role);
                st.execute("GRANT EXECUTE ON FUNCTION pg_wal_replay_resume() TO " + role);
            }
        }
    }

    /** Files of a running cluster: one may vanish while the copy runs (WAL replay from the label repairs the rest). */
    private static void copyData(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                Path target = to.resolve(from.relativize(dir).toString());
                Files.createDirectories(target);
                if (!dir.equals(from)
                        && EMPTIED_DIRECTORIES.contains(dir.getFileName().toString())) {
                    if (dir.getFileName().toString().equals("pg_wal")) {
                        Files.createDirectories(target.resolve("archive_status"));
                    }
                    return FileVisitResult.SKIP_SUBTREE;
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                String name = file.getFileName().toString();
                if (file.getParent().equals(from) && SKIPPED_FILES.contains(name) || name.startsWith("pgsql_tmp")) {
                    return FileVisitResult.CONTINUE;
                }
                try {
                    Files.copy(file, to.resolve(from.relativize(file).toString()), StandardCopyOption.COPY_ATTRIBUTES);
                } catch (NoSuchFileException gone) {
                    // removed by the running primary after the listing
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                if (e instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE;
                }
                throw e;
            }
        });
    }

    /** Polls (deadline {@link #WAIT}) until the standby accepts reads, is in recovery and its WAL receiver streams. */
    private static void awaitStreaming(int port) throws SQLException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        SQLException last = null;
        while (System.nanoTime() < deadline) {
            try (Connection c = connect(port);
                    Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery(), "
                            + "(SELECT status FROM pg_stat_wal_receiver) = 'streaming'")) {
                rs.next();
                if (rs.getBoolean(1) && rs.getBoolean(2)) {
                    return;
                }
            } catch (SQLException notYet) {
                last = notYet;
            }
            Thread.onSpinWait();
        }
        throw new IllegalStateException(
                "the embedded standby on port " + port + " did not stream within " + WAIT, last);
    }

    private static Connection connect(int port) throws SQLException {
        return connect(port, "postgres");
    }

    private static Connection connect(int port, String database) throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", "postgres");
        props.setProperty("connectTimeout", "5");
        return new Driver().connect("jdbc:postgresql://127.0.0.1:" + port + "/" + database, props);
    }

    private static String property(String name) {
        String v = System.getProperty(name);
        if (v == null) {
            throw new IllegalStateException("the embedded PostgreSQL is not running in this JVM (" + name + ")");
        }
        return v;
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
