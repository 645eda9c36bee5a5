package dev.syncular.server.storage;

import io.smallrye.mutiny.Uni;
import java.util.function.Supplier;

/** Scheduled jobs claimed across every process sharing the storage: one pod at a time, at most once per interval. */
public interface ExclusiveJobs {

    /**
     * Runs a scheduled job's {@code work} on one pod at a time and at most once per {@code minIntervalMs} across
     * every process sharing this storage; yields its item, or {@code null} when skipped (another pod runs it now,
     * or ran it within the interval). {@code work} yields a non-null item.
     *
     * @param runner the pod's name, recorded with the claim
     */
    <T> Uni<T> runExclusively(String job, long minIntervalMs, long nowMs, String runner, Supplier<Uni<T>> work);
}
