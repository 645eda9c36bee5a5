package dev.syncular.server.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.docs.DocBlocks.Block;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.TestPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Every walkthrough of the documentation, run exactly as written ({@link DocBlocks}): its blocks in one shell
 * session from the repository's root, its servers as processes of their own, against the packaged server and CLI
 * this build made. What a walkthrough assumes of the reader comes from its {@link Fixture}: a PostgreSQL in
 * {@code SYNCULAR_PG_URL} / {@code SYNCULAR_PG_USER} / {@code SYNCULAR_PG_PASSWORD} (the test database, a fresh
 * storage schema per walkthrough), an admin token, a standby, a dev server already running. A transcript's commands
 * must print what it shows, an output block is compared as JSON with what the block before it printed, and no
 * walkthrough may leave a file in the repository outside {@code target/}. Each executed block is printed.
 *
 * <p>The documented commands use the documented ports: 8080 and 8082 (API), 9080 and 9082 (management; 8081 is the test port of Quarkus tests, which a @QuarkusIntegrationTest may still hold), 4566 (the
 * local S3 server); they must be free.
 */
@StartsProcesses
class DocumentedCommandsIT {
    private static final Path ROOT = Path.of("").toAbsolutePath();
    private static final Duration BLOCK_DEADLINE = Duration.ofMinutes(5);
    private static final Duration READY_DEADLINE = Duration.ofSeconds(120);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<Integer> PORTS = List.of(8080, 8082, 9080, 9082, 4566);
    static final String ADMIN_TOKEN = "doc-test-admin-token-" + UUID.randomUUID();

    /**
     * What a walkthrough assumes of its reader besides the packaged build and a PostgreSQL.
     *
     * @param devServer a server on the {@code dev} profile already running (README: "Against ./mvnw quarkus:dev")
     * @param standby   a streaming standby of the database, its URL in {@code REPLICA_URL}
     * @param env       more of the reader's environment
     */
    record Fixture(boolean devServer, boolean standby, Map<String, String> env) {}

    static final Map<String, Fixture> FIXTURES = Map.of(
            "cli", new Fixture(true, false, Map.of("SYNCULAR_ADMIN_TOKEN", ADMIN_TOKEN)),
            "operations", new Fixture(false, false, Map.of()),
            "local-s3", new Fixture(false, false, Map.of()),
            "two-pods", new Fixture(false, false, Map.of()),
            "backfill", new Fixture(false, false, Map.of("SYNCULAR_ADMIN_TOKEN", ADMIN_TOKEN)),
            "jwt", new Fixture(false, false, Map.of()),
            "replicas", new Fixture(false, true, Map.of()),
            "conformance", new Fixture(false, false, Map.of()));

    @TestFactory
    Stream<DynamicTest> everyWalkthroughRunsAsWritten() {
        DocBlocks docs = DocBlocks.read(ROOT);
        // -Ddoc.walkthroughs=cli,jwt runs only those (a doc being edited); unset: all of them
        List<String> only = List.of(System.getProperty("doc.walkthroughs", "").split(","));
        return docs.walkthroughs().stream()
                .filter(name -> only.equals(List.of("")) || only.contains(name))
                .map(name -> DynamicTest.dynamicTest(name, () -> walk(name, docs.walkthrough(name))));
    }

    private static void walk(String name, List<Block> blocks) throws Exception {
        Fixture fixture = FIXTURES.get(name);
        for (int port : PORTS) {
            assertFree(port);
        }
        Map<String, String> env = new HashMap<>(fixture.env());
        env.put("SYNCULAR_PG_URL", TestPostgres.url());
        env.put("SYNCULAR_PG_USER", TestPostgres.user());
        env.put("SYNCULAR_PG_PASSWORD", TestPostgres.password());
        env.put(
                "SYNCULAR_STORAGE_PG_SCHEMA",
                "doc_" + name.replace('-', '_') + "_"
                        + UUID.randomUUID().toString().replace("-", "").substring(0, 8));
        if (fixture.standby()) {
            env.put("REPLICA_URL", TestPostgres.replicaUrl());
        }
        Path logs = Files.createDirectories(ROOT.resolve("target/doc-tests/" + name));
        // what an earlier run of this walkthrough left under target/ (state files of the CLI, keys) goes first: a
        // reader's second run starts over the same way, against a database that forgot the first
        Path created = logs.resolve("created-in-target.txt");
        if (Files.exists(created)) {
            for (String entry : Files.readAllLines(created)) {
                deleteTree(ROOT.resolve("target").resolve(entry));
            }
        }
        Set<String> targetBefore = targetEntries();
        Set<String> before = repositoryFiles();
        List<Process> background = new ArrayList<>();
        try (ShellSession shell = new ShellSession(ROOT, env, logs.resolve("session"))) {
            if (fixture.devServer()) {
                background.add(start(
                        "java -Dquarkus.profile=dev -jar target/quarkus-app/quarkus-run.jar",
                        "url http://localhost:8080/q/health/ready",
                        env,
                        logs.resolve("dev-server.log")));
            }
            String printed = "";
            for (Block b : blocks) {
                long t0 = System.nanoTime();
                switch (b.kind()) {
                    case BACKGROUND ->
                        background.add(start(b.text(), b.until(), env, logs.resolve("line-" + b.line() + ".log")));
                    case RUN -> printed = b.transcript() ? transcript(shell, b) : run(shell, b);
                    case OUTPUT ->
                        assertEquals(
                                firstJson(b.text(), b), firstJson(printed, b), b.where() + ": the output it documents");
                    default -> throw new AssertionError(b.where() + ": " + b.kind() + " in a walkthrough");
                }
                System.out.printf(
                        "doc-test %s %s %s ok (%d ms)%n",
                        name, b.where(), b.kind().name().toLowerCase(), (System.nanoTime() - t0) / 1_000_000);
            }
        } finally {
            for (int i = background.size() - 1; i >= 0; i--) {
                stop(background.get(i));
            }
            Set<String> made = targetEntries();
            made.removeAll(targetBefore);
            Files.write(created, made);
        }
        Set<String> left = repositoryFiles();
        left.removeAll(before);
        assertEquals(Set.of(), left, name + " left files in the repository (outside target/)");
    }

    private static String run(ShellSession shell, Block b) throws Exception {
        ShellSession.Result r = shell.run(b.text(), BLOCK_DEADLINE);
        assertFalse(r.failed() || r.status() != 0, b.where() + " failed (exit " + r.status() + "):\n" + r.output());
        return r.output();
    }

    /** Each {@code $ } command of the block, then what it printed against what the block shows after it. */
    private static String transcript(ShellSession shell, Block b) throws Exception {
        String last = "";
        for (String[] step : steps(b.text())) {
            ShellSession.Result r = shell.run(step[0], BLOCK_DEADLINE);
            String actual = r.printed();
            String where = b.where() + " `" + step[0].strip() + "`";
            if (step[1].strip().startsWith("{") || step[1].strip().startsWith("[")) {
                JsonTail expected = jsonTail(step[1], where);
                JsonTail got = jsonTail(actual, where);
                assertEquals(expected.json(), got.json(), where + " printed:\n" + actual);
                assertEquals(expected.rest(), got.rest(), where + " printed:\n" + actual);
            } else {
                assertEquals(nonBlankLines(step[1]), nonBlankLines(actual), where);
            }
            last = actual;
        }
        return last;
    }

    /** The transcript's commands (a {@code $ } line and its {@code \} continuations) and the output after each. */
    static List<String[]> steps(String text) {
        List<String[]> steps = new ArrayList<>();
        StringBuilder command = null;
        StringBuilder output = new StringBuilder();
        boolean continuing = false;
        for (String line : text.split("\n")) {
            if (line.startsWith("$ ")) {
                if (command != null) {
                    steps.add(new String[] {command.toString(), output.toString()});
                }
                command = new StringBuilder(line.substring(2)).append('\n');
                output.setLength(0);
                continuing = line.endsWith("\\");
            } else if (continuing) {
                command.append(line).append('\n');
                continuing = line.endsWith("\\");
            } else if (command != null) {
                output.append(line).append('\n');
            }
        }
        if (command != null) {
            steps.add(new String[] {command.toString(), output.toString()});
        }
        return steps;
    }

    private record JsonTail(JsonNode json, List<String> rest) {}

    /** The JSON document {@code text} starts with, and its non-blank lines after it. */
    private static JsonTail jsonTail(String text, String where) {
        try (JsonParser p = JSON.createParser(text)) {
            JsonNode json = JSON.readTree(p);
            int end = (int) p.currentLocation().getCharOffset();
            return new JsonTail(json, nonBlankLines(text.substring(Math.min(end, text.length()))));
        } catch (IOException e) {
            throw new AssertionError(where + ": not JSON:\n" + text, e);
        }
    }

    private static JsonNode firstJson(String text, Block b) {
        return jsonTail(text.strip(), b.where()).json();
    }

    private static List<String> nonBlankLines(String text) {
        return text.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
    }

    /** {@code script} in a {@code bash} of its own (another terminal), waited for until it is ready. */
    private static Process start(String script, String until, Map<String, String> env, Path log) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", "--noprofile", "--norc", "-c", script)
                .directory(ROOT.toFile())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.environment().putAll(env);
        Process p = pb.start();
        long deadline = System.nanoTime() + READY_DEADLINE.toNanos();
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        while (true) {
            if (!p.isAlive()) {
                throw new AssertionError("`" + script.strip() + "` exited (" + p.exitValue()
                        + ") before it was ready:\n" + Files.readString(log));
            }
            if (ready(until, log, http)) {
                return p;
            }
            if (System.nanoTime() > deadline) {
                stop(p);
                throw new AssertionError("`" + script.strip() + "` not ready (" + until + ") within " + READY_DEADLINE
                        + ":\n" + Files.readString(log));
            }
        }
    }

    private static boolean ready(String until, Path log, HttpClient http) throws Exception {
        if (until.startsWith("output ")) {
            return Files.readString(log).contains(until.substring(7));
        }
        try {
            HttpResponse<Void> r = http.send(
                    HttpRequest.newBuilder(URI.create(until.substring(4)))
                            .timeout(Duration.ofSeconds(5))
                            .build(),
                    HttpResponse.BodyHandlers.discarding());
            return r.statusCode() / 100 == 2;
        } catch (IOException notYet) {
            return false;
        }
    }

    /** SIGTERM to the process and everything it started (a server's clean stop), SIGKILL after 30 s. */
    private static void stop(Process p) throws InterruptedException {
        List<ProcessHandle> tree = new ArrayList<>(p.descendants().toList());
        tree.add(p.toHandle());
        tree.forEach(ProcessHandle::destroy);
        for (ProcessHandle h : tree) {
            try {
                h.onExit().get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                h.destroyForcibly();
            }
        }
    }

    private static void assertFree(int port) {
        try (ServerSocket s = new ServerSocket(port)) {
            s.setReuseAddress(true);
        } catch (IOException e) {
            throw new AssertionError(
                    "port " + port + " is in use: the documented commands use it (stop what listens there)");
        }
    }

    /** The names directly under {@code target/}. */
    private static Set<String> targetEntries() throws IOException {
        try (Stream<Path> entries = Files.list(ROOT.resolve("target"))) {
            return entries.map(p -> p.getFileName().toString())
                    .collect(java.util.stream.Collectors.toCollection(TreeSet::new));
        }
    }

    private static void deleteTree(Path path) throws IOException {
        if (!Files.exists(path)) {
            return;
        }
        try (Stream<Path> all = Files.walk(path)) {
            all.sorted(java.util.Comparator.reverseOrder())
                    .forEach(p -> p.toFile().delete());
        }
    }

    /** The files of the repository outside {@code .git} and {@code target}, relative to its root. */
    private static Set<String> repositoryFiles() {
        Set<String> files = new TreeSet<>();
        try {
            Files.walkFileTree(ROOT, new java.nio.file.SimpleFileVisitor<>() {
                @Override
                public java.nio.file.FileVisitResult preVisitDirectory(
                        Path dir, java.nio.file.attribute.BasicFileAttributes attrs) {
                    String name =
                            dir.getFileName() == null ? "" : dir.getFileName().toString();
                    return dir.getParent() != null
                                    && dir.getParent().equals(ROOT)
                                    && (name.equals(".git") || name.equals("target"))
                            ? java.nio.file.FileVisitResult.SKIP_SUBTREE
                            : java.nio.file.FileVisitResult.CONTINUE;
                }

                @Override
                public java.nio.file.FileVisitResult visitFile(
                        Path file, java.nio.file.attribute.BasicFileAttributes attrs) {
                    files.add(ROOT.relativize(file).toString());
                    return java.nio.file.FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return files;
    }
}
