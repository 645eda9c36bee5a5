package dev.syncular.server.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.operations.QueryIrLoader;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * The remote operations benchmark (docs/BENCHMARKS.md, "Remote operations"; issue 28; not part of the test suite).
 * Run with {@code bench/operations.sh}. It starts two packaged servers on one fresh storage schema
 * ({@link ServerProcess}, the chart's JVM flags) with the watch fixture (the demo-react {@code todos} table plus
 * {@code notes}, {@code src/test/resources/operations/watch.*}) and the declared commands of
 * {@code commands.json}, and measures:
 * <ol>
 * <li><b>(a) scoped query</b>: {@code todosInList} returning {@code bench.queryRows} (100) rows, {@code bench.clients}
 * (20) clients posting {@code POST /operations} back to back for {@code bench.seconds} (20 s) after
 * {@code bench.warmupSec} (10 s): queries/s, p50/p99 latency.</li>
 * <li><b>(b) command rounds against push rounds</b>: the same clients calling the declared command {@code todos.create}
 * (a one-row commit through the push path, a new {@code requestId} each) back to back, then doing one-row push+pull
 * rounds over {@code POST /sync}, each client in its own partition, same durations: rounds/s of each.</li>
 * <li><b>(c) watches across two pods</b>: {@code bench.watches} (1,000) watches of {@code todosInList} over
 * {@code bench.lists} (100) lists on {@code bench.watchSockets} (100) sockets on pod B, each list its own partition
 * (the lists are tenants: a commit reruns only its partition's watches of the table); a writer commits
 * {@code bench.commitsPerSec} (100) one-row commits per second through pod A, round-robin over the lists, for
 * {@code bench.watchSec} (20 s) after {@code bench.watchWarmupSec} (5 s). Commit-to-snapshot latency is from the
 * moment the writer sends the push to the arrival of a snapshot showing that commit's row (an upper bound), over
 * every watch; p50/p99/max (target p99 &le; 100 ms). Database statements per commit from {@code pg_stat_statements}
 * (the delta of {@code calls} of the benchmark's role over the measured window, every statement both pods ran,
 * the pushes' own included, divided by the commits), when the extension is installed.</li>
 * </ol>
 */
public final class OperationsBenchmark {
    private static final int CLIENTS = Integer.getInteger("bench.clients", 20);
    private static final int SECONDS = Integer.getInteger("bench.seconds", 20);
    private static final int WARMUP_SEC = Integer.getInteger("bench.warmupSec", 10);
    private static final int QUERY_ROWS = Integer.getInteger("bench.queryRows", 100);
    private static final int WATCHES = Integer.getInteger("bench.watches", 1_000);
    private static final int LISTS = Integer.getInteger("bench.lists", 100);
    private static final int WATCH_SOCKETS = Integer.getInteger("bench.watchSockets", 100);
    private static final int RATE = Integer.getInteger("bench.commitsPerSec", 100);
    private static final int WATCH_SEC = Integer.getInteger("bench.watchSec", 20);
    private static final int WATCH_WARMUP_SEC = Integer.getInteger("bench.watchWarmupSec", 5);
    private static final int WRITERS = Integer.getInteger("bench.writerThreads", 8);
    /** The phases to run, e.g. {@code -Dbench.phases=c}; all three by default. */
    private static final String PHASES = System.getProperty("bench.phases", "abc");

    static final Path DIR = Path.of("src/test/resources/operations").toAbsolutePath();
    static final String CT = "application/vnd.syncular.operations.v1+json";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static CompiledSchema schema;
    private static String prefix;

    private OperationsBenchmark() {}

    public static void main(String[] args) throws Exception {
        schema = SchemaLoader.parse(Files.readString(DIR.resolve("watch.syncular.ir.json")));
        prefix = QueryIrLoader.documentId(Files.readAllBytes(DIR.resolve("watch.queries.ir.json")));
        String pgSchema =
                "bench_ops_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        System.out.printf(
                Locale.ROOT,
                "== operations benchmark, storage schema %s, server flags %s%n",
                pgSchema,
                String.join(" ", ServerProcess.CHART_JVM_FLAGS));
        try (ServerProcess a = pod("bench-operations-a", pgSchema)) {
            if (PHASES.contains("a")) {
                query(a);
            }
            if (PHASES.contains("b")) {
                rounds(a);
            }
            if (PHASES.contains("c")) {
                try (ServerProcess b = pod("bench-operations-b", pgSchema)) {
                    watches(a, b);
                }
            }
        }
    }

    static ServerProcess pod(String name, String pgSchema) throws Exception {
        return ServerProcess.builder(name, pgSchema)
                .jvmFlags(ServerProcess.CHART_JVM_FLAGS)
                .env(
                        "SYNCULAR_SCHEMA_PATH",
                        DIR.resolve("watch.syncular.ir.json").toString())
                .env(
                        "SYNCULAR_OPERATIONS_QUERIES_PATH",
                        DIR.resolve("watch.queries.ir.json").toString())
                .env(
                        "SYNCULAR_OPERATIONS_COMMANDS_PATH",
                        DIR.resolve("commands.json").toString())
                .env("SYNCULAR_DEV_AUTH_ALLOWED_SCOPES", "{\"list_id\":[\"*\"]}")
                .env("SYNCULAR_OPERATIONS_WATCH_MAX_PER_POD", Integer.toString(WATCHES + 100))
                .start();
    }

    // ------------------------------------------------------------------ tagged JSON (REMOTE.md §4), by hand

    static String str(String s) {
        try {
            return "{\"t\":\"string\",\"v\":" + JSON.writeValueAsString(s) + "}";
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static String obj(String... pairs) {
        StringBuilder sb = new StringBuilder("{\"t\":\"object\",\"v\":[");
        for (int i = 0; i < pairs.length; i += 2) {
            sb.append(i == 0 ? "" : ",")
                    .append("[\"")
                    .append(pairs[i])
                    .append("\",")
                    .append(pairs[i + 1])
                    .append(']');
        }
        return sb.append("]}").toString();
    }

    static final String ONE = "{\"t\":\"number\",\"v\":1}";

    static String queryRequest(String listId) {
        return obj(
                "revision",
                ONE,
                "kind",
                str("query"),
                "clientId",
                str("bench"),
                "operationId",
                str(prefix + "/todosInList"),
                "params",
                obj("listId", str(listId)));
    }

    static String commandRequest(String requestId, String id) {
        return obj(
                "revision",
                ONE,
                "kind",
                str("command"),
                "clientId",
                str("bench"),
                "operationId",
                str("todos.create"),
                "requestId",
                str(requestId),
                "params",
                obj(
                        "id",
                        str(id),
                        "list",
                        str("l1"),
                        "title",
                        str("t"),
                        "position",
                        "{\"t\":\"integer\",\"v\":\"1\"}"));
    }

    static HttpResponse<byte[]> post(ServerProcess pod, String actor, String partition, String body) throws Exception {
        HttpRequest r = HttpRequest.newBuilder(URI.create(pod.baseUrl() + "/operations"))
                .header("Content-Type", CT)
                .header("x-actor-id", actor)
                .header("x-syncular-partition", partition)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        HttpResponse<byte[]> resp = HTTP.send(r, HttpResponse.BodyHandlers.ofByteArray());
        if (resp.statusCode() != 200 || new String(resp.body(), StandardCharsets.UTF_8).contains("\"error\"")) {
            throw new IllegalStateException(
                    "operation failed: " + resp.statusCode() + " " + new String(resp.body(), StandardCharsets.UTF_8));
        }
        return resp;
    }

    static Map<String, Object> todo(String id, String list, String title) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", id);
        m.put("list_id", list);
        m.put("title", title);
        m.put("done", false);
        m.put("position", 1L);
        m.put("updated_at_ms", 1L);
        m.put("attachment", null);
        return m;
    }

    static SyncTestClient client(ServerProcess pod, String partition) {
        return new SyncTestClient(
                schema, new HttpTransport(pod.baseUrl(), partition), "writer", "writer-" + UUID.randomUUID());
    }

    /** Runs {@code work} on {@link #CLIENTS} threads for {@code seconds}; the calls completed. */
    interface Work {
        void call(int client, long n) throws Exception;
    }

    static long load(int seconds, Histogram latency, Work work) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        AtomicLong calls = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            int client = c;
            Thread t = new Thread(() -> {
                try {
                    for (long n = 0; System.nanoTime() < end; n++) {
                        long t0 = System.nanoTime();
                        work.call(client, n);
                        if (latency != null) {
                            latency.recordValue(Math.max(1, (System.nanoTime() - t0) / 1000));
                        }
                        calls.incrementAndGet();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("load failed", failures.get(0));
        }
        return calls.get();
    }

    // ------------------------------------------------------------------ (a)

    static void query(ServerProcess pod) throws Exception {
        String partition = "bench-query-" + UUID.randomUUID();
        SyncTestClient seed = client(pod, partition);
        for (int i = 0; i < QUERY_ROWS; i++) {
            seed.upsert("todos", todo(String.format("q%04d", i), "q", "title " + i), null);
            if (i % 50 == 49) {
                seed.syncUntilIdle();
            }
        }
        seed.syncUntilIdle();
        String body = queryRequest("q");
        int n = WatchSocket.fields(
                        JSON.readTree(post(pod, "reader", partition, body).body()))
                .get("rows")
                .path("v")
                .size();
        load(WARMUP_SEC, null, (c, i) -> post(pod, "reader", partition, body));
        Histogram latency = new Histogram(60_000_000L, 3);
        long calls = load(SECONDS, latency, (c, i) -> post(pod, "reader", partition, body));
        System.out.printf(
                Locale.ROOT,
                "(a) scoped query, %d rows, %d clients, %d s: %.0f queries/s, p50 %.2f ms, p99 %.2f ms%n",
                n,
                CLIENTS,
                SECONDS,
                calls / (double) SECONDS,
                latency.getValueAtPercentile(50) / 1000.0,
                latency.getValueAtPercentile(99) / 1000.0);
    }

    // ------------------------------------------------------------------ (b)

    static void rounds(ServerProcess pod) throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        Work command = (c, i) -> post(pod, "alice", "bench-cmd-" + run + "-" + c, commandRequest("r" + i, "c" + i));
        List<SyncTestClient> clients = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
            SyncTestClient s = client(pod, "bench-push-" + run + "-" + c);
            s.subscribe("s", "todos", Map.of("list_id", List.of("l1")));
            s.syncUntilIdle();
            clients.add(s);
        }
        Work push = (c, i) -> {
            SyncTestClient s = clients.get(c);
            s.upsert("todos", todo("p" + i, "l1", "t"), null);
            s.sync();
        };
        load(WARMUP_SEC, null, command);
        load(WARMUP_SEC, null, push);
        Histogram commandLatency = new Histogram(60_000_000L, 3);
        long commands = load(SECONDS, commandLatency, command);
        Histogram pushLatency = new Histogram(60_000_000L, 3);
        long pushes = load(SECONDS, pushLatency, push);
        System.out.printf(
                Locale.ROOT,
                "(b) %d clients, %d s, each in its own partition: command rounds %.0f/s (p50 %.2f ms, p99 %.2f ms);"
                        + " push+pull rounds %.0f/s (p50 %.2f ms, p99 %.2f ms); ratio %.2f%n",
                CLIENTS,
                SECONDS,
                commands / (double) SECONDS,
                commandLatency.getValueAtPercentile(50) / 1000.0,
                commandLatency.getValueAtPercentile(99) / 1000.0,
                pushes / (double) SECONDS,
                pushLatency.getValueAtPercentile(50) / 1000.0,
                pushLatency.getValueAtPercentile(99) / 1000.0,
                commands / (double) Math.max(1, pushes));
    }

    // ------------------------------------------------------------------ (c)

    /** A watch socket: every snapshot's rows read for the writer's marker row; latencies recorded per watch. */
    static final class WatchSocket implements WebSocket.Listener {
        final Map<String, Long> sent;
        final Histogram latency;
        final Map<String, Long> seen = new ConcurrentHashMap<>();
        final AtomicLong snapshots = new AtomicLong();
        volatile boolean measuring;
        private final ByteArrayOutputStream partial = new ByteArrayOutputStream();
        WebSocket ws;

        WatchSocket(Map<String, Long> sent, Histogram latency) {
            this.sent = sent;
            this.latency = latency;
        }

        @Override
        public void onOpen(WebSocket webSocket) {
            webSocket.request(1);
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            byte[] b = new byte[data.remaining()];
            data.get(b);
            partial.writeBytes(b);
            if (last) {
                long now = System.nanoTime();
                byte[] message = partial.toByteArray();
                partial.reset();
                try {
                    read(JSON.readTree(message), now);
                } catch (Exception e) {
                    System.err.println("unreadable watch message: " + e);
                }
            }
            webSocket.request(1);
            return null;
        }

        /** A snapshot's title {@code <list>:<seq>} is the writer's commit of that seq; new ones are recorded. */
        private void read(JsonNode message, long now) {
            Map<String, JsonNode> fields = fields(message);
            if (!"snapshot".equals(fields.get("kind").path("v").asText())) {
                System.err.println("watch message: " + message);
                return;
            }
            snapshots.incrementAndGet();
            String watchId = fields.get("watchId").path("v").asText();
            for (JsonNode row : fields.get("rows").path("v")) {
                String title = fields(row).get("title").path("v").asText();
                Long at = sent.get(title);
                if (at != null && seen.put(watchId + "|" + title, now) == null && measuring) {
                    synchronized (latency) {
                        latency.recordValue(Math.max(1, (now - at) / 1000));
                    }
                }
            }
        }

        static Map<String, JsonNode> fields(JsonNode tagged) {
            Map<String, JsonNode> out = new LinkedHashMap<>();
            for (JsonNode pair : tagged.path("v")) {
                out.put(pair.get(0).asText(), pair.get(1));
            }
            return out;
        }
    }

    static void watches(ServerProcess writerPod, ServerProcess watchPod) throws Exception {
        String run = UUID.randomUUID().toString().substring(0, 8);
        List<String> partitions = new ArrayList<>();
        List<SyncTestClient> writers = new ArrayList<>();
        for (int l = 0; l < LISTS; l++) {
            String p = "bench-watch-" + run + "-" + l;
            partitions.add(p);
            SyncTestClient w = client(writerPod, p);
            w.upsert("todos", todo("marker", "l1", "start"), null);
            w.syncUntilIdle();
            writers.add(w);
        }
        Map<String, Long> sent = new ConcurrentHashMap<>();
        Histogram latency = new Histogram(60_000_000L, 3);
        List<WatchSocket> sockets = new ArrayList<>();
        List<CompletableFuture<WebSocket>> opening = new ArrayList<>();
        // socket s serves the lists s, s + sockets, ...: a socket authenticates for one partition, so a socket's
        // watches are of one list; WATCHES / WATCH_SOCKETS watches each
        int perSocket = Math.max(1, WATCHES / WATCH_SOCKETS);
        for (int s = 0; s < WATCH_SOCKETS; s++) {
            WatchSocket ws = new WatchSocket(sent, latency);
            sockets.add(ws);
            opening.add(HTTP.newWebSocketBuilder()
                    .header("x-actor-id", "watcher")
                    .header("x-syncular-partition", partitions.get(s % LISTS))
                    .buildAsync(
                            URI.create(watchPod.baseUrl().replaceFirst("^http", "ws") + "/operations/realtime"), ws));
        }
        for (int s = 0; s < WATCH_SOCKETS; s++) {
            WatchSocket ws = sockets.get(s);
            ws.ws = opening.get(s).get(30, TimeUnit.SECONDS);
            for (int w = 0; w < perSocket; w++) {
                String m = obj(
                        "revision",
                        ONE,
                        "kind",
                        str("watch"),
                        "watchId",
                        str("w" + w),
                        "clientId",
                        str("watcher"),
                        "operationId",
                        str(prefix + "/todosInList"),
                        "params",
                        obj("listId", str("l1")));
                ws.ws.sendBinary(ByteBuffer.wrap(m.getBytes(StandardCharsets.UTF_8)), true)
                        .join();
            }
        }
        long expected = (long) WATCH_SOCKETS * perSocket;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (sockets.stream().mapToLong(s -> s.snapshots.get()).sum() < expected) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("first snapshots missing");
            }
            LockSupport.parkNanos(10_000_000);
        }
        System.out.printf(
                Locale.ROOT,
                "(c) %d watches on %d sockets of pod B over %d lists (one partition each); writer on pod A, %d commits/s%n",
                expected,
                WATCH_SOCKETS,
                LISTS,
                RATE);
        commits(writers, sent, WATCH_WARMUP_SEC);
        StatementCount statements = StatementCount.open();
        long before = statements.calls();
        sockets.forEach(s -> s.measuring = true);
        long commits = commits(writers, sent, WATCH_SEC);
        // the last commits' snapshots: a short drain before the count
        long drain = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (System.nanoTime() < drain) {
            LockSupport.parkNanos(50_000_000);
        }
        sockets.forEach(s -> s.measuring = false);
        long after = statements.calls();
        statements.close();
        long deliveries;
        synchronized (latency) {
            deliveries = latency.getTotalCount();
        }
        System.out.printf(
                Locale.ROOT,
                "(c) %d commits in %d s, %d watch deliveries (expected about %d): commit-to-snapshot p50 %.1f ms,"
                        + " p99 %.1f ms, max %.1f ms; database statements per commit %s%n",
                commits,
                WATCH_SEC,
                deliveries,
                commits * perSocket * WATCH_SOCKETS / LISTS,
                latency.getValueAtPercentile(50) / 1000.0,
                latency.getValueAtPercentile(99) / 1000.0,
                latency.getMaxValue() / 1000.0,
                before < 0
                        ? "n/a (pg_stat_statements not installed)"
                        : String.format(Locale.ROOT, "%.1f", (after - before) / (double) Math.max(1, commits)));
        sockets.forEach(s -> s.ws.abort());
    }

    /** Paced one-row commits, round-robin over the lists' writers, on {@link #WRITERS} threads; the commits made. */
    static long commits(List<SyncTestClient> writers, Map<String, Long> sent, int seconds) throws Exception {
        long total = (long) RATE * seconds;
        AtomicLong next = new AtomicLong();
        long t0 = System.nanoTime();
        long stepNs = 1_000_000_000L / RATE;
        String run = UUID.randomUUID().toString().substring(0, 6);
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int t = 0; t < WRITERS; t++) {
            Thread th = new Thread(() -> {
                try {
                    for (long i; (i = next.getAndIncrement()) < total; ) {
                        long at = t0 + i * stepNs;
                        long wait = at - System.nanoTime();
                        if (wait > 0) {
                            LockSupport.parkNanos(wait); // pacing the load (a benchmark, not a test)
                        }
                        SyncTestClient w = writers.get((int) (i % writers.size()));
                        String title = run + ":" + i;
                        synchronized (w) {
                            w.upsert("todos", todo("marker", "l1", title), null);
                            sent.put(title, System.nanoTime());
                            w.sync();
                        }
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            th.start();
            threads.add(th);
        }
        for (Thread th : threads) {
            th.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("writer failed", failures.get(0));
        }
        return total;
    }

    /** {@code pg_stat_statements}: the calls of the benchmark's role in its database so far ({@code -1}: none). */
    static final class StatementCount implements AutoCloseable {
        private final Vertx vertx;
        private final Pool pool;

        private StatementCount(Vertx vertx, Pool pool) {
            this.vertx = vertx;
            this.pool = pool;
        }

        static StatementCount open() {
            Vertx vertx = Vertx.vertx();
            return new StatementCount(vertx, TestPostgres.pool(vertx, 1));
        }

        long calls() {
            try {
                return pool.query("SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements"
                                + " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
                                + " AND userid = (SELECT oid FROM pg_roles WHERE rolname = current_user)")
                        .execute()
                        .await()
                        .atMost(java.time.Duration.ofSeconds(30))
                        .iterator()
                        .next()
                        .getLong(0);
            } catch (RuntimeException e) {
                return -1;
            }
        }

        @Override
        public void close() {
            pool.close().await().indefinitely();
            vertx.close().await().indefinitely();
        }
    }
}
