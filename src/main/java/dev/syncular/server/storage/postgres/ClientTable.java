package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;

import dev.syncular.server.storage.ClientRecord;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;

/**
 * Client cursor records (§4.5: per partition and client id, the minimum {@code nextCursor} of the request's
 * active subscriptions with its time, the subscriptions, the wire version and the schema version) in {@code sync_clients} — the
 * retention watermark input of §4.6. The request exit writes them through {@link #upsertSql} in
 * {@link ServeGateReads}; a log-epoch rotation (§2.1) deletes a partition's records in {@link PartitionRegistry}.
 */
final class ClientTable {
    private static final String CLIENT_COLS =
            "partition_id, client_id, actor_id, cursor, updated_at_ms, subscriptions::text, wire_version, schema_version";

    private final Pool pool;
    private final String upsertClient;
    private final String readClient;
    private final String listClients;
    private final CursorAcks acks;

    ClientTable(Pool pool, String pgSchema) {
        this.pool = pool;
        String clients = PgSql.qualified(pgSchema, "sync_clients");
        upsertClient = upsertSql(clients, 1);
        readClient = "SELECT " + CLIENT_COLS + " FROM " + clients + " WHERE partition_id = $1 AND client_id = $2";
        acks = new CursorAcks(pool, pgSchema);
        listClients = "SELECT " + CLIENT_COLS + " FROM " + clients
                + " WHERE partition_id = $1 ORDER BY client_id COLLATE \"C\"";
    }

    /**
     * The record upsert into {@code clients} with the record's columns (table order, as {@link #addArgs}
     * binds them) bound from parameter {@code $first} on.
     */
    static String upsertSql(String clients, int first) {
        return "INSERT INTO " + clients + " (partition_id, client_id, actor_id, cursor, updated_at_ms,"
                + " subscriptions, wire_version, schema_version) VALUES ($" + first + ", $" + (first + 1) + ", $"
                + (first + 2) + ", $" + (first + 3) + ", $" + (first + 4) + ", $" + (first + 5) + "::text::jsonb, $"
                + (first + 6) + ", $" + (first + 7) + ")"
                + " ON CONFLICT (partition_id, client_id) DO UPDATE SET actor_id = EXCLUDED.actor_id, cursor = EXCLUDED.cursor,"
                + " updated_at_ms = EXCLUDED.updated_at_ms, subscriptions = EXCLUDED.subscriptions, wire_version = EXCLUDED.wire_version,"
                + " schema_version = EXCLUDED.schema_version";
    }

    /** Appends the record's columns in table order (the parameters of {@link #upsertSql}). */
    static Tuple addArgs(Tuple args, ClientRecord c) {
        return args.addValue(c.partition())
                .addValue(c.clientId())
                .addValue(c.actorId())
                .addValue(c.cursor())
                .addValue(c.updatedAtMs())
                .addValue(c.subscriptionsJson())
                .addValue(c.wireVersion())
                .addValue(c.schemaVersion());
    }

    Uni<Void> upsertClient(ClientRecord c) {
        return pool.preparedQuery(upsertClient)
                .execute(addArgs(Tuple.tuple(), c))
                .replaceWithVoid();
    }

    Uni<ClientRecord> readClient(String partition, String clientId) {
        return pool.preparedQuery(readClient)
                .execute(Tuple.of(partition, clientId))
                .map(rs -> {
                    Row r = first(rs);
                    return r == null ? null : clientRecord(r);
                });
    }

    /** §8.2 ack, written with the other acks of the pod that wait for the same statement ({@link CursorAcks}). */
    Uni<Boolean> advanceCursor(
            String partition, String clientId, String actorId, String logEpoch, long cursor, long nowMs) {
        return acks.advance(partition, clientId, actorId, logEpoch, cursor, nowMs);
    }

    Uni<List<ClientRecord>> listClients(String partition) {
        return pool.preparedQuery(listClients).execute(Tuple.of(partition)).map(rs -> {
            List<ClientRecord> out = new ArrayList<>();
            for (Row r : rs) {
                out.add(clientRecord(r));
            }
            return out;
        });
    }

    private static ClientRecord clientRecord(Row r) {
        return recordAt(r, 2, r.getString(0), r.getString(1));
    }

    /**
     * The client record of {@code (partition, clientId)} from a row whose columns from {@code at} on are actor,
     * cursor, updated-at, subscriptions text, wire version and schema version; {@code null} when the actor is NULL
     * (no record, in a LEFT JOIN).
     */
    static ClientRecord recordAt(Row r, int at, String partition, String clientId) {
        return r.getString(at) == null
                ? null
                : new ClientRecord(
                        partition,
                        clientId,
                        r.getString(at),
                        r.getLong(at + 1),
                        r.getLong(at + 2),
                        r.getString(at + 3),
                        r.getInteger(at + 4),
                        r.getInteger(at + 5));
    }
}
