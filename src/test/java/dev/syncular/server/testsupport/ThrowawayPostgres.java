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
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL cluster of the test's own — {@code initdb} and {@code pg_ctl} in a temporary directory, on a
 * free port — for proofs that restart the database under load, which the shared test database must never be
 * put through. Runs the binaries of {@code SYNCULAR_TEST_PG_BIN}, else {@code pg_config --bindir}, else the
 * newest {@code /usr/lib/postgresql/<version>/bin}; as the {@code postgres} user when the tests run as root
 * ({@code initdb} refuses root). {@link #url()} is a database owned by {@link TestPostgres#user()} with
 * {@link TestPostgres#password()}.
 */
public final class ThrowawayPostgres implements AutoCloseable {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String DATABASE = "syncular_throwaway";

    private final Path bin;
    private final Path dir;
    private final Path data;
    private final int port;
    private final boolean asPostgresUser;

    private ThrowawayPostgres(Path bin, Path dir, int port, boolean asPostgresUser) {
        this.bin = bin;
        this.dir = dir;
        this.data = dir.resolve("data");
        this.port = port;
        this.asPostgresUser = asPostgresUser;
    }

    /** initdb, start, and create the test role and database. */
    public static ThrowawayPostgres start() throws IOException, InterruptedException {
        boolean root = "root".equals(System.getProperty("user.name"));
        Path dir = Files.createTempDirectory("syncular-throwaway-pg-");
        if (root) {
            UserPrincipal postgres =
                    dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres");
            Files.setOwner(dir, postgres);
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        }
        ThrowawayPostgres pg = new ThrowawayPostgres(binDir(), dir, freePort(), root);
        pg.run(List.of(
                pg.bin.resolve("initdb").toString(),
                "-D",
                pg.data.toString(),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync"));
        Files.writeString(
                pg.data.resolve("postgresql.auto.conf"),
                "listen_addresses = '127.0.0.1'\nport = " + pg.port + "\nunix_socket_directories = '" + dir
                        + "'\nfsync = off\nmax_connections = 200\n");
        pg.pgCtl("start");
        pg.createRoleAndDatabase();
        return pg;
    }

    public int port() {
        return port;
    }

    /** The Vert.x URL of the test database in this cluster. */
    public String url() {
        return "postgresql://127.0.0.1:" + port + "/" + DATABASE;
    }

    /** Starts the cluster again after {@link #stop()}, on the same port. */
    public void startAgain() throws IOException, InterruptedException {
        pgCtl("start");
    }

    /** A clean stop ({@code pg_ctl stop -m fast}: every session is terminated). */
    public void stop() throws IOException, InterruptedException {
        run(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-m", "fast", "-w", "stop"));
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
        try {
            run(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString(), "-m", "immediate", "-w", "stop"));
        } catch (IllegalStateException alreadyStopped) {
            // stopped by the test
        }
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private void pgCtl(String action) throws IOException, InterruptedException {
        run(List.of(
                bin.resolve("pg_ctl").toString(),
                "-D",
                data.toString(),
                "-l",
                dir.resolve("server.log").toString(),
                "-w",
                "-t",
                "60",
                action));
    }

    private void createRoleAndDatabase() throws IOException, InterruptedException {
        String psql = bin.resolve("psql").toString();
        String role = TestPostgres.user().replace("\"", "\"\"");
        run(List.of(
                psql,
                "-h",
                "127.0.0.1",
                "-p",
                Integer.toString(port),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-X",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                "CREATE ROLE \"" + role + "\" LOGIN PASSWORD '"
                        + TestPostgres.password().replace("'", "''") + "'",
                "-c",
                "CREATE DATABASE " + DATABASE + " OWNER \"" + role + "\""));
    }

    private void run(List<String> command) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        if (asPostgresUser) {
            cmd.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        cmd.addAll(command);
        Path out = Files.createTempFile("syncular-pg-cmd-", ".log");
        try {
            Process p = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(out.toFile())
                    .start();
            if (!p.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("timed out: " + cmd);
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(cmd + " failed (" + p.exitValue() + "): " + Files.readString(out));
            }
        } finally {
            Files.deleteIfExists(out);
        }
    }

    private static Path binDir() throws IOException, InterruptedException {
        String configured = System.getenv("SYNCULAR_TEST_PG_BIN");
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured.trim());
        }
        try {
            Process p = new ProcessBuilder("pg_config", "--bindir")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes()).trim();
            if (p.waitFor() == 0 && Files.isExecutable(Path.of(out, "initdb"))) {
                return Path.of(out);
            }
        } catch (IOException noPgConfig) {
            // fall through to the Debian layout
        }
        Path debian = Path.of("/usr/lib/postgresql");
        if (Files.isDirectory(debian)) {
            try (Stream<Path> versions = Files.list(debian)) {
                Path newest = versions.filter(
                                v -> Files.isExecutable(v.resolve("bin").resolve("initdb")))
                        .max(Comparator.comparingInt(
                                v -> Integer.parseInt(v.getFileName().toString().replaceAll("\\D", "0"))))
                        .orElse(null);
                if (newest != null) {
                    return newest.resolve("bin");
                }
            }
        }
        throw new IllegalStateException("no PostgreSQL server binaries (initdb, pg_ctl) found: install PostgreSQL "
                + "(.ci/run does) or set SYNCULAR_TEST_PG_BIN");
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
