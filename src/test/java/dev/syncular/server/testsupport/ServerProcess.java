package dev.syncular.server.testsupport;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One packaged server (the artifact {@code ./mvnw package} built: {@code target/quarkus-app/quarkus-run.jar}, or
 * the native executable after {@code -Dnative}; the prod profile) started as its own operating-system process, for the integration tests ({@code *IT}, run by failsafe after {@code package})
 * that need what a {@code @QuarkusTest} cannot give: several pods on one PostgreSQL, a {@code kill -9}, a
 * restart, the production JVM flags and the resident memory they lead to.
 *
 * <p>The process gets the test database ({@link TestPostgres}), the storage schema the caller names (pods
 * of one test share it, as pods of one deployment share a database), dev header authentication (explicitly
 * enabled, as the prod profile requires) and a free port. Its output goes to
 * {@code target/it-logs/<name>.log}. Build one with {@link #builder(String, String)}, then {@link
 * Builder#start()}: it returns once {@code /q/health/ready} answers 200. {@link Builder#run} instead runs a
 * one-shot command of the same artifact ({@code boot.ServerMain}) to its exit.
 */
public final class ServerProcess implements AutoCloseable {

    /** The chart's JVM flags (helm/syncular-server values, bench/sync.sh). */
    public static final List<String> CHART_JVM_FLAGS = List.of(
            "-XX:+UseSerialGC",
            "-Xms192m",
            "-Xmx192m",
            "-XX:NewRatio=1",
            "-XX:MaxMetaspaceSize=128m",
            "-XX:ReservedCodeCacheSize=64m",
            "-XX:MaxDirectMemorySize=64m",
            "-Xss512k",
            "-XX:+ExitOnOutOfMemoryError");

    /** The schema IR the server runs when none is configured (src/main/resources). */
    public static final Path BUNDLED_SCHEMA = Path.of("target", "classes", "schema", "quickstart.syncular.ir.json");

    private static final Path APP = Path.of("target", "quarkus-app", "quarkus-run.jar");
    /** Written by the Quarkus build: {@code type} ({@code jar} or {@code native}) and {@code path} under target/. */
    private static final Path ARTIFACT = Path.of("target", "quarkus-artifact.properties");

    private static final Duration READY_DEADLINE = Duration.ofSeconds(90);

    /** The log files this JVM started a server on: the first launch of a name starts its log afresh. */
    private static final Set<Path> LOGS_OF_THIS_RUN = ConcurrentHashMap.newKeySet();

    private final String name;
    private final int port;
    private final int managementPort;
    private final Path log;
    private final Process process;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private ServerProcess(String name, int port, int managementPort, Path log, Process process) {
        this.name = name;
        this.port = port;
        this.managementPort = managementPort;
        this.log = log;
        this.process = process;
    }

    /**
     * A server named {@code name} (its log file) on storage schema {@code pgSchema}, serving the bundled
     * schema IR ({@link #BUNDLED_SCHEMA}) unless {@code SYNCULAR_SCHEMA_PATH} is set with {@link Builder#env}.
     */
    public static Builder builder(String name, String pgSchema) {
        return new Builder(name)
                .env("QUARKUS_DATASOURCE_REACTIVE_URL", TestPostgres.url())
                .env("SYNCULAR_PG_USER", TestPostgres.user())
                .env("SYNCULAR_PG_PASSWORD", TestPostgres.password())
                .env("SYNCULAR_DEV_AUTH_ENABLED", "true")
                .env("SYNCULAR_STORAGE_PG_SCHEMA", pgSchema)
                // Pods of one deployment share the signing key of their segment and blob URLs.
                .env("SYNCULAR_SIGNED_URLS_KEY", "it-shared-signing-key-0123456789abcdef");
    }

    /** A server named {@code name} with no environment but the caller's (a deployment's own configuration). */
    public static Builder bare(String name) {
        return new Builder(name);
    }

    public static final class Builder {
        private final String name;
        private final Map<String, String> env = new LinkedHashMap<>();
        private final List<String> jvmFlags = new ArrayList<>();
        private final List<String> args = new ArrayList<>();
        private int port;

        private Builder(String name) {
            this.name = name;
        }

        /** An environment variable of the server (configuration in its env form, e.g. {@code SYNCULAR_...}). */
        public Builder env(String key, String value) {
            env.put(key, value);
            return this;
        }

        public Builder env(Map<String, String> variables) {
            env.putAll(variables);
            return this;
        }

        /** Configuration properties, passed in their environment-variable form. */
        public Builder config(Map<String, String> properties) {
            properties.forEach((k, v) -> env.put(k.toUpperCase(Locale.ROOT).replaceAll("[^A-Z0-9]", "_"), v));
            return this;
        }

        /** JVM flags of a jar; a native executable takes none. */
        public Builder jvmFlags(List<String> flags) {
            jvmFlags.addAll(flags);
            return this;
        }

        /** Program arguments: a command of {@code boot.ServerMain}, see {@link #run}. */
        public Builder args(List<String> arguments) {
            args.addAll(arguments);
            return this;
        }

        /** Runs the process to its exit (a one-shot command), SIGKILL after {@code deadline}; its exit status. */
        public Result run(Duration deadline) throws IOException, InterruptedException {
            Path log = Path.of("target", "it-logs", name + ".log");
            Process p = launch(port > 0 ? port : freePort(), freePort(), log);
            if (!p.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                p.waitFor();
                throw new IllegalStateException(
                        name + " still running after " + deadline + "; log:\n" + Files.readString(log));
            }
            return new Result(p.exitValue(), Files.readString(log));
        }

        /** A fixed port (a restart on the same address); a free one when unset. */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        public ServerProcess start() throws IOException, InterruptedException {
            int p = port > 0 ? port : freePort();
            Path log = Path.of("target", "it-logs", name + ".log");
            int management = freePort();
            ServerProcess server = new ServerProcess(name, p, management, log, launch(p, management, log));
            server.awaitReady();
            return server;
        }

        private Process launch(int p, int management, Path log) throws IOException {
            Files.createDirectories(log.getParent());
            if (LOGS_OF_THIS_RUN.add(log.toAbsolutePath())) {
                // a restart appends to its log; an earlier build's run of the same name must not be read as this one's
                Files.deleteIfExists(log);
            }
            List<String> cmd = new ArrayList<>();
            Path executable = nativeExecutable();
            if (executable != null) {
                cmd.add(executable.toAbsolutePath().toString());
            } else {
                if (!Files.isRegularFile(APP)) {
                    throw new IllegalStateException(
                            APP + " is missing: integration tests run after `package` " + "(./mvnw verify)");
                }
                cmd.addAll(ChildJvm.command());
                cmd.addAll(jvmFlags);
                cmd.add("-jar");
                cmd.add(APP.toAbsolutePath().toString());
            }
            cmd.addAll(args);
            ProcessBuilder pb = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            pb.environment().putAll(env);
            pb.environment().put("QUARKUS_HTTP_PORT", Integer.toString(p));
            // the management interface (/q/metrics, /q/openapi): its own free port, so several servers coexist
            pb.environment().put("QUARKUS_MANAGEMENT_PORT", Integer.toString(management));
            return pb.start();
        }
    }

    /** A finished one-shot process: its exit status and its output. */
    public record Result(int exitCode, String log) {}

    /** The native executable when the build produced one ({@code -Dnative}), else {@code null} (the jar). */
    static Path nativeExecutable() throws IOException {
        if (!Files.isRegularFile(ARTIFACT)) {
            return null;
        }
        Properties artifact = new Properties();
        try (var in = Files.newInputStream(ARTIFACT)) {
            artifact.load(in);
        }
        return "native".equals(artifact.getProperty("type"))
                ? ARTIFACT.getParent().resolve(artifact.getProperty("path"))
                : null;
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    public int port() {
        return port;
    }

    /** The management interface's port ({@code /q/metrics}, {@code /q/openapi}). */
    public int managementPort() {
        return managementPort;
    }

    public long pid() {
        return process.pid();
    }

    public boolean alive() {
        return process.isAlive();
    }

    /** Resident set size in bytes ({@code VmRSS}); -1 when the process is gone. */
    public long rssBytes() {
        return procStatusBytes("VmRSS:");
    }

    /** Peak resident set size in bytes ({@code VmHWM}); -1 when the process is gone. */
    public long peakRssBytes() {
        return procStatusBytes("VmHWM:");
    }

    /** The server's log so far (for assertions and failure messages). */
    public String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "";
        }
    }

    /** GET {@code path}'s status code, or -1 when nothing answers. */
    public int status(String path) {
        try {
            HttpRequest req = HttpRequest.newBuilder(URI.create(baseUrl() + path))
                    .timeout(Duration.ofSeconds(5))
                    .GET()
                    .build();
            return http.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** SIGTERM, then waits for the exit (the graceful shutdown); SIGKILL after {@code deadline}. */
    public int stop(Duration deadline) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            process.waitFor();
        }
        return process.exitValue();
    }

    /** SIGKILL ({@code kill -9}): no shutdown hook runs. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            stop(Duration.ofSeconds(20));
        }
    }

    /** Closes each of {@code servers} that was started (a test's {@code @AfterAll}). */
    public static void closeAll(ServerProcess... servers) throws InterruptedException {
        for (ServerProcess s : servers) {
            if (s != null) {
                s.close();
            }
        }
    }

    private void awaitReady() throws InterruptedException {
        long deadline = System.nanoTime() + READY_DEADLINE.toNanos();
        while (status("/q/health/ready") != 200) {
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        name + " exited during start-up (" + process.exitValue() + "); log:\n" + tail());
            }
            if (System.nanoTime() > deadline) {
                process.destroyForcibly();
                throw new IllegalStateException(name + " not ready within " + READY_DEADLINE + "; log:\n" + tail());
            }
            // A poll of the readiness endpoint: the process answers when it is up.
            process.waitFor(100, TimeUnit.MILLISECONDS);
        }
    }

    private String tail() {
        String all = log();
        return all.length() > 6000 ? all.substring(all.length() - 6000) : all;
    }

    private long procStatusBytes(String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + process.pid() + "/status"))) {
                if (line.startsWith(field)) {
                    return Long.parseLong(line.substring(field.length()).trim().split("\\s+")[0]) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
