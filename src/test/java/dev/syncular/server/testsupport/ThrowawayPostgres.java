package dev.syncular.server.testsupport;

import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.pgclient.PgBuilder;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.PoolOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Stream;
import org.postgresql.Driver;

/**
 * A PostgreSQL cluster of the test's own — {@code initdb} and {@code pg_ctl} in a temporary directory, on a
 * free port — for proofs that restart the database under load, which the shared test database must never be
 * put through. Runs the binaries {@link PgServerBinaries#find()} finds: a system installation's, else the embedded
 * PostgreSQL's own (a machine with nothing but Java). {@link #url()} is a database owned by {@link TestPostgres#user()} with
 * {@link TestPostgres#password()}. As a fault campaign's database ({@link CampaignDatabase}) it is stopped and started
 * again: {@link FaultSchedule.Kind#RESTART_PG}, {@link FaultSchedule.Kind#START_POD_WHILE_PG_DOWN}.
 */
public final class ThrowawayPostgres implements CampaignDatabase {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String DATABASE = "syncular_throwaway";

    private final PgServerBinaries binaries;
    private final Path dir;
    private final Path data;
    private final int port;
    /** The streaming standby {@link #withStandby()} made, or null: none. */
    private volatile ThrowawayStandby standby;

    private ThrowawayPostgres(PgServerBinaries binaries, Path dir, int port) {
        this.binaries = binaries;
        this.dir = dir;
        this.data = dir.resolve("data");
        this.port = port;
    }

    /** initdb, start, and create the test role and database. */
    public static ThrowawayPostgres start() throws IOException, InterruptedException {
        PgServerBinaries binaries = PgServerBinaries.find();
        Path dir = binaries.newDirectory("syncular-throwaway-pg-");
        ThrowawayPostgres pg = new ThrowawayPostgres(binaries, dir, freePort());
        binaries.run("initdb", "-D", pg.data.toString(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync");
        Files.writeString(
                pg.data.resolve("postgresql.auto.conf"),
                "listen_addresses = '127.0.0.1'\nport = " + pg.port + "\nunix_socket_directories = '" + dir
                        + "'\nfsync = off\nmax_connections = 200\nwal_keep_size = '256MB'\n");
        pg.pgCtl("start");
        pg.createRoleAndDatabase();
        return pg;
    }

    /**
     * Makes a streaming hot standby of this cluster ({@link ThrowawayStandby}): the pods' read replica
     * ({@link #replicas()}), {@link FaultSchedule.Kind#PAUSE_REPLAY} among the {@link #faults()}.
     */
    public ThrowawayPostgres withStandby() throws IOException, InterruptedException {
        standby = ThrowawayStandby.start(binaries, port, freePort(), DATABASE);
        return this;
    }

    @Override
    public List<String> replicas() {
        ThrowawayStandby s = standby;
        return s == null ? List.of() : List.of(s.url());
    }

    @Override
    public void pauseReplay() throws SQLException {
        requireStandby().pauseReplay();
    }

    @Override
    public void resumeReplay() throws SQLException {
        requireStandby().resumeReplay();
    }

    private ThrowawayStandby requireStandby() {
        ThrowawayStandby s = standby;
        if (s == null) {
            throw new IllegalStateException("no standby: ThrowawayPostgres.withStandby()");
        }
        return s;
    }

    public int port() {
        return port;
    }

    /** The Vert.x URL of the test database in this cluster. */
    @Override
    public String url() {
        return "postgresql://127.0.0.1:" + port + "/" + DATABASE;
    }

    @Override
    public String user() {
        return TestPostgres.user();
    }

    @Override
    public String password() {
        return TestPostgres.password();
    }

    @Override
    public Connection connect() throws SQLException {
        return DriverManager.getConnection("jdbc:" + url(), user(), password());
    }

    @Override
    public Set<FaultSchedule.Kind> faults() {
        Set<FaultSchedule.Kind> kinds =
                EnumSet.of(FaultSchedule.Kind.RESTART_PG, FaultSchedule.Kind.START_POD_WHILE_PG_DOWN);
        if (standby != null) {
            kinds.add(FaultSchedule.Kind.PAUSE_REPLAY);
        }
        return kinds;
    }

    /**
     * Starts the cluster again after {@link #stop()}, on the same port; with a standby, returns once the standby
     * streams from it again (it reconnects by itself).
     */
    @Override
    public void startAgain() throws IOException, InterruptedException {
        pgCtl("start");
        ThrowawayStandby s = standby;
        if (s != null) {
            s.awaitStreaming();
        }
    }

    /** A clean stop ({@code pg_ctl stop -m fast}: every session is terminated). */
    @Override
    public void stop() throws IOException, InterruptedException {
        binaries.run("pg_ctl", "-D", data.toString(), "-m", "fast", "-w", "stop");
    }

    /** A pool on the test database, as the test role. */
    public Pool pool(Vertx vertx, int maxSize) {
        PgConnectOptions options =
                PgConnectOptions.fromUri(url()).setUser(TestPostgres.user()).setPassword(TestPostgres.password());
        return PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(maxSize))
                .connectingTo(options)
                .using(vertx)
                .build();
    }

    @Override
    public void close() throws IOException, InterruptedException {
        ThrowawayStandby s = standby;
        if (s != null) {
            s.close();
        }
        try {
            binaries.run("pg_ctl", "-D", data.toString(), "-m", "immediate", "-w", "stop");
        } catch (IllegalStateException alreadyStopped) {
            // stopped by the test
        }
        delete(dir);
    }

    static void delete(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private void pgCtl(String action) throws IOException, InterruptedException {
        binaries.run(
                "pg_ctl", "-D", data.toString(), "-l", dir.resolve("server.log").toString(), "-w", "-t", "60", action);
    }

    /** Over JDBC as the superuser (trust on the loopback): the embedded binaries have no {@code psql}. */
    private void createRoleAndDatabase() {
        String role = TestPostgres.user().replace("\"", "\"\"");
        Properties props = new Properties();
        props.setProperty("user", "postgres");
        try (Connection c = new Driver().connect("jdbc:postgresql://127.0.0.1:" + port + "/postgres", props);
                Statement st = c.createStatement()) {
            st.execute("CREATE ROLE \"" + role + "\" LOGIN PASSWORD '"
                    + TestPostgres.password().replace("'", "''") + "'");
            st.execute("CREATE DATABASE " + DATABASE + " OWNER \"" + role + "\"");
        } catch (SQLException e) {
            throw new IllegalStateException("could not create the throwaway cluster's role and database", e);
        }
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
