package dev.syncular.server.observability;

import dev.syncular.server.storage.TenantLoadRow;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The loudest tenants of this pod as gauges, the one place a partition id is a tag: each metric carries only this
 * pod's current top N ({@code syncular.tenants.top-n}) of the last minute ({@link TenantLoad}), so its series are at
 * most N whatever the number of partitions; a partition that drops out of the top N loses its series at the next
 * refresh ({@link TenantLoadJob}, every {@code syncular.tenants.publish-interval}).
 *
 * <ul>
 *   <li>{@code syncular.tenant.top.database.seconds} {@code {partition}}: database time of the last minute;
 *   <li>{@code syncular.tenant.top.committed.bytes} {@code {partition}}: bytes of applied pushed operations;
 *   <li>{@code syncular.tenant.top.fanout.bytes} {@code {partition}}: realtime delta bytes written to its sockets;
 *   <li>{@code syncular.tenant.top.refusals} {@code {partition, reason}}: the N largest refusal counts by partition
 *       and reason.
 * </ul>
 */
@ApplicationScoped
public class TenantMetrics {
    static final String DATABASE = "syncular.tenant.top.database.seconds";
    static final String COMMITTED = "syncular.tenant.top.committed.bytes";
    static final String FANOUT = "syncular.tenant.top.fanout.bytes";
    static final String REFUSALS = "syncular.tenant.top.refusals";

    private final TopGauges gauges;

    @Inject
    public TenantMetrics(MeterRegistry registry) {
        this.gauges = new TopGauges(registry);
    }

    /** Exports the top {@code n} of {@code window} (this pod's figures of the last minute), and nothing else. */
    public synchronized void refresh(List<TenantLoadRow> window, int n) {
        Map<Tags, Double> database = new HashMap<>();
        for (TenantLoadRow r : TenantLoad.ranked(window, TenantLoadRow::databaseNanos, n)) {
            database.put(Tags.of("partition", r.partition()), r.databaseNanos() / 1e9);
        }
        Map<Tags, Double> committed = new HashMap<>();
        for (TenantLoadRow r : TenantLoad.ranked(window, TenantLoadRow::committedBytes, n)) {
            committed.put(Tags.of("partition", r.partition()), (double) r.committedBytes());
        }
        Map<Tags, Double> fanout = new HashMap<>();
        for (TenantLoadRow r : TenantLoad.ranked(window, TenantLoadRow::fanoutBytes, n)) {
            fanout.put(Tags.of("partition", r.partition()), (double) r.fanoutBytes());
        }
        record Refused(String partition, String reason, long count) {}
        List<Refused> refused = new ArrayList<>();
        for (TenantLoadRow r : window) {
            r.refusals().forEach((reason, count) -> refused.add(new Refused(r.partition(), reason, count)));
        }
        refused.sort(Comparator.comparingLong(Refused::count)
                .reversed()
                .thenComparing(Refused::partition)
                .thenComparing(Refused::reason));
        Map<Tags, Double> refusals = new HashMap<>();
        for (Refused r : refused.subList(0, Math.min(n, refused.size()))) {
            refusals.put(Tags.of("partition", r.partition(), "reason", r.reason()), (double) r.count());
        }
        gauges.export(DATABASE, "Database time of this pod's top partitions over the last minute (seconds)", database);
        gauges.export(
                COMMITTED, "Bytes of applied pushed operations of this pod's top partitions, last minute", committed);
        gauges.export(
                FANOUT,
                "Realtime delta bytes written to the sockets of this pod's top partitions, last minute",
                fanout);
        gauges.export(REFUSALS, "Refusals of this pod's top partitions by reason, last minute", refusals);
    }
}
