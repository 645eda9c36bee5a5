package dev.syncular.server.storage;

import java.util.Map;

/**
 * The load of one partition (a tenant) over the last minute: as one pod published it, or summed over the pods that
 * published recently ({@link TenantLoadStorage}).
 *
 * @param partition      the partition
 * @param databaseNanos  time its admitted sync rounds spent, entry read to last statement (the pods' proxy of its
 *                       database time)
 * @param committedBytes bytes of its pushed operations that were applied
 * @param fanoutBytes    bytes of realtime deltas (§8.2) written to its sockets
 * @param refusals       refusals its requests received, by reason ({@code actor_rounds}, {@code queue_full}, …)
 * @param pods           how many pods' figures are summed here (1 for one pod's row)
 */
public record TenantLoadRow(
        String partition,
        long databaseNanos,
        long committedBytes,
        long fanoutBytes,
        Map<String, Long> refusals,
        int pods) {
    public TenantLoadRow {
        refusals = Map.copyOf(refusals);
    }

    /** Every refusal, whatever its reason. */
    public long refusalCount() {
        long n = 0;
        for (long c : refusals.values()) {
            n += c;
        }
        return n;
    }
}
