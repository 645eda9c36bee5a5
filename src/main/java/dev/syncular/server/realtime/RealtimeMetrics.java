package dev.syncular.server.realtime;

import dev.syncular.server.wire.realtime.WakeReason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * Realtime metrics: open connections, presence members, deltas and commit-to-delta latency, wake-ups by reason,
 * LISTEN reconnects, the fan-out's read backlog and overflows, swallowed failures by kind ({@link RealtimeFailures}), outbound-budget refusals and stuck
 * closes, dropped presence NOTIFYs.
 */
final class RealtimeMetrics {
    private final Counter deltas;
    private final Map<WakeReason, Counter> wakes = new EnumMap<>(WakeReason.class);
    private final Counter reconnects;
    private final Counter budgetRefusals;
    private final Counter stuckCloses;
    private final Counter presenceNotifyDrops;
    private final Counter presenceCoalesced;
    private final Counter fanoutShares;
    private final Counter fanoutOverflows;
    private final AtomicReference<Double> notifyQueueUsage = new AtomicReference<>(0.0);
    private final Timer deltaLatency;
    private final RealtimeFailures failures;

    RealtimeMetrics(
            MeterRegistry registry,
            Supplier<Number> open,
            Supplier<Number> presenceMembers,
            Supplier<Number> fanoutBacklog) {
        // strong references: the suppliers are lambdas nothing else holds (a registry keeps its gauges' state weakly)
        Gauge.builder(
                        "syncular.realtime.fanout.backlog",
                        fanoutBacklog,
                        s -> s.get().doubleValue())
                .description("Notified commits waiting for one of the pod's fan-out reads")
                .strongReference(true)
                .register(registry);
        fanoutOverflows = registry.counter("syncular.realtime.fanout.overflows");
        Gauge.builder("syncular.postgres.notification.queue.usage", notifyQueueUsage, AtomicReference::get)
                .description("pg_notification_queue_usage() as last read by this pod's realtime heartbeat (0 to 1)")
                .strongReference(true)
                .register(registry);
        Gauge.builder("syncular.realtime.connections", open, s -> s.get().doubleValue())
                .strongReference(true)
                .register(registry);
        Gauge.builder(
                        "syncular.realtime.presence.members",
                        presenceMembers,
                        s -> s.get().doubleValue())
                .strongReference(true)
                .register(registry);
        deltas = registry.counter("syncular.realtime.deltas");
        for (WakeReason r : WakeReason.values()) {
            wakes.put(r, registry.counter("syncular.realtime.wakeups", "reason", r.wire()));
        }
        reconnects = registry.counter("syncular.realtime.listen.reconnects");
        budgetRefusals = registry.counter("syncular.realtime.outbound.refusals");
        fanoutShares = Counter.builder("syncular.realtime.fanout.share.refusals")
                .description("Deltas not sent because their partition had used its fan-out bytes per second on this"
                        + " pod; the connection was woken to catch up by a pull")
                .register(registry);
        stuckCloses = registry.counter("syncular.realtime.outbound.stuck.closes");
        presenceNotifyDrops = registry.counter("syncular.realtime.presence.notify.drops");
        presenceCoalesced = Counter.builder("syncular.realtime.presence.coalesced")
                .description("Presence publishes held past a connection's rate (only the newest per key goes out)")
                .register(registry);
        deltaLatency = Timer.builder("syncular.realtime.delta.latency")
                .description("From a commit's creation to its delta being handed to a socket")
                .publishPercentileHistogram()
                .register(registry);
        failures = new RealtimeFailures(registry);
    }

    /** Failures that are not propagated: logged and counted ({@code syncular_realtime_errors_total{kind}}). */
    RealtimeFailures failures() {
        return failures;
    }

    void delta() {
        deltas.increment();
    }

    /** A delta of a commit created at {@code createdAtMs} goes out now. */
    void deltaLatency(long createdAtMs) {
        deltaLatency.record(Math.max(0, System.currentTimeMillis() - createdAtMs), TimeUnit.MILLISECONDS);
    }

    void wake(WakeReason reason) {
        wakes.get(reason).increment();
    }

    /** A delta not sent because its partition used its share of the pod's fan-out bytes (issue 45). */
    void fanoutShareRefusal() {
        fanoutShares.increment();
    }

    /** A delta not sent because the connection's outbound buffer is over its budget (§8.7). */
    void budgetRefusal() {
        budgetRefusals.increment();
    }

    /** A connection closed for not draining its outbound buffer. */
    void stuckClose() {
        stuckCloses.increment();
    }

    /** A notified commit not read because the pod's fan-out backlog was full: its partition's sockets were woken. */
    void fanoutOverflow() {
        fanoutOverflows.increment();
    }

    /** The cluster's NOTIFY queue usage as just read. */
    void notificationQueueUsage(double usage) {
        notifyQueueUsage.set(usage);
    }

    /** A presence message not sent to the other pods because too many are queued. */
    void presenceNotifyDrop() {
        presenceNotifyDrops.increment();
    }

    /** A presence publish held past its connection's rate ({@code PresenceRate}). */
    void presenceCoalesced() {
        presenceCoalesced.increment();
    }

    /** Connections closed as stuck so far (tests and diagnostics). */
    double stuckCloses() {
        return stuckCloses.count();
    }

    /** Deltas refused for the outbound budget so far. */
    double budgetRefusals() {
        return budgetRefusals.count();
    }

    void listenReconnect() {
        reconnects.increment();
    }
}
