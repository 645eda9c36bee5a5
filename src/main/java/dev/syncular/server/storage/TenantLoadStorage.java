package dev.syncular.server.storage;

import io.smallrye.mutiny.Uni;
import java.util.List;

/**
 * The loudest tenants of every pod, in the storage every pod shares: each pod periodically replaces its own rows
 * (its current top partitions, written with the time it wrote them), and any pod reads the rows of the pods heard
 * from recently, summed per partition. Rows of a pod that stopped publishing are ignored once older than the
 * reader's horizon and deleted by the next publication of any pod. Non-blocking; nothing is cached.
 */
public interface TenantLoadStorage {

    /**
     * Replaces every row of {@code podId} with {@code rows}, written at {@code nowMs}, and deletes the rows of any pod
     * written before {@code staleBeforeMs}; in one transaction, so a reader sees the pod's previous rows or these.
     */
    Uni<Void> publishTenantLoad(String podId, long nowMs, long staleBeforeMs, List<TenantLoadRow> rows);

    /**
     * The rows written at or after {@code liveSinceMs}, summed per partition over the pods that wrote them (each
     * figure, and each refusal reason, summed; {@link TenantLoadRow#pods} says how many pods), in no order.
     */
    Uni<List<TenantLoadRow>> readTenantLoad(long liveSinceMs);

    /**
     * How many pods published at or after {@code liveSinceMs} (each publication counts its pod, with or without rows):
     * the pods a deployment-wide rate is shared among.
     */
    Uni<Integer> countLivePods(long liveSinceMs);

    /** Deletes every row of {@code podId}: a pod that stops leaves the live pods at once. */
    Uni<Void> withdrawTenantLoad(String podId);
}
