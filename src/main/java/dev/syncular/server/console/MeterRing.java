package dev.syncular.server.console;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The overview's time series: this pod's own Micrometer meters sampled every {@value #INTERVAL_SECONDS} seconds
 * into an in-memory ring of the last 15 minutes — per-pod display state, gone on restart, never stored. Each
 * sample holds the rates over its interval: applied commits per second ({@code syncular.push.commits},
 * {@code outcome=applied}), rounds per second ({@code syncular.sync.rounds}), the mean realtime delta latency
 * ({@code syncular.realtime.delta.latency}), the open realtime sockets ({@code syncular.realtime.connections})
 * and the rounds that ended in an error, by code ({@code syncular.sync.rounds} with an outcome other than
 * {@code ok}).
 */
@ApplicationScoped
public class MeterRing {
    static final int INTERVAL_SECONDS = 5;
    static final int CAPACITY = 15 * 60 / INTERVAL_SECONDS;

    /** One sample: the rates of one interval, and the error counts by code over it. */
    public record Sample(
            long atMs,
            double commitsPerSecond,
            double roundsPerSecond,
            double deltaLatencyMs,
            double openSockets,
            Map<String, Long> errors) {}

    private final MeterRegistry registry;
    private final Sample[] ring = new Sample[CAPACITY];
    private int next;
    private int size;
    private Totals last;

    @Inject
    public MeterRing(MeterRegistry registry) {
        this.registry = registry;
    }

    /** The running totals of the meters a sample is the difference of. */
    private record Totals(
            long atMs, double commits, long rounds, long deltas, double deltaMs, Map<String, Long> errors) {}

    @Scheduled(every = INTERVAL_SECONDS + "s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void sample() {
        record(totals());
    }

    synchronized void record(Totals now) {
        if (last != null && now.atMs() > last.atMs()) {
            double seconds = (now.atMs() - last.atMs()) / 1000.0;
            long deltas = now.deltas() - last.deltas();
            Map<String, Long> errors = new TreeMap<>();
            now.errors().forEach((code, n) -> {
                long d = n - last.errors().getOrDefault(code, 0L);
                if (d > 0) {
                    errors.put(code, d);
                }
            });
            ring[next] = new Sample(
                    now.atMs(),
                    Math.max(0, now.commits() - last.commits()) / seconds,
                    Math.max(0, now.rounds() - last.rounds()) / seconds,
                    deltas > 0 ? (now.deltaMs() - last.deltaMs()) / deltas : 0,
                    gauge("syncular.realtime.connections"),
                    Map.copyOf(errors));
            next = (next + 1) % CAPACITY;
            size = Math.min(size + 1, CAPACITY);
        }
        last = now;
    }

    /** The samples, oldest first. */
    public synchronized List<Sample> samples() {
        List<Sample> out = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            out.add(ring[(next - size + i + CAPACITY) % CAPACITY]);
        }
        return out;
    }

    /** The rounds that ended in an error since start-up, by code (the running totals). */
    public Map<String, Long> errorTotals() {
        return totals().errors();
    }

    /** The open realtime sockets of this pod now. */
    public double openSockets() {
        return gauge("syncular.realtime.connections");
    }

    private Totals totals() {
        double commits = 0;
        for (Counter c :
                registry.find("syncular.push.commits").tag("outcome", "applied").counters()) {
            commits += c.count();
        }
        long rounds = 0;
        Map<String, Long> errors = new TreeMap<>();
        for (Timer t : registry.find("syncular.sync.rounds").timers()) {
            rounds += t.count();
            String outcome = t.getId().getTag("outcome");
            if (outcome != null && !"ok".equals(outcome) && t.count() > 0) {
                errors.merge(outcome, t.count(), Long::sum);
            }
        }
        long deltas = 0;
        double deltaMs = 0;
        for (Timer t : registry.find("syncular.realtime.delta.latency").timers()) {
            deltas += t.count();
            deltaMs += t.totalTime(TimeUnit.MILLISECONDS);
        }
        return new Totals(System.currentTimeMillis(), commits, rounds, deltas, deltaMs, errors);
    }

    private double gauge(String name) {
        double sum = 0;
        for (Gauge g : registry.find(name).gauges()) {
            sum += g.value();
        }
        return sum;
    }
}
