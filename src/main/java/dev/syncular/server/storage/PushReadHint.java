package dev.syncular.server.storage;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a push transaction's work reads first (§2.3, §6.3): the locked idempotency lookup of
 * ({@code clientId}, {@code clientCommitId}) through {@link PushTx#findPushResult} and the rows of
 * {@code rows} (table → row ids) through {@link PushTx#readRows}. Passed to
 * {@link SyncStorage#inPartitionTransaction(String, PushReadHint, java.util.function.Function)} so an
 * implementation may read them ahead, under the partition lock, together with other queued works' reads. A
 * hint is only an announcement: the work still calls {@code findPushResult} / {@code readRows}, and every
 * answer must equal what those calls return without the hint.
 *
 * @param clientId       the commit's clientId
 * @param clientCommitId the commit's clientCommitId
 * @param rows           row ids by table, in the order the work will ask for them (no duplicates needed)
 */
public record PushReadHint(String clientId, String clientCommitId, Map<String, List<String>> rows) {
    public PushReadHint {
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(clientCommitId, "clientCommitId");
        rows = Map.copyOf(rows);
    }
}
