package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.CommitQuery;
import dev.syncular.server.storage.CommitWindow;
import dev.syncular.server.storage.PullReads;
import dev.syncular.server.storage.SnapshotRows;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * One hot standby of {@link PostgresReadReplicas}: its pool, its pull reads, and whether it is in rotation. Its
 * replay lag is measured by {@link #check}: {@code 0} while its replay position has reached the primary's WAL
 * position read just before, else the shorter of the time since it was first seen behind and the age of its last
 * replayed transaction. Out of rotation when the lag passes the limit or a check or read fails; back in by the
 * next check that succeeds within the limit.
 */
final class StandbyReplica {
    private static final Logger LOG = Logger.getLogger(StandbyReplica.class);
    private static final String REPLAY =
            "SELECT pg_is_in_recovery(), pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::bigint,"
                    + " extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8";

    /** {@code host:port/db}: the metrics tag and log name (never the URL, which may carry a password). */
    final String name;

    final Pool pool;
    private final PullReads reads;
    private final String partitionSeqSql;
    private volatile boolean inRotation = false;
    private volatile double lagSeconds = 0;
    /** The replayed WAL position at the last check, as bytes from {@code 0/0}; {@code -1} before one succeeded. */
    private volatile long replayLsn = -1;

    private long behindSinceMs = -1;
    /** Whether the first check's verdict was logged (a replica that never comes into rotation is named once). */
    private volatile boolean reported;

    StandbyReplica(String name, Pool pool, PullReads reads, String partitionsTable) {
        this.name = name;
        this.pool = pool;
        this.reads = reads;
        this.partitionSeqSql = "SELECT max_commit_seq FROM " + partitionsTable + " WHERE partition_id = $1";
    }

    boolean inRotation() {
        return inRotation;
    }

    double lagSeconds() {
        return lagSeconds;
    }

    long replayLsn() {
        return replayLsn;
    }

    /** Takes the replica out of rotation until a check finds it within the limit again. */
    void failed(Throwable cause) {
        rotation(false, "failed: " + cause);
    }

    private void rotation(boolean in, String why) {
        if (in != inRotation || !reported) {
            if (in) {
                LOG.infof("read replica %s in rotation", name);
            } else {
                LOG.warnf("read replica %s out of rotation (%s)", name, why);
            }
            reported = true;
        }
        inRotation = in;
    }

    /**
     * The partition's commit sequence in the replica's own snapshot ({@code sync_partitions.max_commit_seq}, written
     * in the same transaction as the commits it counts), {@code -1} when the replica has no row for it yet.
     */
    Uni<Long> partitionSeq(String partition) {
        return pool.preparedQuery(partitionSeqSql).execute(Tuple.of(partition)).map(rs -> {
            for (Row r : rs) {
                return r.getLong(0);
            }
            return -1L;
        });
    }

    /**
     * The replica's pull reads; a read that fails on the replica is taken by {@code primary} (which holds every
     * commit the replica does: it answers the same window and pin) and the replica leaves rotation.
     */
    PullReads reads(PullReads primary) {
        return new PullReads() {
            @Override
            public Uni<CommitWindow> readCommits(String partition, CommitQuery query) {
                return fallback(reads.readCommits(partition, query), () -> primary.readCommits(partition, query));
            }

            @Override
            public Uni<Long> readScopePin(
                    String partition, String table, String variable, Set<String> values, long upToSeq) {
                return fallback(
                        reads.readScopePin(partition, table, variable, values, upToSeq),
                        () -> primary.readScopePin(partition, table, variable, values, upToSeq));
            }

            @Override
            public Uni<SnapshotRows> readSnapshotPage(
                    String partition,
                    String table,
                    Map<String, Set<String>> scopes,
                    String afterRowId,
                    int limit,
                    long maxBytes) {
                return fallback(
                        reads.readSnapshotPage(partition, table, scopes, afterRowId, limit, maxBytes),
                        () -> primary.readSnapshotPage(partition, table, scopes, afterRowId, limit, maxBytes));
            }
        };
    }

    private <T> Uni<T> fallback(Uni<T> onReplica, Supplier<Uni<T>> onPrimary) {
        return onReplica.onFailure().recoverWithUni(e -> {
            failed(e);
            return onPrimary.get();
        });
    }

    /**
     * One lag check against {@code primaryLsn} (the primary's {@code pg_current_wal_insert_lsn()} read just before, as
     * bytes from {@code 0/0}): the replica must be a standby, and within {@code maxLagMs}.
     */
    Uni<Void> check(long primaryLsn, long nowMs, long maxLagMs) {
        return pool.query(REPLAY)
                .execute()
                .invoke(rs -> {
                    Row r = PgSql.first(rs);
                    Long replay = r.getLong(1);
                    Double age = r.getDouble(2);
                    if (!Boolean.TRUE.equals(r.getBoolean(0)) || replay == null) {
                        // not a standby (or one that never replayed): never in rotation
                        lagSeconds = Double.NaN;
                        rotation(false, "not a hot standby");
                        return;
                    }
                    replayLsn = replay;
                    double lag;
                    synchronized (this) {
                        if (replay >= primaryLsn) {
                            behindSinceMs = -1;
                            lag = 0;
                        } else {
                            if (behindSinceMs < 0) {
                                behindSinceMs = nowMs;
                            }
                            double behind = (nowMs - behindSinceMs) / 1000.0;
                            lag = age == null ? behind : Math.max(0, Math.min(behind, age));
                        }
                    }
                    lagSeconds = lag;
                    rotation(lag * 1000.0 <= maxLagMs, "replay lag " + lag + " s");
                })
                .onFailure()
                .invoke(this::failed)
                .onFailure()
                .recoverWithNull()
                .replaceWithVoid();
    }
}
