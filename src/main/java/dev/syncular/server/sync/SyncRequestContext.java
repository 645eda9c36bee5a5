package dev.syncular.server.sync;

import java.util.Objects;

/** What host authentication established for one request (§1.1): the actor and its partition. */
public record SyncRequestContext(String actorId, String partition) {
    public SyncRequestContext {
        Objects.requireNonNull(actorId, "actorId");
        Objects.requireNonNull(partition, "partition");
    }
}
