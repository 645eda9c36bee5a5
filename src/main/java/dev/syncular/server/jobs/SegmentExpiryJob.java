package dev.syncular.server.jobs;

import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentsConfig;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import org.jboss.logging.Logger;

/**
 * Forgets segments whose every publication expired (§5.1: segments are cache entries, default TTL 24 h) on
 * {@code syncular.segments.sweep-interval}, never two passes at once: on one pod of the deployment per interval
 * ({@link JobClaims}). On S3 this is the store's one LISTing operation; a bucket lifecycle rule remains the
 * backstop (docs/SEGMENTS.md).
 */
@ApplicationScoped
public class SegmentExpiryJob {
    private static final Logger LOG = Logger.getLogger(SegmentExpiryJob.class);

    private final SegmentStore segments;
    private final JobClaims claims;
    private final Duration interval;

    @Inject
    public SegmentExpiryJob(SegmentStore segments, JobClaims claims, SegmentsConfig config) {
        this.segments = segments;
        this.claims = claims;
        this.interval = config.sweepInterval();
    }

    @Scheduled(
            every = "${syncular.segments.sweep-interval:1h}",
            delayed = "${syncular.segments.sweep-interval:1h}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> run() {
        return claims.run("segment-expiry", interval, () -> segments.deleteExpired(System.currentTimeMillis()))
                .invoke(n -> {
                    if (n != null && n > 0) {
                        LOG.infof("forgot %d expired segments", n);
                    }
                })
                .onFailure()
                .invoke(e -> LOG.warn("segment expiry pass failed", e))
                .onFailure()
                .recoverWithNull()
                .replaceWithVoid();
    }
}
