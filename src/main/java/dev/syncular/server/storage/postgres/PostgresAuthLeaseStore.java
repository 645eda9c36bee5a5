package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import dev.syncular.server.storage.AuthLease;
import dev.syncular.server.storage.AuthLeaseStore;
import dev.syncular.server.wire.Json;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The PostgreSQL auth lease store (§7.3): {@code sync_auth_leases(partition_id, client_id) PK} with
 * {@code lease_id} (unique per partition: the revocation handle), {@code actor_id}, {@code allowed_scopes}
 * (canonical JSON text), {@code issued_at_ms}, {@code expires_at_ms}, {@code revoked_at_ms} (NULL while live),
 * {@code log_epoch} (§2.1: the partition's epoch at issuance) and two HMAC-SHA256 seals under the server's lease
 * key: {@code id_seal} binds the handle — partition, client, lease id, actor, epoch and the revoked flag — and
 * {@code seal} the body a refresh rewrites — partition, client, actor, epoch, scopes, issuance and expiry. A record
 * whose seals do not verify (edited at rest, sealed under another key, or stored before the two seals existed)
 * reads as absent (§7.3.1 "host-signed at rest").
 *
 * <p>Issuance and refresh are <b>one statement</b>, without a read before it: an {@code INSERT ... ON CONFLICT DO
 * UPDATE} carrying a fresh id with its id seal and the new body with its seal. On the row lock it decides in SQL
 * whether the stored handle stays — unrevoked, same actor, same epoch — keeping the stored {@code lease_id} and
 * {@code id_seal} (the body seal does not cover the id, so it needs neither), or is replaced by the fresh one.
 * The decision reads the latest committed row under its lock, so a refresh never revives a lease another pod
 * revoked: revocation compare-and-sets {@code id_seal}, and a refresh that follows it sees the revoked row and
 * mints a fresh id. Only a stored id seal that fails to verify (a tampered handle, found on the returned row) costs
 * a second statement, which replaces the handle unconditionally.
 */
public final class PostgresAuthLeaseStore implements AuthLeaseStore {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final TypeReference<Map<String, List<String>>> SCOPES = new TypeReference<>() {};
    private static final String COLS = "partition_id, client_id, lease_id, actor_id, allowed_scopes, issued_at_ms,"
            + " expires_at_ms, revoked_at_ms, seal, log_epoch, id_seal";

    private final Pool pool;
    private final byte[] key;
    private final String select;
    private final String selectById;
    private final String upsert;
    private final String revoke;

    /** @param key the lease sealing key, the same on every pod serving the database */
    public PostgresAuthLeaseStore(Pool pool, String pgSchema, byte[] key) {
        this.pool = pool;
        this.key = key.clone();
        String t = PgSql.qualified(pgSchema, "sync_auth_leases");
        select = "SELECT " + COLS + " FROM " + t + " WHERE partition_id = $1 AND client_id = $2";
        selectById = "SELECT " + COLS + " FROM " + t + " WHERE partition_id = $1 AND lease_id = $2";
        // §7.3.3 a refresh slides the stored handle; §7.3.4 a revoked one never resurrects; §2.1 nor one of another
        // epoch (a restore may have brought it back unrevoked). $10 forces a fresh handle.
        String keep = "(NOT $10 AND l.revoked_at_ms IS NULL AND l.actor_id = EXCLUDED.actor_id"
                + " AND l.log_epoch = EXCLUDED.log_epoch AND l.id_seal IS NOT NULL)";
        upsert = "INSERT INTO " + t + " AS l (" + COLS + ") VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8, $9, $11)"
                + " ON CONFLICT (partition_id, client_id) DO UPDATE SET"
                + " lease_id = CASE WHEN " + keep + " THEN l.lease_id ELSE EXCLUDED.lease_id END,"
                + " id_seal = CASE WHEN " + keep + " THEN l.id_seal ELSE EXCLUDED.id_seal END,"
                + " actor_id = EXCLUDED.actor_id, allowed_scopes = EXCLUDED.allowed_scopes,"
                + " issued_at_ms = EXCLUDED.issued_at_ms, expires_at_ms = EXCLUDED.expires_at_ms, revoked_at_ms = NULL,"
                + " seal = EXCLUDED.seal, log_epoch = EXCLUDED.log_epoch RETURNING " + COLS;
        revoke = "UPDATE " + t + " SET revoked_at_ms = $3, id_seal = $4 WHERE partition_id = $1 AND lease_id = $2"
                + " AND id_seal = $5";
    }

    /** The DDL of the lease table (part of the storage schema migration). */
    static List<DdlStep> ddl(String pgSchema) {
        String t = PgSql.qualified(pgSchema, "sync_auth_leases");
        return List.of(
                DdlStep.relation(
                        pgSchema,
                        "sync_auth_leases",
                        "CREATE TABLE IF NOT EXISTS " + t
                                + " (partition_id text NOT NULL, client_id text NOT NULL, lease_id text NOT NULL,"
                                + " actor_id text NOT NULL, allowed_scopes text NOT NULL, issued_at_ms bigint NOT NULL,"
                                + " expires_at_ms bigint NOT NULL, revoked_at_ms bigint, seal bytea NOT NULL,"
                                + " PRIMARY KEY (partition_id, client_id))"),
                DdlStep.relation(
                        pgSchema,
                        "sync_auth_leases_by_id",
                        "CREATE UNIQUE INDEX IF NOT EXISTS" + " sync_auth_leases_by_id ON " + t
                                + " (partition_id, lease_id)"),
                // §2.1: the log epoch a lease was issued in (NULL: stored before epochs were recorded)
                DdlStep.column(
                        pgSchema,
                        "sync_auth_leases",
                        "log_epoch",
                        "ALTER TABLE " + t + " ADD COLUMN IF NOT EXISTS log_epoch text"),
                // the handle's own seal, so a refresh can keep it without reading it first
                DdlStep.column(
                        pgSchema,
                        "sync_auth_leases",
                        "id_seal",
                        "ALTER TABLE " + t + " ADD COLUMN IF NOT EXISTS id_seal bytea"));
    }

    @Override
    public Uni<AuthLease> issue(
            String partition,
            String clientId,
            String actorId,
            Map<String, List<String>> allowedScopes,
            long nowMs,
            long ttlMs,
            String logEpoch) {
        Objects.requireNonNull(logEpoch, "logEpoch");
        return upsert(partition, clientId, actorId, canonical(allowedScopes), nowMs, nowMs + ttlMs, logEpoch, false)
                .chain(lease -> lease != null
                        ? Uni.createFrom().item(lease)
                        // the kept handle's id seal failed to verify: replace the handle, unconditionally
                        : upsert(
                                partition,
                                clientId,
                                actorId,
                                canonical(allowedScopes),
                                nowMs,
                                nowMs + ttlMs,
                                logEpoch,
                                true));
    }

    /** The one-statement issuance; the item is the stored lease, or null when the kept handle does not verify. */
    private Uni<AuthLease> upsert(
            String partition,
            String clientId,
            String actorId,
            String scopes,
            long nowMs,
            long expires,
            String logEpoch,
            boolean freshHandle) {
        String id = newLeaseId();
        Tuple args = Tuple.of(partition, clientId, id, actorId, scopes, nowMs)
                .addValue(expires)
                .addValue(buf(bodySeal(partition, clientId, actorId, logEpoch, scopes, nowMs, expires)))
                .addValue(logEpoch)
                .addValue(freshHandle)
                .addValue(buf(idSeal(partition, clientId, id, actorId, logEpoch, false)));
        return pool.preparedQuery(upsert).execute(args).map(rs -> {
            AuthLease stored = lease(first(rs));
            if (stored == null && freshHandle) {
                throw new IllegalStateException("a freshly sealed lease does not verify");
            }
            return stored;
        });
    }

    @Override
    public Uni<AuthLease> read(String partition, String clientId) {
        return pool.preparedQuery(select).execute(Tuple.of(partition, clientId)).map(rs -> {
            Row r = first(rs);
            return r == null ? null : lease(r);
        });
    }

    @Override
    public Uni<Boolean> revoke(String partition, String leaseId, long nowMs) {
        return pool.preparedQuery(selectById)
                .execute(Tuple.of(partition, leaseId))
                .chain(rs -> {
                    Row r = first(rs);
                    AuthLease stored = r == null ? null : lease(r);
                    if (stored == null) {
                        return Uni.createFrom().item(false);
                    }
                    if (stored.revoked()) {
                        return Uni.createFrom().item(true);
                    }
                    byte[] sealed =
                            idSeal(partition, stored.clientId(), leaseId, stored.actorId(), stored.logEpoch(), true);
                    // compare-and-set on the handle's seal: a concurrent refresh that kept the handle leaves it
                    // unchanged
                    return pool.preparedQuery(revoke)
                            .execute(
                                    Tuple.of(partition, leaseId, nowMs, buf(sealed), buf(PgSql.bytes(r.getBuffer(10)))))
                            .chain(up -> up.rowCount() == 1
                                    ? Uni.createFrom().item(true)
                                    : revoke(partition, leaseId, nowMs));
                });
    }

    /** The lease of a stored row, or {@code null} when either seal does not verify. */
    private AuthLease lease(Row r) {
        String scopes = r.getString(4);
        boolean revoked = r.getLong(7) != null;
        String epoch = r.getString(9);
        Buffer idSeal = r.getBuffer(10);
        if (epoch == null || idSeal == null) {
            return null; // stored before epochs and handle seals were recorded
        }
        byte[] body =
                bodySeal(r.getString(0), r.getString(1), r.getString(3), epoch, scopes, r.getLong(5), r.getLong(6));
        byte[] handle = idSeal(r.getString(0), r.getString(1), r.getString(2), r.getString(3), epoch, revoked);
        if (!MessageDigest.isEqual(body, PgSql.bytes(r.getBuffer(8)))
                || !MessageDigest.isEqual(handle, PgSql.bytes(idSeal))) {
            return null;
        }
        try {
            return new AuthLease(
                    r.getString(0),
                    r.getString(1),
                    r.getString(2),
                    r.getString(3),
                    Json.readValue(scopes, SCOPES),
                    r.getLong(5),
                    r.getLong(6),
                    revoked,
                    epoch);
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    private static io.vertx.core.buffer.Buffer buf(byte[] b) {
        return io.vertx.core.buffer.Buffer.buffer(b);
    }

    /** The handle's seal: what identifies the lease and whether it is revoked. */
    private byte[] idSeal(
            String partition, String clientId, String leaseId, String actorId, String logEpoch, boolean revoked) {
        return hmac("lease-id", new String[] {partition, clientId, leaseId, actorId, logEpoch}, revoked ? 1 : 0);
    }

    /** The body's seal: what a refresh rewrites, bound to the partition, client, actor and epoch. */
    private byte[] bodySeal(
            String partition,
            String clientId,
            String actorId,
            String logEpoch,
            String scopes,
            long issued,
            long expires) {
        return hmac("lease-body", new String[] {partition, clientId, actorId, logEpoch, scopes}, issued, expires);
    }

    /** HMAC-SHA256 over a domain label and the length-prefixed fields (no separator ambiguity), then the numbers. */
    private byte[] hmac(String domain, String[] fields, long... numbers) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update(domain.getBytes(StandardCharsets.UTF_8));
            for (String s : fields) {
                byte[] b = s.getBytes(StandardCharsets.UTF_8);
                mac.update(ByteBuffer.allocate(4).putInt(b.length).array());
                mac.update(b);
            }
            ByteBuffer n = ByteBuffer.allocate(8 * numbers.length);
            for (long v : numbers) {
                n.putLong(v);
            }
            mac.update(n.array());
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The allowed map as JSON text with sorted keys (values in resolver order). */
    private static String canonical(Map<String, List<String>> allowed) {
        Map<String, List<String>> sorted = new TreeMap<>();
        allowed.forEach((k, v) -> sorted.put(k, new ArrayList<>(v)));
        try {
            return Json.writeValueAsString(sorted);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** 128 random bits, base64url: unguessable, so a lease id names nothing but its lease. */
    private static String newLeaseId() {
        byte[] b = new byte[16];
        RANDOM.nextBytes(b);
        return "lease_" + Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    }
}
