package dev.syncular.server.testsupport;

import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.PushResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Push load through several pods, as clients behind a load balancer produce it: {@code writers} threads, each
 * a {@link SyncTestClient} with its own client id, pushing one-row commits (table {@code todos}) to one
 * partition one round at a time, each round sent to the next pod in turn. A failed round — refused connection,
 * reset, 429, 500 — is retried with the same outbox (same {@code clientCommitId}s, §2.3) on the next pod, once
 * some pod reports ready ({@code /q/health/ready}, polled with a deadline). Records every commit id, its final
 * result, the failures its rounds met, and the latency of every successful round.
 */
public final class PushLoad implements AutoCloseable {
    private static final Duration RETRY_DEADLINE = Duration.ofMinutes(3);
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final CompiledSchema schema;
    private final String partition;
    private final List<String> pods;
    private final AtomicInteger next = new AtomicInteger();
    private final List<Thread> threads = new ArrayList<>();
    private final List<Throwable> crashes = Collections.synchronizedList(new ArrayList<>());
    private volatile boolean stopping;
    /** Every commit id queued, with the statuses of the results received for it. */
    public final Map<String, List<CommitStatus>> results = new ConcurrentHashMap<>();
    /** Commit ids whose rounds failed at least once before one carried their result, with the failures. */
    public final Map<String, List<String>> retried = new ConcurrentHashMap<>();
    /** Failures by kind: {@code io}, or the HTTP status. */
    public final Map<String, AtomicLong> failures = new ConcurrentHashMap<>();
    /** Every successful round: when it started ({@link System#nanoTime}) and how long it took. */
    public final List<Round> rounds = Collections.synchronizedList(new ArrayList<>());

    private final AtomicLong applied = new AtomicLong();
    private final Object progress = new Object();

    /** @param pods the pods' base URLs (a restarted pod keeps its URL) */
    public PushLoad(CompiledSchema schema, String partition, List<String> pods) {
        this.schema = schema;
        this.partition = partition;
        this.pods = List.copyOf(pods);
    }

    public PushLoad start(int writers) {
        for (int i = 0; i < writers; i++) {
            String clientId = "load-" + i + "-" + UUID.randomUUID().toString().substring(0, 8);
            Thread t = new Thread(() -> write(clientId), "push-load-" + i);
            threads.add(t);
            t.start();
        }
        return this;
    }

    /** Commits applied so far (results received). */
    public long applied() {
        return applied.get();
    }

    /** Blocks until {@code more} further commits have been applied (a signal from the writers), within {@code deadline}. */
    public void awaitMore(long more, Duration deadline) throws InterruptedException {
        long target = applied.get() + more;
        long end = System.nanoTime() + deadline.toNanos();
        synchronized (progress) {
            while (applied.get() < target) {
                long left = end - System.nanoTime();
                if (left <= 0 || !crashes.isEmpty()) {
                    throw new AssertionError("push load stalled at " + applied.get() + " applied (wanted " + target
                            + "); failures " + failures + "; crashes " + crashes);
                }
                progress.wait(Math.max(1, left / 1_000_000));
            }
        }
    }

    /** Stops queueing; every writer drains its outbox (retrying as before) and ends. */
    public void stop() throws InterruptedException {
        stopping = true;
        for (Thread t : threads) {
            t.join(RETRY_DEADLINE.toMillis() * 2);
        }
        if (!crashes.isEmpty()) {
            AssertionError e = new AssertionError("a writer failed: " + crashes.get(0), crashes.get(0));
            crashes.forEach(e::addSuppressed);
            throw e;
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }

    /** The client ids of the writers' commits (every commit id starts with its client id). */
    public List<String> clientIds() {
        return results.keySet().stream()
                .map(id -> id.substring(0, id.lastIndexOf("-c")))
                .distinct()
                .toList();
    }

    /** A successful round: its start ({@link System#nanoTime}) and its duration. */
    public record Round(long startNanos, long millis) {}

    /**
     * Latency percentile {@code p} (0..100), in milliseconds, of the rounds that started between
     * {@code fromNanos} and {@code toNanos}; {@code -1} when none did.
     */
    public long percentileMs(double p, long fromNanos, long toNanos) {
        List<Long> sorted = new ArrayList<>();
        synchronized (rounds) {
            for (Round r : rounds) {
                if (r.startNanos() >= fromNanos && r.startNanos() <= toNanos) {
                    sorted.add(r.millis());
                }
            }
        }
        Collections.sort(sorted);
        return sorted.isEmpty()
                ? -1
                : sorted.get((int) Math.max(0, Math.min(sorted.size() - 1, Math.ceil(p / 100 * sorted.size()) - 1)));
    }

    /** How many rounds started between {@code fromNanos} and {@code toNanos}. */
    public long roundsBetween(long fromNanos, long toNanos) {
        synchronized (rounds) {
            return rounds.stream()
                    .filter(r -> r.startNanos() >= fromNanos && r.startNanos() <= toNanos)
                    .count();
        }
    }

    private void write(String clientId) {
        try {
            SyncTestClient client = new SyncTestClient(schema, new Balanced(), "load-actor", clientId);
            round(client, null);
            int n = 0;
            while (!stopping) {
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("id", clientId + "-" + n);
                row.put("list_id", "l1");
                row.put("title", "t" + n);
                row.put("done", false);
                row.put("position", (long) n);
                row.put("updated_at_ms", (long) n);
                String id = client.upsert("todos", row, null);
                results.put(id, Collections.synchronizedList(new ArrayList<>()));
                round(client, id);
                n++;
            }
            while (!client.outbox.isEmpty()) {
                round(client, client.outbox.get(0).clientCommitId());
            }
        } catch (Throwable t) {
            crashes.add(t);
            synchronized (progress) {
                progress.notifyAll();
            }
        }
    }

    /** Rounds until {@code commitId}'s result arrived (any round when null), retrying failures. */
    private void round(SyncTestClient client, String commitId) throws InterruptedException {
        long end = System.nanoTime() + RETRY_DEADLINE.toNanos();
        List<String> failed = new ArrayList<>();
        while (true) {
            long t0 = System.nanoTime();
            try {
                client.sync();
                rounds.add(new Round(t0, (System.nanoTime() - t0) / 1_000_000));
                for (Map.Entry<String, PushResult> e : client.results.entrySet()) {
                    List<CommitStatus> statuses = results.get(e.getKey());
                    if (statuses != null && statuses.isEmpty()) {
                        statuses.add(e.getValue().status());
                        applied.incrementAndGet();
                    }
                }
                client.results.clear();
                synchronized (progress) {
                    progress.notifyAll();
                }
                if (commitId == null
                        || !client.outbox.stream()
                                .anyMatch(c -> c.clientCommitId().equals(commitId))) {
                    if (!failed.isEmpty() && commitId != null) {
                        retried.put(commitId, failed);
                    }
                    return;
                }
            } catch (HttpFailure e) {
                failed.add(Integer.toString(e.status));
                failures.computeIfAbsent(Integer.toString(e.status), k -> new AtomicLong())
                        .incrementAndGet();
            } catch (UncheckedIOException e) {
                failed.add("io");
                failures.computeIfAbsent("io", k -> new AtomicLong()).incrementAndGet();
            }
            if (System.nanoTime() > end) {
                throw new AssertionError("no pod took the round within " + RETRY_DEADLINE + "; failures " + failed);
            }
            awaitSomePodReady(end);
        }
    }

    /** Polls the pods' readiness (with the round's deadline) until one answers 200. */
    private void awaitSomePodReady(long end) throws InterruptedException {
        while (System.nanoTime() < end) {
            for (String pod : pods) {
                try {
                    HttpResponse<Void> r = HTTP.send(
                            HttpRequest.newBuilder(URI.create(pod + "/q/health/ready"))
                                    .timeout(Duration.ofSeconds(5))
                                    .GET()
                                    .build(),
                            HttpResponse.BodyHandlers.discarding());
                    if (r.statusCode() == 200) {
                        return;
                    }
                } catch (IOException down) {
                    // not answering: try the next pod
                }
            }
        }
    }

    /** Each round to the next pod in turn. */
    private final class Balanced implements SyncTestClient.Transport {
        private final Map<String, HttpTransport> transports = new ConcurrentHashMap<>();

        private HttpTransport pick() {
            String pod = pods.get(Math.floorMod(next.getAndIncrement(), pods.size()));
            return transports.computeIfAbsent(pod, u -> new HttpTransport(u, partition));
        }

        @Override
        public byte[] roundTrip(SyncTestClient client, byte[] request) {
            return pick().roundTrip(client, request);
        }

        @Override
        public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
            return pick().downloadSegment(client, segmentId, scopesHeader);
        }
    }
}
