package dev.syncular.server.jobs;

import dev.syncular.server.blobs.BlobsConfig;
import dev.syncular.server.sync.BlobService;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Runs the §5.9.2 orphan sweep ({@link BlobService#sweepOrphans}) every {@code syncular.blobs.sweep-interval}
 * ({@code off} disables it), never two at once: on one pod of the deployment per interval ({@link JobClaims}).
 * The grace period {@code syncular.blobs.orphan-grace} is what keeps a just-uploaded blob whose referencing push
 * has not arrived yet.
 */
@ApplicationScoped
public class BlobSweepJob {
    private static final Logger LOG = Logger.getLogger(BlobSweepJob.class);

    private final BlobService blobs;
    private final JobClaims claims;
    private final Duration interval;

    @Inject
    public BlobSweepJob(BlobService blobs, JobClaims claims, BlobsConfig config) {
        this.blobs = blobs;
        this.claims = claims;
        this.interval = config.sweepInterval();
    }

    @Scheduled(
            every = "${syncular.blobs.sweep-interval:1h}",
            delay = 5,
            delayUnit = TimeUnit.MINUTES,
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> run() {
        return claims.run("blob-sweep", interval, () -> blobs.sweepOrphans(System.currentTimeMillis()))
                .invoke(r -> {
                    if (r != null && r.deleted() > 0) {
                        LOG.infof(
                                "blob sweep deleted %d orphans (%d candidates, %d referenced)",
                                r.deleted(), r.candidates(), r.referenced());
                    }
                })
                .onFailure()
                .invoke(e -> LOG.warn("blob sweep failed", e))
                .onFailure()
                .recoverWithNull()
                .replaceWithVoid();
    }
}
