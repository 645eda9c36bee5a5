package dev.syncular.server.storage;

import dev.syncular.server.schema.CompiledSchema;
import io.smallrye.mutiny.Uni;

/** The storage's part of a schema change's plan (§2.4, §9): reads only, under no lock a push waits for. */
public interface SchemaPlanReads {
    /**
     * What ensuring {@code next} would do on this storage ({@link StoragePlan}), from the same decision start-up
     * takes, with the client records updated at or after {@code clientsSinceMs}.
     */
    Uni<StoragePlan> planSchema(CompiledSchema next, long clientsSinceMs);
}
