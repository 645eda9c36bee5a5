package dev.syncular.server.storage.postgres;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import dev.syncular.server.storage.TenantLoadRow;
import dev.syncular.server.wire.Json;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Each pod's loudest tenants: {@code sync_tenant_load(pod_id, partition_id) PK} with {@code written_at_ms}, the
 * figures ({@code database_nanos}, {@code committed_bytes}, {@code fanout_bytes}) and {@code refusals jsonb} (reason →
 * count). A pod replaces its own rows in one transaction, deleting on the way the rows of any pod gone quiet; readers
 * sum the rows written recently per partition in one statement. Each publication holds one row of no partition
 * ({@code ''}): the pod's sign of life, which the live pods are counted by. A few rows per pod (its top partitions), no index
 * beyond the key.
 */
final class TenantLoadTable {
    private static final TypeReference<TreeMap<String, Long>> COUNTS = new TypeReference<>() {};

    private final Pool pool;
    private final String delete;
    private final String insert;
    private final String merged;
    private final String livePods;
    private final String withdraw;

    TenantLoadTable(Pool pool, String pgSchema) {
        this.pool = pool;
        String t = PgSql.qualified(pgSchema, "sync_tenant_load");
        delete = "DELETE FROM " + t + " WHERE pod_id = $1 OR written_at_ms < $2";
        insert = "INSERT INTO " + t + " (pod_id, partition_id, written_at_ms, database_nanos, committed_bytes,"
                + " fanout_bytes, refusals) VALUES ($1, $2, $3, $4, $5, $6, $7::text::jsonb)";
        merged = "WITH live AS (SELECT partition_id, database_nanos, committed_bytes, fanout_bytes, refusals FROM " + t
                + " WHERE written_at_ms >= $1 AND partition_id <> ''),"
                + " refused AS (SELECT l.partition_id, r.key, sum(r.value::bigint) AS n"
                + " FROM live l, jsonb_each_text(l.refusals) AS r GROUP BY l.partition_id, r.key)"
                + " SELECT l.partition_id, sum(l.database_nanos)::bigint, sum(l.committed_bytes)::bigint,"
                + " sum(l.fanout_bytes)::bigint, count(*)::int,"
                + " (SELECT jsonb_object_agg(f.key, f.n) FROM refused f WHERE f.partition_id = l.partition_id)::text"
                + " FROM live l GROUP BY l.partition_id";
        livePods = "SELECT count(DISTINCT pod_id)::int FROM " + t + " WHERE written_at_ms >= $1";
        withdraw = "DELETE FROM " + t + " WHERE pod_id = $1";
    }

    /** The DDL of the table (part of the storage schema migration). */
    static List<DdlStep> ddl(String pgSchema) {
        String t = PgSql.qualified(pgSchema, "sync_tenant_load");
        return List.of(DdlStep.relation(
                pgSchema,
                "sync_tenant_load",
                "CREATE TABLE IF NOT EXISTS " + t
                        + " (pod_id text NOT NULL, partition_id text NOT NULL, written_at_ms bigint NOT NULL,"
                        + " database_nanos bigint NOT NULL, committed_bytes bigint NOT NULL,"
                        + " fanout_bytes bigint NOT NULL, refusals jsonb NOT NULL,"
                        + " PRIMARY KEY (pod_id, partition_id))"));
    }

    Uni<Void> publish(String podId, long nowMs, long staleBeforeMs, List<TenantLoadRow> rows) {
        List<Tuple> batch = new ArrayList<>(rows.size() + 1);
        // the pod's own row (no partition): it counts among the live pods whether or not it had load
        batch.add(Tuple.from(List.of(podId, "", nowMs, 0L, 0L, 0L, "{}")));
        for (TenantLoadRow r : rows) {
            batch.add(Tuple.from(List.of(
                    podId,
                    r.partition(),
                    nowMs,
                    r.databaseNanos(),
                    r.committedBytes(),
                    r.fanoutBytes(),
                    json(r.refusals()))));
        }
        return PgSql.readCommitted(
                        pool,
                        conn -> conn.preparedQuery(delete)
                                .execute(Tuple.of(podId, staleBeforeMs))
                                .chain(() -> conn.preparedQuery(insert)
                                        .executeBatch(batch)
                                        .replaceWithVoid()))
                .replaceWithVoid();
    }

    Uni<List<TenantLoadRow>> read(long liveSinceMs) {
        return pool.preparedQuery(merged).execute(Tuple.of(liveSinceMs)).map(rs -> {
            List<TenantLoadRow> out = new ArrayList<>(rs.size());
            for (Row r : rs) {
                out.add(new TenantLoadRow(
                        r.getString(0),
                        r.getLong(1),
                        r.getLong(2),
                        r.getLong(3),
                        counts(r.getString(5)),
                        r.getInteger(4)));
            }
            return out;
        });
    }

    Uni<Void> withdraw(String podId) {
        return pool.preparedQuery(withdraw).execute(Tuple.of(podId)).replaceWithVoid();
    }

    Uni<Integer> countLivePods(long liveSinceMs) {
        return pool.preparedQuery(livePods)
                .execute(Tuple.of(liveSinceMs))
                .map(rs -> rs.iterator().next().getInteger(0));
    }

    private static String json(Map<String, Long> counts) {
        try {
            return Json.writeValueAsString(new TreeMap<>(counts));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, Long> counts(String json) {
        if (json == null) {
            return Map.of();
        }
        try {
            return Json.readValue(json, COUNTS);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
