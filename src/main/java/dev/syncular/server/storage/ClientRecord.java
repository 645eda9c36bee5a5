package dev.syncular.server.storage;

import java.util.Objects;

/**
 * A client cursor record per (partition, clientId) (§4.5): the minimum {@code nextCursor} across the
 * request's active subscriptions with its update time; input to the retention watermark (§4.6).
 *
 * @param partition         partition
 * @param clientId          client id
 * @param actorId           the actor the client id is bound to (§1.5)
 * @param cursor            min nextCursor across active subscriptions (−1 when none is established)
 * @param updatedAtMs       last update time
 * @param subscriptionsJson persisted registration list as a JSON document (opaque to storage), or {@code null}
 * @param wireVersion       the wire version the client last spoke, or {@code null}
 * @param schemaVersion     the schema version ({@code REQ_HEADER}, §9) the client last sent, or {@code null} for a record
 *                          written before it was recorded
 */
public record ClientRecord(
        String partition,
        String clientId,
        String actorId,
        long cursor,
        long updatedAtMs,
        String subscriptionsJson,
        Integer wireVersion,
        Integer schemaVersion) {
    public ClientRecord {
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(actorId, "actorId");
    }
}
