package dev.syncular.server.bench;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.SyncTestClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The realtime reconnect storm (issue 29; not part of the test suite), run by {@code bench/reconnect.sh} against a
 * packaged server. (a) {@code bench.vus} (5) realtime clients bootstrap a scope of {@code bench.dataset} (500)
 * rows, then drop and reconnect for {@code bench.seconds} (20) while a writer pushes and pulls a hot row every
 * 10 ms over HTTP: each reconnect is a new socket upgrade (§8.1) up to its hello, then one catch-up round over the
 * socket (§8.7), then the socket is closed and the client pauses 20 ms. Reported: reconnects/s, reconnect (upgrade
 * + catch-up) and catch-up p50/p95/p99, the writer's rounds/s. (b) {@code bench.idleSockets} (1,000) sockets
 * opened and left idle: the server's RSS growth per socket.
 *
 * <p>Sockets offer {@code permessage-deflate} as browsers, Bun and Node do ({@code bench.offerDeflate}, default
 * true; {@link BenchWebSocket}); the writer sends {@code -Dbench.acceptEncoding} when set
 * ({@link BenchHttpTransport}).
 *
 * <p>Usage: {@code ReconnectBenchmark <baseUrl> <schemaPath> <serverPid>}.
 */
public final class ReconnectBenchmark {
    private static final int VUS = Integer.getInteger("bench.vus", 5);
    private static final int SECONDS = Integer.getInteger("bench.seconds", 20);
    private static final int DATASET = Integer.getInteger("bench.dataset", 500);
    private static final int IDLE_SOCKETS = Integer.getInteger("bench.idleSockets", 1000);
    private static final boolean OFFER_DEFLATE = Boolean.parseBoolean(System.getProperty("bench.offerDeflate", "true"));
    private static final Map<String, List<String>> SCOPE = Map.of("list_id", List.of("storm"));

    private ReconnectBenchmark() {}

    /** The client's rounds over the current socket when there is one, else over HTTP (the first bootstrap). */
    private static final class Switch implements SyncTestClient.Transport {
        private final SyncTestClient.Transport http;
        volatile BenchWebSocket socket;

        Switch(SyncTestClient.Transport http) {
            this.http = http;
        }

        @Override
        public byte[] roundTrip(SyncTestClient client, byte[] body) {
            BenchWebSocket s = socket;
            return s == null ? http.roundTrip(client, body) : s.round(body);
        }

        @Override
        public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
            return http.downloadSegment(client, segmentId, scopesHeader);
        }

        @Override
        public byte[] fetchUrl(String url) {
            return http.fetchUrl(url);
        }
    }

    private static Map<String, Object> todo(String id, long position) {
        Map<String, Object> row = new HashMap<>();
        row.put("id", id);
        row.put("list_id", "storm");
        row.put("title", "Item " + id);
        row.put("done", false);
        row.put("position", position);
        row.put("updated_at_ms", System.currentTimeMillis());
        return row;
    }

    private static double pct(List<Double> sorted, double p) {
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
    }

    private static long rssKb(long pid) throws Exception {
        for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (l.startsWith("VmRSS:")) {
                return Long.parseLong(l.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: ReconnectBenchmark <baseUrl> <schemaPath> <serverPid>");
            System.exit(2);
        }
        String base = args[0].endsWith("/") ? args[0] : args[0] + "/";
        CompiledSchema schema = SchemaLoader.load(Path.of(args[1]));
        long pid = Long.parseLong(args[2]);
        String partition = "bench-rc-" + UUID.randomUUID();
        try {
            SyncTestClient seeder = new SyncTestClient(
                            schema, new BenchHttpTransport(base, partition), "rc-seeder", "rc-seeder")
                    .subscribe("storm", "todos", SCOPE);
            seeder.syncUntilIdle();
            for (int i = 0; i < DATASET; i++) {
                seeder.upsert("todos", todo("row-" + i, i), null);
                if (seeder.outbox.size() == 250 || i == DATASET - 1) {
                    seeder.syncUntilIdle();
                }
            }

            long end = System.nanoTime() + SECONDS * 1_000_000_000L;
            AtomicLong writerRounds = new AtomicLong();
            AtomicLong failures = new AtomicLong();
            Thread writer = new Thread(() -> {
                SyncTestClient w = new SyncTestClient(
                                schema, new BenchHttpTransport(base, partition), "rc-writer", "rc-writer")
                        .subscribe("storm", "todos", SCOPE);
                w.syncUntilIdle();
                for (long seq = 0; System.nanoTime() < end; seq++) {
                    try {
                        w.upsert("todos", todo("hot-" + (seq % 50), seq), null);
                        w.sync();
                        writerRounds.incrementAndGet();
                        Thread.sleep(10);
                    } catch (InterruptedException e) {
                        return;
                    } catch (RuntimeException e) {
                        failures.incrementAndGet();
                    }
                }
            });
            List<Double> reconnect = Collections.synchronizedList(new ArrayList<>());
            List<Double> catchup = Collections.synchronizedList(new ArrayList<>());
            AtomicLong accepted = new AtomicLong();
            List<Thread> vus = new ArrayList<>();
            for (int v = 0; v < VUS; v++) {
                String clientId = "rc-" + v;
                vus.add(new Thread(() -> {
                    Switch transport = new Switch(new BenchHttpTransport(base, partition));
                    SyncTestClient c = new SyncTestClient(schema, transport, clientId, clientId)
                            .subscribe("storm", "todos", SCOPE);
                    c.syncUntilIdle(); // the first connection's bootstrap
                    while (System.nanoTime() < end) {
                        try {
                            long t0 = System.nanoTime();
                            try (BenchWebSocket ws =
                                    new BenchWebSocket(base, partition, clientId, clientId, OFFER_DEFLATE)) {
                                long t1 = System.nanoTime();
                                transport.socket = ws;
                                c.sync(); // one catch-up round over the socket
                                long t2 = System.nanoTime();
                                if (ws.deflate) {
                                    accepted.incrementAndGet();
                                }
                                catchup.add((t2 - t1) / 1e6);
                                reconnect.add((t2 - t0) / 1e6);
                            }
                            Thread.sleep(20);
                        } catch (InterruptedException e) {
                            return;
                        } catch (Exception e) {
                            failures.incrementAndGet();
                        }
                    }
                }));
            }
            long start = System.nanoTime();
            writer.start();
            vus.forEach(Thread::start);
            for (Thread t : vus) {
                t.join();
            }
            writer.join();
            double wall = (System.nanoTime() - start) / 1e9;
            List<Double> r = new ArrayList<>(reconnect);
            List<Double> cu = new ArrayList<>(catchup);
            Collections.sort(r);
            Collections.sort(cu);
            System.out.printf(
                    "(a) reconnect storm: %d clients, %d s, sockets offer permessage-deflate: %s (accepted on %d of %d"
                            + " reconnects); writer Accept-Encoding: %s%n",
                    VUS,
                    SECONDS,
                    OFFER_DEFLATE,
                    accepted.get(),
                    r.size(),
                    System.getProperty("bench.acceptEncoding", "(none)"));
            System.out.printf(
                    "| reconnects | reconnects/s | reconnect p50 / p95 / p99 ms | catch-up p50 / p95 / p99 ms |"
                            + " writer rounds/s | failures |%n|---|---|---|---|---|---|%n"
                            + "| %,d | %.1f | %.1f / %.1f / %.1f | %.1f / %.1f / %.1f | %.1f | %d |%n",
                    r.size(),
                    r.size() / wall,
                    pct(r, 50),
                    pct(r, 95),
                    pct(r, 99),
                    pct(cu, 50),
                    pct(cu, 95),
                    pct(cu, 99),
                    writerRounds.get() / wall,
                    failures.get());

            if (IDLE_SOCKETS > 0) {
                long before = rssKb(pid);
                List<BenchWebSocket> idle = new ArrayList<>();
                int deflated = 0;
                for (int i = 0; i < IDLE_SOCKETS; i++) {
                    BenchWebSocket ws = new BenchWebSocket(base, partition, "rc-idle", "rc-idle-" + i, OFFER_DEFLATE);
                    idle.add(ws);
                    deflated += ws.deflate ? 1 : 0;
                }
                long after = rssKb(pid);
                System.out.printf(
                        "(b) %,d idle sockets (permessage-deflate accepted on %,d): server RSS %,d MB -> %,d MB,"
                                + " %.1f KB per socket%n",
                        IDLE_SOCKETS, deflated, before / 1024, after / 1024, (after - before) / (double) IDLE_SOCKETS);
                idle.forEach(BenchWebSocket::close);
            }
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }
}
