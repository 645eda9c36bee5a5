package dev.syncular.server.bench;

import dev.syncular.server.testsupport.ServerProcess;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.ClientWebSocket;
import io.vertx.core.http.UpgradeRejectedException;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketClientOptions;
import io.vertx.core.http.WebSocketConnectOptions;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Phase (f) of {@link RealtimeBenchmark}: a reconnect storm. {@code bench.stormSockets} (10,000) clients of one
 * partition connect, then {@code bench.stormWaves} (10) times every socket is dropped at once (a network blip, a load
 * balancer reset) and each client reconnects after its own random delay in {@code [0, bench.stormJitterMs)} (5,000
 * ms), as clients back off with jitter: 100,000 reconnects by default, each an upgrade with its credential checked
 * and the client's record read, up to its {@code hello} (§8.1). An upgrade refused 429 is retried after its
 * {@code Retry-After} plus jitter, any other failure after a second plus jitter. Each wave's sockets go out from a
 * loopback source address of their own (127.0.100.x), so the ports the previous wave left in {@code TIME_WAIT} are not
 * in the way and at most {@code stormSockets} are open at once on either side (the open-files limit here is 20,000).
 * Reported per wave: the time until every client had its hello again, the reconnect latency from each client's
 * scheduled start to its hello (p50 / p99 / max), refusals and failures; for the storm, reconnects a second, the
 * pod's CPU and RSS.
 */
final class ReconnectStorm {
    static final int SOCKETS = Integer.getInteger("bench.stormSockets", 10_000);
    private static final int WAVES = Integer.getInteger("bench.stormWaves", 10);
    private static final int JITTER_MS = Integer.getInteger("bench.stormJitterMs", 5_000);
    /** How long one wave may take before the phase fails. */
    private static final long WAVE_DEADLINE_SEC = 300;

    private ReconnectStorm() {}

    /** One wave's outcome. */
    private record Wave(double seconds, long[] latenciesMs, int refused, int failed) {}

    static void run(ServerProcess pod) throws Exception {
        String partition = "storm-" + UUID.randomUUID();
        URI uri = URI.create(pod.baseUrl());
        Vertx vertx = Vertx.vertx(new VertxOptions()
                .setEventLoopPoolSize(Math.max(2, Runtime.getRuntime().availableProcessors()))
                .setBlockedThreadCheckInterval(10_000));
        try {
            // wave 0: the clients' first connect (not counted as reconnects)
            List<ClientWebSocket> open = new ArrayList<>(SOCKETS);
            Wave first = wave(vertx, uri, partition, 0, open);
            System.out.printf(
                    Locale.ROOT,
                    "(f) %d clients of one partition connected with hello in %.1f s (jitter %d ms); RSS %.0f MB%n",
                    SOCKETS,
                    first.seconds(),
                    JITTER_MS,
                    RealtimeBenchmark.mb(pod.rssBytes()));
            double cpu0 = ProcStats.processCpuSeconds(pod.pid());
            long t0 = System.nanoTime();
            List<long[]> all = new ArrayList<>();
            int refused = 0;
            int failed = 0;
            for (int w = 1; w <= WAVES; w++) {
                drop(open);
                Wave wave = wave(vertx, uri, partition, w, open);
                long[] l = wave.latenciesMs();
                Arrays.sort(l);
                all.add(l);
                refused += wave.refused();
                failed += wave.failed();
                System.out.printf(
                        Locale.ROOT,
                        "(f) wave %d: %d reconnected with hello in %.1f s; reconnect p50 %d ms, p99 %d ms, max %d ms;"
                                + " %d upgrades refused 429 (retried), %d failed (retried); RSS %.0f MB%n",
                        w,
                        l.length,
                        wave.seconds(),
                        pct(l, 0.50),
                        pct(l, 0.99),
                        l[l.length - 1],
                        wave.refused(),
                        wave.failed(),
                        RealtimeBenchmark.mb(pod.rssBytes()));
            }
            double sec = (System.nanoTime() - t0) / 1e9;
            double cpu = ProcStats.processCpuSeconds(pod.pid()) - cpu0;
            long[] merged = all.stream().flatMapToLong(Arrays::stream).sorted().toArray();
            System.out.printf(
                    Locale.ROOT,
                    "(f) reconnect storm: %d reconnects in %.1f s (%.0f/s, drops and waits included); reconnect p50 %d"
                            + " ms, p99 %d ms, max %d ms; %d refused 429, %d failed, all retried; pod CPU %.1f s"
                            + " (%.2f ms a reconnect); RSS peak %.0f MB%n",
                    merged.length,
                    sec,
                    merged.length / sec,
                    pct(merged, 0.50),
                    pct(merged, 0.99),
                    merged[merged.length - 1],
                    refused,
                    failed,
                    cpu,
                    cpu * 1000 / merged.length,
                    RealtimeBenchmark.mb(pod.peakRssBytes()));
            System.out.printf(Locale.ROOT, "(f) refusals by code: %s%n", new TreeMap<>(REFUSALS));
            drop(open);
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
        }
    }

    /** Closes every socket of the previous wave and waits until each close completed. */
    private static void drop(List<ClientWebSocket> open) throws InterruptedException {
        CountDownLatch closed = new CountDownLatch(open.size());
        for (ClientWebSocket ws : open) {
            ws.close().onComplete(r -> closed.countDown());
        }
        if (!closed.await(WAVE_DEADLINE_SEC, TimeUnit.SECONDS)) {
            throw new IllegalStateException("sockets not closed: " + closed.getCount());
        }
        open.clear();
    }

    /** Every client connects after its jitter, retrying until its hello; {@code open} gets the sockets. */
    private static Wave wave(Vertx vertx, URI uri, String partition, int wave, List<ClientWebSocket> open)
            throws InterruptedException {
        // a source address per wave: 127.0.100.1, 127.0.100.2, ...
        WebSocketClient client = vertx.createWebSocketClient(new WebSocketClientOptions()
                .setLocalAddress("127.0.100." + (wave + 1))
                .setMaxConnections(SOCKETS)
                .setConnectTimeout(60_000));
        CountDownLatch hellos = new CountDownLatch(SOCKETS);
        long[] latencies = new long[SOCKETS];
        AtomicInteger refused = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        ClientWebSocket[] sockets = new ClientWebSocket[SOCKETS];
        AtomicLong last = new AtomicLong();
        long start = System.nanoTime();
        for (int i = 0; i < SOCKETS; i++) {
            int index = i;
            long delayMs = 1 + ThreadLocalRandom.current().nextInt(Math.max(1, JITTER_MS));
            long scheduled = start + TimeUnit.MILLISECONDS.toNanos(delayMs);
            vertx.setTimer(
                    delayMs,
                    t -> connect(
                            vertx, client, uri, partition, index, scheduled, sockets, latencies, hellos, last, refused,
                            failed));
        }
        if (!hellos.await(WAVE_DEADLINE_SEC, TimeUnit.SECONDS)) {
            throw new IllegalStateException("wave " + wave + ": hellos missing: " + hellos.getCount());
        }
        open.addAll(Arrays.asList(sockets));
        return new Wave((last.get() - start) / 1e9, latencies, refused.get(), failed.get());
    }

    private static void connect(
            Vertx vertx,
            WebSocketClient client,
            URI uri,
            String partition,
            int index,
            long scheduled,
            ClientWebSocket[] sockets,
            long[] latencies,
            CountDownLatch hellos,
            AtomicLong last,
            AtomicInteger refused,
            AtomicInteger failed) {
        ClientWebSocket ws = client.webSocket();
        boolean[] greeted = {false};
        ws.textMessageHandler(text -> {
            if (!greeted[0] && text.contains("\"hello\"")) {
                greeted[0] = true;
                long now = System.nanoTime();
                latencies[index] = TimeUnit.NANOSECONDS.toMillis(now - scheduled);
                last.accumulateAndGet(now, Math::max);
                hellos.countDown();
            }
        });
        ws.connect(new WebSocketConnectOptions()
                        .setHost(uri.getHost())
                        .setPort(uri.getPort())
                        .setURI("/realtime?clientId=storm-" + index)
                        .addHeader("x-actor-id", "storm-" + (index % 100))
                        .addHeader("x-syncular-partition", partition))
                .onComplete(r -> {
                    if (r.succeeded()) {
                        sockets[index] = ws;
                        return;
                    }
                    long retryMs;
                    if (r.cause() instanceof UpgradeRejectedException u && u.getStatus() == 429) {
                        refused.incrementAndGet();
                        REFUSALS.merge(refusal(u), 1, Integer::sum);
                        String after =
                                u.getHeaders() == null ? null : u.getHeaders().get("Retry-After");
                        retryMs = (after == null ? 1 : Long.parseLong(after.trim())) * 1000L;
                    } else {
                        failed.incrementAndGet();
                        retryMs = 1000;
                    }
                    vertx.setTimer(
                            retryMs + ThreadLocalRandom.current().nextInt(1000),
                            t -> connect(
                                    vertx, client, uri, partition, index, scheduled, sockets, latencies, hellos, last,
                                    refused, failed));
                });
    }

    /** Refused upgrades by their §10 code and {@code details.reason} (when given), over the storm. */
    private static final Map<String, Integer> REFUSALS = new ConcurrentHashMap<>();

    private static final Pattern CODE = Pattern.compile("\"code\"\\s*:\\s*\"([^\"]+)\"");
    private static final Pattern REASON = Pattern.compile("\"reason\"\\s*:\\s*\"([^\"]+)\"");

    /** {@code <code>} or {@code <code>/<reason>} of a refused upgrade's body. */
    private static String refusal(UpgradeRejectedException u) {
        String body = u.getBody() == null ? "" : u.getBody().toString();
        Matcher code = CODE.matcher(body);
        Matcher reason = REASON.matcher(body);
        return (code.find() ? code.group(1) : "?") + (reason.find() ? "/" + reason.group(1) : "");
    }

    private static long pct(long[] sorted, double q) {
        return sorted[Math.min(sorted.length - 1, (int) Math.floor(q * sorted.length))];
    }
}
