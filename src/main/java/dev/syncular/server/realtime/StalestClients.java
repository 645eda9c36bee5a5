package dev.syncular.server.realtime;

import dev.syncular.server.observability.SloConfig;
import dev.syncular.server.observability.TopGauges;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.HashMap;
import java.util.Map;

/**
 * This pod's stalest connected clients now ({@link Stalest}: the top {@code syncular.slo.stalest} clients and
 * partitions by the age of the oldest commit they are owed, with what holds them), for the admin API and the
 * console, and as gauges refreshed every {@code syncular.slo.refresh-interval} on a worker thread — the one place a
 * client id is a tag, bounded like the loudest tenants:
 *
 * <ul>
 *   <li>{@code syncular.client.stalest.seconds} {@code {partition, client, reason}}: the N stalest clients' lag;
 *   <li>{@code syncular.partition.stalest.seconds} {@code {partition, reason}}: the N stalest partitions' lag (their
 *       stalest client's);
 *   <li>{@code syncular.client.stale} {@code {reason}}: the connected clients behind by more than
 *       {@code syncular.slo.visibility}, by reason (every reason, 0 or more).
 * </ul>
 *
 * <p>Clients that are away have no socket on any pod and are never listed: their lag is their absence
 * ({@code observability.VisibilityLag} keeps their pulls apart).
 */
@Startup // syncular.client.stale exported from the start, at zero
@ApplicationScoped
public class StalestClients {
    static final String CLIENTS = "syncular.client.stalest.seconds";
    static final String PARTITIONS = "syncular.partition.stalest.seconds";
    static final String STALE = "syncular.client.stale";
    private static final String STALE_DESCRIPTION =
            "Connected clients of this pod behind by more than syncular.slo.visibility, by what holds them";

    private final PodRealtime realtime;
    private final int n;
    private final long objectiveMs;
    private final TopGauges gauges;

    @Inject
    public StalestClients(PodRealtime realtime, SloConfig slo, MeterRegistry registry) {
        this.realtime = realtime;
        this.n = slo.stalest();
        this.objectiveMs = slo.visibility().toMillis();
        this.gauges = new TopGauges(registry);
        Map<Tags, Double> zero = new HashMap<>();
        for (Staleness r : Staleness.values()) {
            zero.put(Tags.of("reason", r.wire), 0.0);
        }
        gauges.export(STALE, STALE_DESCRIPTION, zero);
    }

    /** The stalest clients and partitions of this pod now. */
    public Stalest now() {
        return realtime.hub().stalest(n, objectiveMs, System.currentTimeMillis());
    }

    /** {@code syncular.slo.visibility} in milliseconds. */
    public long objectiveMs() {
        return objectiveMs;
    }

    /** {@code syncular.slo.stalest}. */
    public int count() {
        return n;
    }

    /** The name of this pod's hub ({@code application_name} of its LISTEN connection). */
    public String podId() {
        return realtime.hub().podId();
    }

    @Scheduled(
            every = "${syncular.slo.refresh-interval:10s}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    synchronized void refresh() {
        Stalest s = now();
        Map<Tags, Double> clients = new HashMap<>();
        for (Stalest.StaleClient c : s.clients()) {
            clients.put(
                    Tags.of("partition", c.partition(), "client", c.clientId(), "reason", c.reason().wire),
                    c.lagMs() / 1e3);
        }
        Map<Tags, Double> partitions = new HashMap<>();
        for (Stalest.StalePartition p : s.partitions()) {
            partitions.put(Tags.of("partition", p.partition(), "reason", p.reason().wire), p.lagMs() / 1e3);
        }
        Map<Tags, Double> stale = new HashMap<>();
        s.overObjective().forEach((reason, count) -> stale.put(Tags.of("reason", reason.wire), (double) count));
        gauges.export(CLIENTS, "Lag of this pod's stalest connected clients (seconds)", clients);
        gauges.export(
                PARTITIONS,
                "Lag of the stalest connected client of this pod's stalest partitions (seconds)",
                partitions);
        gauges.export(STALE, STALE_DESCRIPTION, stale);
    }
}
