package dev.syncular.server.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.operations.QueryIrLoader;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.SyncTestClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;

/**
 * The watch storm of {@link NoisyBenchmark} (issue 45): the hostile tenant holds as many REMOTE.md §6 watches as
 * the pods let it, on the watch socket {@code <mount>/operations/realtime}, over a list of its table that it keeps
 * committing to at full speed, so every commit reruns every watch.
 *
 * <p>The pods register one query, {@value #QUERY} ({@code select id, title from todos where list_id = ? order by
 * id}, scoped by {@code list_id}), from a queries IR document this class writes ({@link #writeQueries}). Per pod,
 * {@value #SOCKETS_PER_POD} sockets each ask for {@value #WATCHES_PER_SOCKET} watches of the list {@value #LIST}
 * (a client id of its own each, so no two share a run): one more than the default
 * {@code max-per-connection} (100) per socket and 1,100 together, 100 more than the default
 * {@code max-per-partition} (1,000). {@value #COMMITTERS} committer threads (one actor each, the pods in turn)
 * upsert one of {@value #ROWS_PER_COMMITTER} rows of the list per commit, 100-character titles, never backing off:
 * each watch's snapshot holds up to {@value #ROWS_PER_COMMITTER}×{@value #COMMITTERS} rows. A closed socket is
 * reopened and its watches asked for again.
 *
 * <p>Counted as the hostile tenant's answered rounds: the reruns received (snapshots after a watch's first); as
 * refused: the watches answered {@code watch_error} {@code sync.rate_limited}, the sockets closed by the pod (any
 * close code) or refused at the upgrade, and the committers' refused rounds. {@link #detail} adds the watches
 * accepted, other watch errors, close codes, commits, and the pods' {@code syncular_operations_watches} and
 * {@code syncular_operations_watch_backlog}, runs answered and their mean time (from a watch's request to its answer,
 * {@code syncular_operations_seconds{binding="watch"}}) sampled near the end of the phase.
 *
 * <p>Beside the storm, and alone in the baseline, a probe ({@link #probe}) times a quiet tenant's watch: one watch of
 * a partition of its own on pod A, a one-row commit from pod B every 200 ms, commit-to-snapshot p50 and max over the
 * whole phase (the storm's first seconds included) — the
 * claim of docs/OPERATIONS.md that another tenant's run starts after at most one run of each other partition.
 */
final class NoisyWatchStorm {
    static final String QUERY = "todosInList";
    static final String LIST = "storm";
    static final int SOCKETS_PER_POD = 11;
    static final int WATCHES_PER_SOCKET = 101;
    static final int COMMITTERS = 2;
    static final int ROWS_PER_COMMITTER = 250;
    private static final String SQL = "select id, title from todos where list_id = ? order by id";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final Pattern KIND = Pattern.compile("\\[\"kind\",\\{\"t\":\"string\",\"v\":\"([a-z_]+)\"");
    private static final Pattern WATCH_ID = Pattern.compile("\\[\"watchId\",\\{\"t\":\"string\",\"v\":\"([^\"]*)\"");
    private static final Pattern CODE = Pattern.compile("\\[\"code\",\\{\"t\":\"string\",\"v\":\"([^\"]*)\"");

    private final String operationId;
    private final List<ServerProcess> pods;
    private final CompiledSchema schema;
    private final String hostile;
    private final LongAdder accepted = new LongAdder();
    private final LongAdder rateLimited = new LongAdder();
    private final LongAdder commitsOk = new LongAdder();
    private final LongAdder commitsRefused = new LongAdder();
    private final Map<String, LongAdder> otherErrors = new ConcurrentHashMap<>();
    private final Map<Integer, LongAdder> closes = new ConcurrentHashMap<>();
    private volatile String gauges = "not sampled";
    private final boolean storm;
    /** The probe's commit-to-snapshot times, microseconds (guarded by itself). */
    private final Histogram probe = new Histogram(120_000_000L, 3);

    private final LongAdder probeLost = new LongAdder();

    /**
     * The storm ({@code storm}) or only its probe (the baseline): a quiet partition's watch on pod A, committed to
     * from pod B.
     */
    NoisyWatchStorm(
            String operationId, List<ServerProcess> pods, CompiledSchema schema, String hostile, boolean storm) {
        this.operationId = operationId;
        this.pods = pods;
        this.schema = schema;
        this.hostile = hostile;
        this.storm = storm;
    }

    /**
     * The queries IR document ({@code queryIrVersion} 4) registering {@value #QUERY} over the bundled schema's
     * {@code todos}, written to a file in {@code dir} for {@code SYNCULAR_OPERATIONS_QUERIES_PATH}; the operation id
     * is {@code <QueryIrLoader.documentId of its bytes>/todosInList}.
     */
    static Path writeQueries(Path dir) throws IOException {
        ObjectNode query = F.objectNode()
                .put("name", QUERY)
                .put("file", "noisy.sql")
                .put("sql", SQL)
                .put("positionalSql", SQL);
        int at = SQL.indexOf(" todos ") + 1;
        query.putArray("relations")
                .addObject()
                .put("table", "todos")
                .put("start", at)
                .put("end", at + "todos".length());
        query.putArray("params")
                .addObject()
                .put("name", "listId")
                .put("langName", "listId")
                .put("type", "string");
        ArrayNode columns = query.putArray("columns");
        for (String c : List.of("id", "title")) {
            columns.addObject()
                    .put("name", c)
                    .put("langName", c)
                    .put("type", "string")
                    .put("nullable", false);
        }
        query.putArray("tables").add("todos");
        ObjectNode reactive = query.putObject("reactive");
        reactive.putArray("dependencies").addObject().put("table", "todos").putArray("scopes");
        ObjectNode coverage =
                reactive.putArray("coverage").addObject().put("table", "todos").put("variable", "list_id");
        coverage.putArray("units").add("listId");
        coverage.putArray("fixedScopes");
        ObjectNode doc = F.objectNode().put("queryIrVersion", 4);
        doc.putArray("queries").add(query);
        Files.createDirectories(dir);
        Path file = Files.createTempFile(dir, "bench-noisy-queries-", ".json");
        Files.write(file, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(doc));
        file.toFile().deleteOnExit();
        return file;
    }

    /** The operation id of {@value #QUERY} in the document {@code file}. */
    static String operationId(Path file) throws IOException {
        return QueryIrLoader.documentId(Files.readAllBytes(file)) + "/" + QUERY;
    }

    /** Attacker threads of the storm: the committers, then one per socket. */
    int threads() {
        return 1 + (storm ? COMMITTERS + SOCKETS_PER_POD * 2 : 0);
    }

    /** Attacker thread {@code thread} until {@code stop}. */
    void attack(int thread, AtomicBoolean stop, LongAdder answered, LongAdder refused) {
        if (thread == 0) {
            probe(stop);
        } else if (--thread < COMMITTERS) {
            commit(thread, stop, refused);
        } else {
            watch(thread - COMMITTERS, stop, answered, refused);
        }
    }

    private void commit(int thread, AtomicBoolean stop, LongAdder refused) {
        SyncTestClient c = new SyncTestClient(
                schema,
                new BenchHttpTransport(pods.get(thread % 2).baseUrl(), hostile),
                "storm-writer-" + thread,
                "storm-writer-" + thread + "-" + UUID.randomUUID());
        String title = "w".repeat(100);
        try {
            c.syncUntilIdle(); // the log epoch
        } catch (RuntimeException e) {
            refused.increment();
        }
        for (long n = 0; !stop.get(); n++) {
            c.outbox.clear();
            c.upsert("todos", todo("storm-" + thread + "-" + (n % ROWS_PER_COMMITTER), LIST, title, n), null);
            try {
                c.sync();
                commitsOk.increment();
            } catch (HttpFailure e) {
                commitsRefused.increment();
                refused.increment();
            } catch (RuntimeException e) { // a transport failure: refused as in the other attacks
                commitsRefused.increment();
                refused.increment();
            }
        }
    }

    private void watch(int socket, AtomicBoolean stop, LongAdder answered, LongAdder refused) {
        ServerProcess pod = pods.get(socket % 2);
        URI uri = URI.create(pod.baseUrl().replaceFirst("^http", "ws") + "/operations/realtime");
        while (!stop.get()) {
            RealtimeSocket s;
            try {
                s = RealtimeSocket.connect(uri, Map.of("x-actor-id", "hostile", "x-syncular-partition", hostile));
            } catch (RuntimeException e) {
                closes.computeIfAbsent(0, k -> new LongAdder()).increment(); // refused at the upgrade
                refused.increment();
                continue;
            }
            try {
                for (int i = 0; i < WATCHES_PER_SOCKET; i++) {
                    s.ws.sendBinary(ByteBuffer.wrap(watchMessage(socket, i)), true)
                            .join();
                }
                Set<String> first = new HashSet<>();
                while (!stop.get() && !s.closed.isDone()) {
                    byte[] b = s.binaries.poll(100, TimeUnit.MILLISECONDS);
                    if (b != null) {
                        received(b, first, answered, refused);
                    }
                }
                for (byte[] b = s.binaries.poll(); b != null; b = s.binaries.poll()) {
                    received(b, first, answered, refused);
                }
                if (!stop.get()) {
                    closes.computeIfAbsent(s.closed.getNow(-1), k -> new LongAdder())
                            .increment();
                    refused.increment();
                }
            } catch (RuntimeException e) {
                closes.computeIfAbsent(-1, k -> new LongAdder()).increment(); // a send failed: the socket ended
                refused.increment();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } finally {
                s.ws.abort();
            }
        }
    }

    /**
     * A quiet tenant's watch beside the storm: a partition of its own with one watch of {@code l0} on pod A; every
     * 200 ms (more than the 100 ms rerun interval, so that interval never delays the rerun) a one-row commit from pod
     * B, timed from the start of its round to the first snapshot holding the row's new title (30 s at most: lost).
     */
    private void probe(AtomicBoolean stop) {
        String partition = "quiet-watch-" + UUID.randomUUID();
        SyncTestClient writer = new SyncTestClient(
                schema, new BenchHttpTransport(pods.get(1).baseUrl(), partition), "qw", "qw-" + UUID.randomUUID());
        URI uri = URI.create(pods.get(0).baseUrl().replaceFirst("^http", "ws") + "/operations/realtime");
        RealtimeSocket s = RealtimeSocket.connect(uri, Map.of("x-actor-id", "qw", "x-syncular-partition", partition));
        try {
            s.ws.sendBinary(ByteBuffer.wrap(watchMessage("qw", "l0", "probe")), true)
                    .join();
            s.binaries.poll(30, TimeUnit.SECONDS); // the first snapshot
            writer.syncUntilIdle(); // the log epoch
            for (long n = 0; !stop.get(); n++) {
                Thread.sleep(200); // a benchmark's pacing, not a test's wait
                String title = "probe-" + n + "-";
                long start = System.nanoTime();
                writer.outbox.clear();
                writer.upsert("todos", todo("p" + (n % 5), "l0", title, n), null);
                try {
                    writer.sync();
                } catch (RuntimeException e) {
                    probeLost.increment();
                    continue;
                }
                long deadline = start + TimeUnit.SECONDS.toNanos(30);
                boolean seen = false;
                while (!seen && System.nanoTime() < deadline) {
                    byte[] b = s.binaries.poll(100, TimeUnit.MILLISECONDS);
                    seen = b != null && new String(b, StandardCharsets.UTF_8).contains("\"" + title + "\"");
                }
                if (seen) {
                    synchronized (probe) {
                        probe.recordValue(Math.max(1, (System.nanoTime() - start) / 1000));
                    }
                } else {
                    probeLost.increment();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            s.ws.abort();
        }
    }

    private void received(byte[] b, Set<String> first, LongAdder answered, LongAdder refused) {
        String head = new String(b, 0, Math.min(b.length, 600), StandardCharsets.UTF_8);
        Matcher kind = KIND.matcher(head);
        Matcher id = WATCH_ID.matcher(head);
        String k = kind.find() ? kind.group(1) : "?";
        String watchId = id.find() ? id.group(1) : "";
        if (k.equals("snapshot")) {
            if (first.add(watchId)) {
                accepted.increment();
            } else {
                answered.increment();
            }
            return;
        }
        Matcher code = CODE.matcher(head);
        String c = code.find() ? code.group(1) : k;
        if (c.equals("sync.rate_limited")) {
            rateLimited.increment();
            refused.increment();
        } else {
            otherErrors.computeIfAbsent(c, x -> new LongAdder()).increment();
        }
    }

    private byte[] watchMessage(int socket, int i) {
        return watchMessage("storm-" + socket + "-" + i, LIST, "w" + i);
    }

    private byte[] watchMessage(String clientId, String list, String watchId) {
        ObjectNode params = tagged(new Object[] {"listId", str(list)});
        ObjectNode m = tagged(new Object[] {
            "revision",
            F.objectNode().put("t", "number").put("v", 1),
            "kind",
            str("watch"),
            "watchId",
            str(watchId),
            "clientId",
            str(clientId),
            "operationId",
            str(operationId),
            "params",
            params
        });
        try {
            return JSON.writeValueAsBytes(m);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ObjectNode str(String s) {
        return F.objectNode().put("t", "string").put("v", s);
    }

    /** A §4 tagged object of the name/value pairs {@code kv}. */
    private static ObjectNode tagged(Object[] kv) {
        ArrayNode pairs = F.arrayNode();
        for (int i = 0; i < kv.length; i += 2) {
            pairs.add(F.arrayNode().add((String) kv[i]).add((ObjectNode) kv[i + 1]));
        }
        ObjectNode o = F.objectNode().put("t", "object");
        o.set("v", pairs);
        return o;
    }

    /** Samples each pod's active watches and waiting runs (called near the end of the phase, sockets open). */
    void sampleGauges() {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < pods.size(); i++) {
            try {
                String body = HTTP.send(
                                HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                                + pods.get(i).managementPort() + "/q/metrics"))
                                        .GET()
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body();
                PrometheusScrape p = PrometheusScrape.parse(body);
                double runs = p.value("syncular_operations_seconds_count", Map.of("binding", "watch"));
                out.append(String.format(
                        Locale.ROOT,
                        "%spod %c: %.0f watches, %.0f runs waiting, %.0f runs answered (%.1f ms each on average)",
                        i == 0 ? "" : "; ",
                        (char) ('A' + i),
                        p.value("syncular_operations_watches", Map.of()),
                        p.value("syncular_operations_watch_backlog", Map.of()),
                        runs,
                        1000 * p.value("syncular_operations_seconds_sum", Map.of("binding", "watch")) / runs));
            } catch (IOException e) {
                out.append(i == 0 ? "" : "; ")
                        .append("pod ")
                        .append((char) ('A' + i))
                        .append(": ")
                        .append(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        gauges = out.toString();
    }

    /** What the counters of the table leave out. */
    String detail() {
        String quiet;
        synchronized (probe) {
            quiet = String.format(
                    Locale.ROOT,
                    "a quiet tenant's watch on pod A, committed to from pod B: commit-to-snapshot p50 %.1f ms, max %.1f"
                            + " ms (%d commits, %d lost)",
                    probe.getValueAtPercentile(50) / 1000.0,
                    probe.getMaxValue() / 1000.0,
                    probe.getTotalCount(),
                    probeLost.sum());
        }
        if (!storm) {
            return "baseline detail: " + quiet;
        }
        return "watch-storm detail: " + quiet + "; "
                + String.format(
                        Locale.ROOT,
                        "%,d watches accepted, %,d refused (sync.rate_limited), other watch errors %s,"
                                + " sockets ended by code %s (0: refused at the upgrade); %,d commits answered, %,d refused;"
                                + " near the end %s",
                        accepted.sum(),
                        rateLimited.sum(),
                        sums(otherErrors),
                        sums(closes),
                        commitsOk.sum(),
                        commitsRefused.sum(),
                        gauges);
    }

    private static <K> Map<K, Long> sums(Map<K, LongAdder> m) {
        Map<K, Long> out = new TreeMap<>();
        m.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    /** A row of the quickstart's {@code todos} table in list {@code list}, its position and time {@code n}. */
    private static Map<String, Object> todo(String id, String list, String title, long n) {
        return Map.of("id", id, "list_id", list, "title", title, "done", false, "position", n, "updated_at_ms", n);
    }
}
