package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Transaction;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.function.Supplier;

/**
 * The database claim of a scheduled job (pruning, the blob sweep, segment expiry) that every pod schedules on
 * the same database: one pod at a time runs it, at most once per interval across the deployment.
 *
 * <p>The claim is a transaction-level advisory lock, {@code pg_try_advisory_xact_lock} on
 * {@code hashtextextended('syncular.job:<pg-schema>:<job>', 0)}, taken by a READ COMMITTED transaction on a
 * pooled connection of its own that stays open for the whole run (it holds no snapshot between statements and
 * writes only at its end, so it holds nothing back). The job's work runs on other connections in its own
 * short transactions. Under the lock, {@code sync_jobs} tells when the job last started and on which pod: a run
 * within the interval is skipped. The transaction commits the new start time when the work ends (failed or
 * not); a pod that dies mid-run loses its connection, so the lock goes with it and the next pod's turn runs.
 */
final class JobLocks {
    private final Pool pool;
    private final String keyPrefix;
    private final String tryLock;
    private final String lastStarted;
    private final String recordRun;

    JobLocks(Pool pool, String pgSchema) {
        this.pool = pool;
        this.keyPrefix = "syncular.job:" + pgSchema + ":";
        String jobs = PgSql.qualified(pgSchema, "sync_jobs");
        tryLock = "SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))";
        lastStarted = "SELECT last_started_at_ms FROM " + jobs + " WHERE name = $1";
        recordRun = "INSERT INTO " + jobs
                + " (name, last_started_at_ms, last_finished_at_ms, ran_by) VALUES ($1, $2, $3, $4)"
                + " ON CONFLICT (name) DO UPDATE SET last_started_at_ms = EXCLUDED.last_started_at_ms,"
                + " last_finished_at_ms = EXCLUDED.last_finished_at_ms, ran_by = EXCLUDED.ran_by";
    }

    /**
     * Runs {@code work} unless another pod holds {@code job} right now or it started less than
     * {@code minIntervalMs} before {@code nowMs}; yields the work's item, or {@code null} when skipped.
     *
     * @param runner the pod's name, recorded with the run
     */
    <T> Uni<T> runExclusively(String job, long minIntervalMs, long nowMs, String runner, Supplier<Uni<T>> work) {
        return pool.getConnection()
                .chain(conn -> conn.begin()
                        .chain(tx -> conn.query(PgSql.READ_COMMITTED)
                                .execute()
                                .chain(() -> conn.preparedQuery(tryLock).execute(Tuple.of(keyPrefix + job)))
                                .chain(locked -> {
                                    if (!Boolean.TRUE.equals(first(locked).getBoolean(0))) {
                                        return Uni.createFrom().<T>nullItem(); // another pod runs it now
                                    }
                                    return conn.preparedQuery(lastStarted)
                                            .execute(Tuple.of(job))
                                            .chain(rs -> {
                                                Row last = first(rs);
                                                if (last != null && nowMs - last.getLong(0) < minIntervalMs) {
                                                    return Uni.createFrom()
                                                            .<T>nullItem(); // another pod ran it within the interval
                                                }
                                                return run(conn, tx, job, nowMs, runner, work);
                                            });
                                })
                                .eventually(() -> tx.rollback().onFailure().recoverWithNull()))
                        .eventually(conn::close));
    }

    /** The work, then its record committed (also after a failure, which is then passed on). */
    private <T> Uni<T> run(
            SqlConnection conn, Transaction tx, String job, long nowMs, String runner, Supplier<Uni<T>> work) {
        return Uni.createFrom()
                .<T>deferred(work::get)
                .onItemOrFailure()
                .transformToUni((item, failure) -> conn.preparedQuery(recordRun)
                        .execute(Tuple.of(job, nowMs, System.currentTimeMillis(), runner))
                        .chain(tx::commit)
                        .chain(() -> failure != null
                                ? Uni.createFrom().<T>failure(failure)
                                : Uni.createFrom().item(item)));
    }
}
