package dev.syncular.server.jobs;

import dev.syncular.server.storage.ExclusiveJobs;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * The database claim of the scheduled jobs ({@link PruningJob}, {@link BlobSweepJob}, {@link SegmentExpiryJob}):
 * every pod schedules them, one pod at a time runs each, at most once per its interval across the deployment
 * ({@link ExclusiveJobs#runExclusively}: a lease row per job in {@code sync_jobs}, renewed while the job runs,
 * with the job's last start). Nothing about a job lives in a pod's memory.
 */
@ApplicationScoped
public class JobClaims {
    private static final Logger LOG = Logger.getLogger(JobClaims.class);
    /** A run is skipped when another pod started the job within this share of the interval (timer jitter). */
    static final double INTERVAL_SHARE = 0.9;

    private final ExclusiveJobs storage;
    private final String pod;

    @Inject
    public JobClaims(ExclusiveJobs storage) {
        this.storage = storage;
        String host = System.getenv("HOSTNAME");
        this.pod = (host == null || host.isBlank() ? "pod" : host) + "/"
                + ProcessHandle.current().pid();
    }

    /**
     * Runs {@code work} unless another pod runs job {@code name} now or started it within its interval
     * ({@code every}, the job's configured schedule interval); yields the work's item, {@code null} when skipped.
     */
    public <T> Uni<T> run(String name, Duration every, Supplier<Uni<T>> work) {
        long minIntervalMs = (long) (every.toMillis() * INTERVAL_SHARE);
        return storage.runExclusively(name, minIntervalMs, System.currentTimeMillis(), pod, work)
                .invoke(item -> {
                    if (item == null) {
                        LOG.debugf("job %s skipped: another pod runs it or ran it within its interval", name);
                    }
                });
    }
}
