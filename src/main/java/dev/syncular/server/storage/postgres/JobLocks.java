package dev.syncular.server.storage.postgres;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import java.time.Duration;
import java.util.UUID;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * The database claim of a scheduled job (pruning, the blob sweep, segment expiry) that every pod schedules on
 * the same database: one pod at a time runs it, at most once per interval across the deployment.
 *
 * <p>The claim is a lease row in {@code sync_jobs}: one autocommitted statement takes it when nobody holds an
 * unexpired lease and the job's last start is at least the interval back, recording the start, the pod and a
 * fresh owner token with an expiry {@code lease} ahead on the database's clock (so pods' clocks need not
 * agree). While the work runs, the owner renews the expiry every third of {@code lease}, again one statement;
 * the end of the run (failed or not) records its finish and clears the lease. No connection stays open, let
 * alone idle in a transaction, while the job runs: {@code idle_in_transaction_session_timeout} cannot cut a
 * claim and a pruning pass does not hold a pooled connection for its whole length. A pod that dies mid-run
 * stops renewing: once the lease has expired, the next pod's turn takes the job over. A renewal that finds its
 * lease taken over (the pod was cut off from the database longer than the lease) is logged; the run goes on,
 * as the scheduled jobs are idempotent passes.
 */
final class JobLocks {
    private static final Logger LOG = Logger.getLogger(JobLocks.class);
    /** Milliseconds on the database's clock. */
    private static final String DB_NOW_MS = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

    private final Pool pool;
    private final Duration lease;
    private final String claim;
    private final String renew;
    private final String release;

    JobLocks(Pool pool, String pgSchema, Duration lease) {
        this.pool = pool;
        this.lease = lease;
        String jobs = PgSql.qualified(pgSchema, "sync_jobs");
        claim = "INSERT INTO " + jobs
                + " AS j (name, last_started_at_ms, last_finished_at_ms, ran_by, lease_owner, lease_until_ms)"
                + " VALUES ($1, $2, NULL, $3, $4, " + DB_NOW_MS + " + $5)"
                + " ON CONFLICT (name) DO UPDATE SET last_started_at_ms = EXCLUDED.last_started_at_ms,"
                + " last_finished_at_ms = NULL, ran_by = EXCLUDED.ran_by, lease_owner = EXCLUDED.lease_owner,"
                + " lease_until_ms = EXCLUDED.lease_until_ms"
                + " WHERE coalesce(j.lease_until_ms, 0) < " + DB_NOW_MS
                + " AND $2 - j.last_started_at_ms >= $6"
                + " RETURNING 1";
        renew = "UPDATE " + jobs + " SET lease_until_ms = " + DB_NOW_MS + " + $3"
                + " WHERE name = $1 AND lease_owner = $2";
        release = "UPDATE " + jobs + " SET last_finished_at_ms = $3, lease_owner = NULL, lease_until_ms = NULL"
                + " WHERE name = $1 AND lease_owner = $2";
    }

    /**
     * Runs {@code work} unless another pod holds {@code job} right now or it started less than
     * {@code minIntervalMs} before {@code nowMs}; yields the work's item, or {@code null} when skipped.
     *
     * @param runner the pod's name, recorded with the run
     */
    <T> Uni<T> runExclusively(String job, long minIntervalMs, long nowMs, String runner, Supplier<Uni<T>> work) {
        String owner = runner + "/" + UUID.randomUUID();
        long leaseMs = lease.toMillis();
        return pool.preparedQuery(claim)
                .execute(Tuple.of(job, nowMs, runner, owner, leaseMs, minIntervalMs))
                .chain(claimed -> claimed.rowCount() == 0
                        ? Uni.createFrom().<T>nullItem() // held by another pod, or run within the interval
                        : run(job, owner, leaseMs, work));
    }

    /** The work with its lease renewed meanwhile, then the run recorded and the lease cleared (also after a failure). */
    private <T> Uni<T> run(String job, String owner, long leaseMs, Supplier<Uni<T>> work) {
        Cancellable renewals = Multi.createFrom()
                .ticks()
                .every(Duration.ofMillis(Math.max(1, leaseMs / 3)))
                .onItem()
                .transformToUniAndConcatenate(tick -> pool.preparedQuery(renew)
                        .execute(Tuple.of(job, owner, leaseMs))
                        .onItem()
                        .invoke(rs -> lost(job, rs))
                        .onFailure()
                        .recoverWithItem(failure -> {
                            LOG.warnf("job %s: renewing its lease failed (%s)", job, failure.toString());
                            return null;
                        }))
                .subscribe()
                .with(rs -> {}, failure -> LOG.warnf("job %s: lease renewals stopped (%s)", job, failure.toString()));
        return Uni.createFrom()
                .<T>deferred(work::get)
                .onItemOrFailure()
                .transformToUni((item, failure) -> {
                    renewals.cancel();
                    return pool.preparedQuery(release)
                            .execute(Tuple.of(job, owner, System.currentTimeMillis()))
                            .onFailure()
                            .recoverWithItem(releaseFailure -> {
                                // the lease then expires by itself
                                LOG.warnf("job %s: releasing its lease failed (%s)", job, releaseFailure.toString());
                                return null;
                            })
                            .chain(() -> failure != null
                                    ? Uni.createFrom().<T>failure(failure)
                                    : Uni.createFrom().item(item));
                })
                .onCancellation()
                .invoke(renewals::cancel);
    }

    private static void lost(String job, RowSet<?> renewed) {
        if (renewed.rowCount() == 0) {
            LOG.warnf("job %s: its lease expired and was taken over by another pod while it ran", job);
        }
    }
}
