package dev.syncular.server.testsupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.locks.LockSupport;
import org.postgresql.Driver;

/**
 * A streaming hot standby of a {@link ThrowawayPostgres}, made with {@code pg_basebackup -R -X stream} (no replication
 * slot: {@code wal_keep_size} keeps what a paused or disconnected standby still needs), in a directory of its own on a
 * free port: the read replica of the fault campaign's pods ({@code syncular.storage.replicas}) and the target of
 * {@link FaultSchedule.Kind#PAUSE_REPLAY}. It reconnects to its primary by itself after a restart of the primary
 * ({@code wal_retrieve_retry_interval}); {@link #awaitStreaming()} waits for that.
 */
final class ThrowawayStandby implements AutoCloseable {
    private static final Duration WAIT = Duration.ofSeconds(60);

    private final PgServerBinaries binaries;
    private final Path dir;
    private final Path data;
    private final int port;
    private final String database;

    private ThrowawayStandby(PgServerBinaries binaries, Path dir, int port, String database) {
        this.binaries = binaries;
        this.dir = dir;
        this.data = dir.resolve("data");
        this.port = port;
        this.database = database;
    }

    /** Base backup of the primary on {@code primaryPort}, started as its standby; returns once it streams. */
    static ThrowawayStandby start(PgServerBinaries binaries, int primaryPort, int port, String database)
            throws IOException, InterruptedException {
        if (!binaries.has("pg_basebackup")) {
            throw new IllegalStateException("the campaign's standby needs pg_basebackup, which the embedded PostgreSQL"
                    + " binaries lack: install PostgreSQL (.ci/run does) or set SYNCULAR_TEST_PG_BIN");
        }
        Path dir = binaries.newDirectory("syncular-throwaway-standby-");
        ThrowawayStandby s = new ThrowawayStandby(binaries, dir, port, database);
        binaries.run(
                "pg_basebackup",
                "-h",
                "127.0.0.1",
                "-p",
                Integer.toString(primaryPort),
                "-U",
                "postgres",
                "-D",
                s.data.toString(),
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
                "--no-sync");
        // appended after what the backup copied and -R wrote (the last setting wins): its own port and socket
        // directory, and a reconnect to the primary tried every second after a restart of the primary
        Files.writeString(
                s.data.resolve("postgresql.auto.conf"),
                "\nport = " + port + "\nunix_socket_directories = '" + dir + "'\nhot_standby = on"
                        + "\nwal_retrieve_retry_interval = '1s'\n",
                StandardOpenOption.APPEND);
        binaries.run(
                "pg_ctl",
                "-D",
                s.data.toString(),
                "-l",
                dir.resolve("standby.log").toString(),
                "-w",
                "-t",
                "60",
                "start");
        s.awaitStreaming();
        return s;
    }

    /** The reactive URL the pods are given as their replica (the datasource's user and password). */
    String url() {
        return "postgresql://127.0.0.1:" + port + "/" + database;
    }

    /** {@code pg_wal_replay_pause()}: the standby keeps receiving WAL but applies none of it. */
    void pauseReplay() throws SQLException {
        execute("SELECT pg_wal_replay_pause()");
    }

    /** {@code pg_wal_replay_resume()}. */
    void resumeReplay() throws SQLException {
        execute("SELECT pg_wal_replay_resume()");
    }

    /** Polls (deadline {@link #WAIT}) until the standby accepts reads, replays and its WAL receiver streams. */
    void awaitStreaming() {
        long deadline = System.nanoTime() + WAIT.toNanos();
        SQLException last = null;
        while (System.nanoTime() < deadline) {
            try (Connection c = connect();
                    Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery(),"
                            + " (SELECT status FROM pg_stat_wal_receiver) = 'streaming'")) {
                rs.next();
                if (rs.getBoolean(1) && rs.getBoolean(2)) {
                    return;
                }
            } catch (SQLException notYet) {
                last = notYet;
            }
            LockSupport.parkNanos(100_000_000L);
        }
        throw new IllegalStateException("the standby on port " + port + " did not stream within " + WAIT, last);
    }

    private void execute(String sql) throws SQLException {
        try (Connection c = connect();
                Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    private Connection connect() throws SQLException {
        Properties props = new Properties();
        props.setProperty("user", "postgres");
        props.setProperty("connectTimeout", "5");
        return new Driver().connect("jdbc:postgresql://127.0.0.1:" + port + "/postgres", props);
    }

    @Override
    public void close() throws IOException, InterruptedException {
        try {
            binaries.run("pg_ctl", "-D", data.toString(), "-m", "immediate", "-w", "stop");
        } catch (IllegalStateException alreadyStopped) {
            // not running
        }
        ThrowawayPostgres.delete(dir);
    }
}
