package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;

import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.RealtimeSignals;
import dev.syncular.server.storage.StorageException;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The partition registry (§2.1): {@code sync_partitions}, one row per partition with its opaque random
 * {@code logEpoch}, {@code maxCommitSeq}, {@code horizonSeq} (§4.6) and created/last-seen times — also the
 * per-partition lock row every partition-scoped write takes ({@link #lockSql}, §6.4). Registration, the
 * last-seen touch (written at most every {@link #LAST_SEEN_REFRESH_MS}, merged in memory in between) and the
 * backup-restore log-epoch rotation (§2.1), which deletes the partition's client cursor records (§4.5).
 */
final class PartitionRegistry {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String PARTITION_COLS =
            "partition_id, log_epoch, max_commit_seq, horizon_seq, created_at_ms, last_seen_at_ms";

    /**
     * How stale the stored {@code last_seen_at_ms} may get before a touch writes it (in between, touches are
     * merged in {@link #seenOverlay} and reported by this instance's reads).
     */
    static final long LAST_SEEN_REFRESH_MS = 60_000L;

    private static final int MAX_OVERLAY = 100_000;

    private final Pool pool;
    /** Per partition: the newest touch time not yet written to {@code sync_partitions.last_seen_at_ms}. */
    private final ConcurrentHashMap<String, Long> seenOverlay = new ConcurrentHashMap<>();

    private final String selectPartition;
    /** The partition row with its row lock ({@code $1} partition): the first statement of every partition transaction. */
    final String lockSql;

    private final String refreshLastSeen;
    private final String insertPartition;
    private final String listPartitions;
    private final String listPartitionsPage;
    private final String rotateLogEpoch;
    private final String deleteClients;

    PartitionRegistry(Pool pool, String pgSchema) {
        this.pool = pool;
        String partitions = PgSql.qualified(pgSchema, "sync_partitions");
        selectPartition = "SELECT " + PARTITION_COLS + " FROM " + partitions + " WHERE partition_id = $1";
        lockSql = selectPartition + " FOR UPDATE";
        refreshLastSeen = "UPDATE " + partitions + " AS p SET last_seen_at_ms ="
                + " GREATEST(p.last_seen_at_ms, $2) WHERE p.partition_id = (SELECT partition_id FROM "
                + partitions + " WHERE partition_id = $1 FOR UPDATE SKIP LOCKED)"
                + " RETURNING " + PARTITION_COLS;
        insertPartition = "INSERT INTO " + partitions + " AS p (" + PARTITION_COLS + ")"
                + " VALUES ($1, $2, 0, 0, $3, $3) ON CONFLICT (partition_id) DO UPDATE"
                + " SET last_seen_at_ms = GREATEST(p.last_seen_at_ms, EXCLUDED.last_seen_at_ms)"
                + " RETURNING " + PARTITION_COLS;
        listPartitions = "SELECT " + PARTITION_COLS + " FROM " + partitions + " ORDER BY partition_id COLLATE \"C\"";
        listPartitionsPage = "SELECT " + PARTITION_COLS + " FROM " + partitions
                + " WHERE $1::text IS NULL OR partition_id COLLATE \"C\" > $1 ORDER BY partition_id COLLATE \"C\" LIMIT $2";
        // §2.1 restore rotation; the NOTIFY (delivered at commit) fences every pod's realtime sessions (§8.3)
        rotateLogEpoch = "WITH r AS (UPDATE " + partitions + " SET log_epoch = $2 WHERE partition_id = $1 RETURNING "
                + PARTITION_COLS + "), n AS (SELECT pg_notify("
                + PgSql.lit(CommitAppend.notificationChannel(pgSchema))
                + ", r.partition_id || ':" + RealtimeSignals.EPOCH_NOTIFICATION
                + "') FROM r) SELECT r.*, (SELECT count(*) FROM n) FROM r";
        deleteClients = "DELETE FROM " + PgSql.qualified(pgSchema, "sync_clients") + " WHERE partition_id = $1";
    }

    static String newLogEpoch() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }

    /** {@code state} with this instance's unwritten touches merged into its last-seen time. */
    PartitionState withOverlay(PartitionState state) {
        if (state == null) {
            return null;
        }
        Long seen = seenOverlay.get(state.partition());
        return seen == null || seen <= state.lastSeenAtMs()
                ? state
                : new PartitionState(
                        state.partition(),
                        state.logEpoch(),
                        state.maxCommitSeq(),
                        state.horizonSeq(),
                        state.createdAtMs(),
                        seen);
    }

    /**
     * A plain read in the common case: the partition row is inserted only when missing, and its last-seen
     * time is written at most every {@link #LAST_SEEN_REFRESH_MS} (without ever waiting for the partition
     * row lock a push holds: {@code SKIP LOCKED}); touches in between are kept in memory and merged into
     * this instance's partition reads.
     */
    Uni<PartitionState> touchPartition(String partition, long nowMs) {
        return pool.preparedQuery(selectPartition).execute(Tuple.of(partition)).chain(rs -> {
            Row r = first(rs);
            return r == null ? insertPartition(partition, nowMs) : touched(partitionState(r), nowMs);
        });
    }

    /** The touch of a registered partition whose stored row is {@code stored}; see {@link #touchPartition}. */
    Uni<PartitionState> touched(PartitionState stored, long nowMs) {
        String partition = stored.partition();
        PartitionState seen = withOverlay(stored);
        if (nowMs <= seen.lastSeenAtMs()) {
            return Uni.createFrom().item(seen);
        }
        if (nowMs - stored.lastSeenAtMs() < LAST_SEEN_REFRESH_MS
                && (seenOverlay.size() < MAX_OVERLAY || seenOverlay.containsKey(partition))) {
            seenOverlay.merge(partition, nowMs, Math::max);
            return Uni.createFrom().item(withOverlay(stored));
        }
        return pool.preparedQuery(refreshLastSeen)
                .execute(Tuple.of(partition, nowMs))
                .map(us -> {
                    Row u = first(us);
                    if (u == null) {
                        // a push holds the row: keep the touch in memory, a later one writes it
                        seenOverlay.merge(partition, nowMs, Math::max);
                        return withOverlay(stored);
                    }
                    PartitionState written = partitionState(u);
                    seenOverlay.computeIfPresent(partition, (k, v) -> v <= written.lastSeenAtMs() ? null : v);
                    return withOverlay(written);
                });
    }

    Uni<PartitionState> insertPartition(String partition, long nowMs) {
        return pool.preparedQuery(insertPartition)
                .execute(Tuple.of(partition, newLogEpoch(), nowMs))
                .map(rs -> withOverlay(partitionState(first(rs))));
    }

    Uni<PartitionState> readPartition(String partition) {
        return pool.preparedQuery(selectPartition).execute(Tuple.of(partition)).map(rs -> {
            Row r = first(rs);
            return r == null ? null : withOverlay(partitionState(r));
        });
    }

    Uni<List<PartitionState>> listPartitions() {
        return pool.query(listPartitions).execute().map(this::partitionStates);
    }

    Uni<List<PartitionState>> listPartitions(String afterPartition, int limit) {
        return pool.preparedQuery(listPartitionsPage)
                .execute(Tuple.of(afterPartition, limit))
                .map(this::partitionStates);
    }

    private List<PartitionState> partitionStates(RowSet<Row> rs) {
        List<PartitionState> out = new ArrayList<>();
        for (Row r : rs) {
            out.add(withOverlay(partitionState(r)));
        }
        return out;
    }

    Uni<PartitionState> rotateLogEpoch(String partition) {
        return PgSql.readCommitted(
                pool,
                conn -> conn.preparedQuery(rotateLogEpoch)
                        .execute(Tuple.of(partition, newLogEpoch()))
                        .chain(rs -> {
                            Row r = first(rs);
                            if (r == null) {
                                return Uni.createFrom().failure(unknownPartition());
                            }
                            PartitionState state = withOverlay(partitionState(r));
                            return conn.preparedQuery(deleteClients)
                                    .execute(Tuple.of(partition))
                                    .replaceWith(state);
                        }));
    }

    static PartitionState partitionState(Row r) {
        return new PartitionState(
                r.getString(0), r.getString(1), r.getLong(2), r.getLong(3), r.getLong(4), r.getLong(5));
    }

    static StorageException unknownPartition() {
        return new StorageException(StorageException.UNKNOWN_PARTITION, "partition is not registered", Map.of());
    }

    /** The partition row under its row lock, in {@code conn}'s transaction; fails for an unregistered partition. */
    Uni<PartitionState> lockPartition(SqlConnection conn, String partition) {
        return conn.preparedQuery(lockSql).execute(Tuple.of(partition)).map(rs -> {
            Row r = first(rs);
            if (r == null) {
                throw unknownPartition();
            }
            return partitionState(r);
        });
    }
}
