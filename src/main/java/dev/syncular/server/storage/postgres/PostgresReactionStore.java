package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.PlannedReaction;
import dev.syncular.server.storage.Reaction;
import dev.syncular.server.storage.ReactionStore;
import dev.syncular.server.wire.CanonicalJson;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link ReactionStore} on {@code sync_reactions} (§6.9). A claim is one statement: it picks due rows with
 * {@code FOR UPDATE SKIP LOCKED} (workers on several pods get disjoint rows) and leases them in the same
 * statement. Later transitions match {@code lease_owner}, so a stale worker changes nothing.
 */
public final class PostgresReactionStore implements ReactionStore {
    static final String COLUMNS =
            "id, partition_id, client_id, client_commit_id, commit_seq, reaction_key, type, version,"
                    + " payload::text, idempotency_key, status, attempts, max_attempts, due_at_ms, lease_owner,"
                    + " lease_expires_at_ms, last_error_code, last_error_details::text, failed_at_ms, completed_at_ms, created_at_ms";
    private final Pool pool;
    private final String claim;
    private final String renew;
    private final String complete;
    private final String retry;
    private final String deadLetter;
    private final String list;
    private final String find;
    private final String retryDeadLetter;
    private final String prune;
    private final String undelivered;

    PostgresReactionStore(Pool pool, String pgSchema) {
        this.pool = pool;
        String t = PgSql.qualified(pgSchema, "sync_reactions");
        claim = "UPDATE " + t + " SET status = 'leased', lease_owner = $1, lease_expires_at_ms = $2 + $3,"
                + " attempts = attempts + 1 WHERE id IN (SELECT id FROM " + t
                + " WHERE status IN ('pending', 'leased') AND ((status = 'pending' AND due_at_ms <= $2)"
                + " OR (status = 'leased' AND lease_expires_at_ms <= $2))"
                + " AND ($5::text[] IS NULL OR type = ANY($5::text[]))"
                + " ORDER BY due_at_ms, id LIMIT $4 FOR UPDATE SKIP LOCKED) RETURNING " + COLUMNS;
        renew = "UPDATE " + t
                + " SET lease_expires_at_ms = $3 WHERE id = $1 AND status = 'leased' AND lease_owner = $2";
        complete = "UPDATE " + t + " SET status = 'completed', completed_at_ms = $3, lease_owner = NULL,"
                + " lease_expires_at_ms = NULL WHERE id = $1 AND status = 'leased' AND lease_owner = $2";
        retry = "UPDATE " + t + " SET status = 'pending', due_at_ms = $6, last_error_code = $3,"
                + " last_error_details = $4::text::jsonb, failed_at_ms = $5, lease_owner = NULL, lease_expires_at_ms = NULL"
                + " WHERE id = $1 AND status = 'leased' AND lease_owner = $2";
        deadLetter = "UPDATE " + t + " SET status = 'dead-letter', last_error_code = $3,"
                + " last_error_details = $4::text::jsonb, failed_at_ms = $5, lease_owner = NULL, lease_expires_at_ms = NULL"
                + " WHERE id = $1 AND status = 'leased' AND lease_owner = $2";
        list = "SELECT " + COLUMNS + " FROM " + t + " WHERE id > $1 AND ($2::text IS NULL OR partition_id = $2)"
                + " AND ($3::text IS NULL OR status = $3) ORDER BY id LIMIT $4";
        find = "SELECT " + COLUMNS + " FROM " + t + " WHERE id = $1";
        retryDeadLetter =
                "UPDATE " + t + " SET status = 'pending', attempts = 0, due_at_ms = $2, last_error_code = NULL,"
                        + " last_error_details = NULL, failed_at_ms = NULL WHERE id = $1 AND status = 'dead-letter'";
        // the predicate of the partial index sync_reactions_due: an index-only count of the open queue
        undelivered = "SELECT count(*) FROM " + t + " WHERE status IN ('pending', 'leased')";
        prune = "WITH d AS (DELETE FROM " + t + " WHERE id IN (SELECT id FROM " + t
                + " WHERE (status = 'completed' AND completed_at_ms < $1) OR (status = 'dead-letter' AND failed_at_ms < $2)"
                + " ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING status)"
                + " SELECT count(*) FILTER (WHERE status = 'completed'), count(*) FILTER (WHERE status = 'dead-letter') FROM d";
    }

    /** The row insert of the push transaction: one statement for every reaction of a commit (parallel arrays). */
    static String appendSql(String pgSchema) {
        return "INSERT INTO " + PgSql.qualified(pgSchema, "sync_reactions")
                + " (partition_id, client_id, client_commit_id,"
                + " commit_seq, reaction_key, type, version, payload, idempotency_key, status, attempts, max_attempts,"
                + " due_at_ms, created_at_ms) SELECT $1, $2, $3, $4, u.k, u.t, u.v, u.p::jsonb, u.i, 'pending', 0, u.m, $5, $5"
                + " FROM unnest($6::text[], $7::text[], $8::integer[], $9::text[], $10::text[], $11::integer[])"
                + " AS u(k, t, v, p, i, m)";
    }

    /**
     * The arguments of {@link #appendSql} for a commit's planned reactions (§6.9), each with its idempotency key:
     * the stable JSON encoding of {@code [partition, clientId, clientCommitId, key]}.
     */
    static Tuple appendArgs(
            String partition,
            String clientId,
            String clientCommitId,
            long commitSeq,
            List<PlannedReaction> reactions,
            long nowMs) {
        int n = reactions.size();
        String[] keys = new String[n];
        String[] types = new String[n];
        Integer[] versions = new Integer[n];
        String[] payloads = new String[n];
        String[] idempotencyKeys = new String[n];
        Integer[] maxAttempts = new Integer[n];
        for (int i = 0; i < n; i++) {
            PlannedReaction r = reactions.get(i);
            keys[i] = r.key();
            types[i] = r.type();
            versions[i] = r.version();
            payloads[i] = r.payloadJson();
            // §6.9: the stable JSON encoding of [partition, clientId, clientCommitId, key]
            idempotencyKeys[i] = CanonicalJson.write(List.of(partition, clientId, clientCommitId, r.key()));
            maxAttempts[i] = r.maxAttempts();
        }
        return Tuple.tuple()
                .addValue(partition)
                .addValue(clientId)
                .addValue(clientCommitId)
                .addValue(commitSeq)
                .addValue(nowMs)
                .addArrayOfString(keys)
                .addArrayOfString(types)
                .addArrayOfInteger(versions)
                .addArrayOfString(payloads)
                .addArrayOfString(idempotencyKeys)
                .addArrayOfInteger(maxAttempts);
    }

    @Override
    public Uni<List<Reaction>> claim(String owner, long nowMs, long leaseMs, int limit, List<String> types) {
        Tuple args = Tuple.of(owner, nowMs, leaseMs, limit)
                .addArrayOfString(types == null ? null : types.toArray(String[]::new));
        return pool.preparedQuery(claim).execute(args).map(PostgresReactionStore::rows);
    }

    @Override
    public Uni<Boolean> renew(long id, String owner, long leaseExpiresAtMs) {
        return changed(renew, Tuple.of(id, owner, leaseExpiresAtMs));
    }

    @Override
    public Uni<Boolean> complete(long id, String owner, long nowMs) {
        return changed(complete, Tuple.of(id, owner, nowMs));
    }

    @Override
    public Uni<Boolean> fail(long id, String owner, String code, String detailsJson, long nowMs, Long retryAtMs) {
        Tuple args = Tuple.of(id, owner, code, detailsJson, nowMs);
        return retryAtMs == null ? changed(deadLetter, args) : changed(retry, args.addValue(retryAtMs));
    }

    @Override
    public Uni<Long> countUndelivered() {
        return pool.preparedQuery(undelivered)
                .execute()
                .map(rs -> PgSql.first(rs).getLong(0));
    }

    @Override
    public Uni<List<Reaction>> list(String partition, String status, long afterId, int limit) {
        return pool.preparedQuery(list)
                .execute(Tuple.of(afterId, partition, status, limit))
                .map(PostgresReactionStore::rows);
    }

    @Override
    public Uni<Reaction> find(long id) {
        return pool.preparedQuery(find).execute(Tuple.of(id)).map(rs -> {
            List<Reaction> r = rows(rs);
            return r.isEmpty() ? null : r.get(0);
        });
    }

    @Override
    public Uni<Boolean> retryDeadLetter(long id, long nowMs) {
        return changed(retryDeadLetter, Tuple.of(id, nowMs));
    }

    @Override
    public Uni<PruneResult> prune(long completedBefore, long deadLetterBefore, int limit) {
        return pool.preparedQuery(prune)
                .execute(Tuple.of(completedBefore, deadLetterBefore, limit))
                .map(rs -> {
                    Row r = PgSql.first(rs);
                    long completed = r.getLong(0);
                    long dead = r.getLong(1);
                    return new PruneResult(completed, dead, completed + dead >= limit);
                });
    }

    private Uni<Boolean> changed(String sql, Tuple args) {
        return pool.preparedQuery(sql).execute(args).map(rs -> rs.rowCount() == 1);
    }

    private static List<Reaction> rows(RowSet<Row> rs) {
        List<Reaction> out = new ArrayList<>(rs.size());
        for (Row r : rs) {
            out.add(new Reaction(
                    r.getLong(0),
                    r.getString(1),
                    r.getString(2),
                    r.getString(3),
                    r.getLong(4),
                    r.getString(5),
                    r.getString(6),
                    r.getInteger(7),
                    r.getString(8),
                    r.getString(9),
                    r.getString(10),
                    r.getInteger(11),
                    r.getInteger(12),
                    r.getLong(13),
                    r.getString(14),
                    r.getLong(15),
                    r.getString(16),
                    r.getString(17),
                    r.getLong(18),
                    r.getLong(19),
                    r.getLong(20)));
        }
        return out;
    }
}
