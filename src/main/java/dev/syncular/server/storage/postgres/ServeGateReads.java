package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.storage.CheckpointState;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.GateCheck;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.RequestEntry;
import dev.syncular.server.storage.ServeGate;
import dev.syncular.server.storage.SocketEntry;
import dev.syncular.server.storage.StoredCheckpoint;
import dev.syncular.server.wire.Json;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;

/**
 * The serve gate (§2.4 storage readiness and backfill checkpoints, RFC 0007 of the seed) and the request
 * entry and exit reads built on it: each one statement, one snapshot — the stored schema-version marker, the
 * partition's log epoch (§2.1) and horizon (§4.6), its non-activated checkpoints, and for the entry the
 * partition row and the client cursor record (§4.5); the exit upserts the record in the same statement.
 */
final class ServeGateReads {
    private final Pool pool;
    private final PartitionRegistry registry;
    private final String schemaTable;
    private final String partitionsTable;
    private final String checkpointsTable;

    private final String serveGate;
    /** {@link #serveGateSql} over every schema version ({@code $1} partition): the push transaction's gate read. */
    final String serveGateAllVersions;

    private final String enterRequest;
    /**
     * The request exit in one statement: the client record upsert as a data-modifying CTE ({@code $3..$9},
     * the record's columns in table order) and the {@link #serveGateSql} read
     * ({@code $1} partition, {@code $2} running version). The gate reads no {@code sync_clients} row, so
     * the CTE's write being invisible to the statement's own snapshot changes nothing; that snapshot is
     * taken when the statement starts, after every earlier statement of the request.
     */
    private final String finishRequest;
    /** {@link #readSocketEntry}. */
    private final String socketEntry;

    ServeGateReads(Pool pool, String pgSchema, PartitionRegistry registry) {
        this.pool = pool;
        this.registry = registry;
        schemaTable = PgSql.qualified(pgSchema, "sync_schema");
        partitionsTable = PgSql.qualified(pgSchema, "sync_partitions");
        checkpointsTable = PgSql.qualified(pgSchema, "sync_backfill_checkpoints");
        String clients = PgSql.qualified(pgSchema, "sync_clients");
        serveGate = serveGateSql(true);
        serveGateAllVersions = serveGateSql(false);
        enterRequest = "SELECT COALESCE((SELECT schema_version FROM " + schemaTable + " WHERE id = 1), 0),"
                + " p.log_epoch, " + pendingCheckpointsSql(true) + ", p.horizon_seq,"
                + " p.partition_id, p.max_commit_seq, p.created_at_ms, p.last_seen_at_ms,"
                + " cl.actor_id, cl.cursor, cl.updated_at_ms, cl.subscriptions::text, cl.wire_version,"
                + " cl.schema_version"
                + " FROM (VALUES (1)) AS one(x) LEFT JOIN " + partitionsTable + " p ON p.partition_id = $1"
                + " LEFT JOIN " + clients + " cl ON cl.partition_id = $1 AND cl.client_id = $3";
        finishRequest = "WITH up AS (" + ClientTable.upsertSql(clients, 3) + ") " + serveGateSql(true);
        socketEntry = "SELECT p.partition_id, p.log_epoch, p.max_commit_seq, p.horizon_seq, p.created_at_ms,"
                + " p.last_seen_at_ms, cl.actor_id, cl.cursor, cl.updated_at_ms, cl.subscriptions::text,"
                + " cl.wire_version, cl.schema_version"
                + " FROM (VALUES (1)) AS one(x) LEFT JOIN " + partitionsTable + " p ON p.partition_id = $1"
                + " LEFT JOIN " + clients + " cl ON cl.partition_id = $1 AND cl.client_id = $2";
    }

    /**
     * §8.1 a socket upgrade's read ({@code $1} partition, {@code $2} client id): the partition row (0-5, NULL when
     * unregistered), then the client record (6-11, NULL when absent); one statement, one snapshot.
     */
    Uni<SocketEntry> readSocketEntry(String partition, String clientId) {
        return pool.preparedQuery(socketEntry)
                .execute(Tuple.of(partition, clientId))
                .map(rs -> {
                    Row r = first(rs);
                    PartitionState state =
                            r.getString(0) == null ? null : registry.withOverlay(PartitionRegistry.partitionState(r));
                    return new SocketEntry(ClientTable.recordAt(r, 6, partition, clientId), state);
                });
    }

    /**
     * One statement, one snapshot: the marker (0 when absent), the partition's log epoch ({@code null} when
     * unregistered) and its non-activated checkpoints at the running version as a JSON array. With
     * {@code atVersion} false, the checkpoints of every schema version ({@code $2} is not used).
     */
    private String serveGateSql(boolean atVersion) {
        return "SELECT COALESCE((SELECT schema_version FROM " + schemaTable + " WHERE id = 1), 0),"
                + " p.log_epoch, " + pendingCheckpointsSql(atVersion) + ", p.horizon_seq"
                + " FROM (VALUES (1)) AS one(x) LEFT JOIN " + partitionsTable + " p ON p.partition_id = $1";
    }

    /** The non-activated checkpoints of partition {@code $1} (at version {@code $2}) as a JSON array text. */
    private String pendingCheckpointsSql(boolean atVersion) {
        return "(SELECT json_agg(json_build_object('partition_id', c.partition_id, 'name', c.name,"
                + " 'schema_version', c.schema_version, 'state', c.state, 'watermark', c.watermark,"
                + " 'owner_epoch', c.owner_epoch, 'observed_rows', c.observed_rows, 'updated_at_ms', c.updated_at_ms)"
                + " ORDER BY c.name COLLATE \"C\")"
                + " FROM " + checkpointsTable + " c"
                + " WHERE c.partition_id = $1" + (atVersion ? " AND c.schema_version = $2" : "")
                + " AND c.state <> 'activated')::text";
    }

    /**
     * The request entry read ({@code $1} partition, {@code $2} running version, {@code $3} client id): the
     * {@link #serveGateSql} columns (0-3), then the partition row (4-7: id, max commit seq, created,
     * last seen; the id is NULL when unregistered) and the client record (8-12; NULL when absent). One
     * statement: partition state, serve gate and client record from one snapshot.
     */
    Uni<RequestEntry> enterRequest(String partition, String clientId, int runningSchemaVersion, long nowMs) {
        Tuple args = Tuple.of(partition, runningSchemaVersion, clientId);
        return pool.preparedQuery(enterRequest).execute(args).chain(rs -> {
            Row r = first(rs);
            if (r.getString(4) == null) {
                // unregistered: register it (the touch), then read again — once per partition
                return registry.insertPartition(partition, nowMs)
                        .chain(() -> pool.preparedQuery(enterRequest).execute(args))
                        .map(again -> requestEntry(first(again), partition, clientId, runningSchemaVersion));
            }
            RequestEntry entry = requestEntry(r, partition, clientId, runningSchemaVersion);
            PartitionState stored = storedPartition(r);
            // The touch: usually in memory; the snapshot's state is kept (only last-seen merged) so partition
            // state, gate and client record stay mutually consistent.
            return registry.touched(stored, nowMs)
                    .map(t -> t.lastSeenAtMs() <= entry.partition().lastSeenAtMs()
                            ? entry
                            : new RequestEntry(
                                    withLastSeen(entry.partition(), t.lastSeenAtMs()), entry.gate(), entry.client()));
        });
    }

    /** The stored partition row of an entry row (no overlay). */
    private static PartitionState storedPartition(Row r) {
        return new PartitionState(
                r.getString(4), r.getString(1), r.getLong(5), r.getLong(3), r.getLong(6), r.getLong(7));
    }

    private RequestEntry requestEntry(Row r, String partition, String clientId, int runningSchemaVersion) {
        if (r.getString(4) == null) {
            throw PartitionRegistry.unknownPartition();
        }
        return new RequestEntry(
                registry.withOverlay(storedPartition(r)),
                serveGate(r, runningSchemaVersion),
                ClientTable.recordAt(r, 8, partition, clientId));
    }

    private static PartitionState withLastSeen(PartitionState s, long lastSeenAtMs) {
        return new PartitionState(
                s.partition(),
                s.logEpoch(),
                s.maxCommitSeq(),
                s.horizonSeq(),
                s.createdAtMs(),
                Math.max(s.lastSeenAtMs(), lastSeenAtMs));
    }

    Uni<GateCheck> readGateCheck(String partition, int runningSchemaVersion) {
        return pool.preparedQuery(serveGate)
                .execute(Tuple.of(partition, runningSchemaVersion))
                .map(rs -> gateCheck(first(rs), runningSchemaVersion));
    }

    private static GateCheck gateCheck(Row r, int runningSchemaVersion) {
        Long horizon = r.getLong(3);
        return new GateCheck(serveGate(r, runningSchemaVersion), horizon == null ? 0L : horizon);
    }

    /**
     * One statement (see {@link #finishRequest}): the upsert's failure fails it and nothing is read past
     * it; the gate is read from a snapshot taken after every earlier statement of the request.
     */
    Uni<GateCheck> finishRequest(String partition, int runningSchemaVersion, ClientRecord client) {
        if (client == null) {
            return readGateCheck(partition, runningSchemaVersion);
        }
        return pool.preparedQuery(finishRequest)
                .execute(ClientTable.addArgs(Tuple.of(partition, runningSchemaVersion), client))
                .map(rs -> gateCheck(first(rs), runningSchemaVersion));
    }

    Uni<ServeGate> readServeGate(String partition, int runningSchemaVersion) {
        return readServeGate(pool, partition, runningSchemaVersion);
    }

    Uni<ServeGate> readServeGate(SqlClient c, String partition, int runningSchemaVersion) {
        return c.preparedQuery(serveGate)
                .execute(Tuple.of(partition, runningSchemaVersion))
                .map(rs -> serveGate(first(rs), runningSchemaVersion));
    }

    /** The gate of a {@link #serveGateSql} row, keeping only the checkpoints at {@code runningSchemaVersion}. */
    static ServeGate serveGate(Row r, int runningSchemaVersion) {
        String pending = r.getString(2);
        List<StoredCheckpoint> list = new ArrayList<>();
        if (pending != null) {
            try {
                for (JsonNode n : Json.readTree(pending)) {
                    if (n.path("schema_version").asInt() != runningSchemaVersion) {
                        continue;
                    }
                    list.add(new StoredCheckpoint(
                            n.path("partition_id").asText(),
                            n.path("name").asText(),
                            n.path("schema_version").asInt(),
                            CheckpointState.of(n.path("state").asText()),
                            n.path("watermark").asLong(),
                            n.path("owner_epoch").asLong(),
                            n.path("observed_rows").asLong(),
                            n.path("updated_at_ms").asLong()));
                }
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("serve gate checkpoints are not JSON", e);
            }
        }
        return new ServeGate(r.getInteger(0), r.getString(1), list);
    }
}
