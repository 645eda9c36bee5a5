package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import dev.syncular.server.storage.AuthLease;
import dev.syncular.server.storage.AuthLeaseStore;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The PostgreSQL auth lease store (§7.3): {@code sync_auth_leases(partition_id, client_id) PK} with
 * {@code lease_id} (unique per partition: the revocation handle), {@code actor_id}, {@code allowed_scopes}
 * (canonical JSON text), {@code issued_at_ms}, {@code expires_at_ms}, {@code revoked_at_ms} (NULL while live) and
 * {@code seal}: an HMAC-SHA256, under the server's lease key, over every other field. A record whose seal does not
 * verify (edited at rest, or sealed under another key) reads as absent (§7.3.1 "host-signed at rest"). Issuance and
 * revocation are compare-and-set on the stored seal, so a concurrent revocation is never overwritten by a refresh.
 */
public final class PostgresAuthLeaseStore implements AuthLeaseStore {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final TypeReference<Map<String, List<String>>> SCOPES = new TypeReference<>() { };
    private static final String COLS = "partition_id, client_id, lease_id, actor_id, allowed_scopes, issued_at_ms,"
            + " expires_at_ms, revoked_at_ms, seal, log_epoch";

    private final Pool pool;
    private final byte[] key;
    private final String select;
    private final String selectById;
    private final String insert;
    private final String replace;
    private final String revoke;

    /** @param key the lease sealing key, the same on every pod serving the database */
    public PostgresAuthLeaseStore(Pool pool, String pgSchema, byte[] key) {
        this.pool = pool;
        this.key = key.clone();
        String t = PgSql.qualified(pgSchema, "sync_auth_leases");
        select = "SELECT " + COLS + " FROM " + t + " WHERE partition_id = $1 AND client_id = $2";
        selectById = "SELECT " + COLS + " FROM " + t + " WHERE partition_id = $1 AND lease_id = $2";
        insert = "INSERT INTO " + t + " (" + COLS + ") VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8, $9)"
                + " ON CONFLICT (partition_id, client_id) DO NOTHING RETURNING " + COLS;
        replace = "UPDATE " + t + " SET lease_id = $3, actor_id = $4, allowed_scopes = $5, issued_at_ms = $6,"
                + " expires_at_ms = $7, revoked_at_ms = NULL, seal = $8, log_epoch = $10"
                + " WHERE partition_id = $1 AND client_id = $2 AND seal = $9 RETURNING " + COLS;
        revoke = "UPDATE " + t + " SET revoked_at_ms = $3, seal = $4 WHERE partition_id = $1 AND lease_id = $2"
                + " AND seal = $5";
    }

    /** The DDL of the lease table (part of the storage schema migration). */
    static List<DdlStep> ddl(String pgSchema) {
        String t = PgSql.qualified(pgSchema, "sync_auth_leases");
        return List.of(
                DdlStep.relation(pgSchema, "sync_auth_leases", "CREATE TABLE IF NOT EXISTS " + t
                        + " (partition_id text NOT NULL, client_id text NOT NULL, lease_id text NOT NULL,"
                        + " actor_id text NOT NULL, allowed_scopes text NOT NULL, issued_at_ms bigint NOT NULL,"
                        + " expires_at_ms bigint NOT NULL, revoked_at_ms bigint, seal bytea NOT NULL,"
                        + " PRIMARY KEY (partition_id, client_id))"),
                DdlStep.relation(pgSchema, "sync_auth_leases_by_id", "CREATE UNIQUE INDEX IF NOT EXISTS"
                        + " sync_auth_leases_by_id ON " + t + " (partition_id, lease_id)"),
                // §2.1: the log epoch a lease was issued in (NULL: stored before epochs were recorded)
                DdlStep.column(pgSchema, "sync_auth_leases", "log_epoch",
                        "ALTER TABLE " + t + " ADD COLUMN IF NOT EXISTS log_epoch text"));
    }

    @Override
    public Uni<AuthLease> issue(String partition, String clientId, String actorId,
            Map<String, List<String>> allowedScopes, long nowMs, long ttlMs,
            String logEpoch) {
        String scopes = canonical(allowedScopes);
        long expires = nowMs + ttlMs;
        return pool.preparedQuery(select).execute(Tuple.of(partition, clientId)).chain(rs -> {
            Row r = first(rs);
            if (r == null) {
                String id = newLeaseId();
                return pool.preparedQuery(insert).execute(Tuple.of(partition, clientId, id, actorId, scopes, nowMs)
                        .addValue(expires).addValue(buf(seal(partition, clientId, id, actorId, scopes, nowMs, expires, false,
                                logEpoch))).addValue(logEpoch))
                        .chain(ins -> first(ins) == null ? issue(partition, clientId, actorId, allowedScopes, nowMs, ttlMs, logEpoch)
                                : Uni.createFrom().item(lease(first(ins))));
            }
            AuthLease stored = lease(r);
            // §7.3.3: a refresh slides the same handle; §7.3.4: a revoked handle never resurrects, nor (§2.1) one
            // of another epoch, which a restore may have brought back unrevoked
            boolean keep = stored != null && !stored.revoked() && stored.actorId().equals(actorId)
                    && stored.issuedIn(logEpoch);
            String id = keep ? stored.leaseId() : newLeaseId();
            Tuple args = Tuple.of(partition, clientId, id, actorId, scopes, nowMs).addValue(expires)
                    .addValue(buf(seal(partition, clientId, id, actorId, scopes, nowMs, expires, false, logEpoch)))
                    .addValue(buf(PgSql.bytes(r.getBuffer(8)))).addValue(logEpoch);
            return pool.preparedQuery(replace).execute(args).chain(up -> first(up) == null
                    ? issue(partition, clientId, actorId, allowedScopes, nowMs, ttlMs, logEpoch) // lost a race: decide again
                    : Uni.createFrom().item(lease(first(up))));
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
        return pool.preparedQuery(selectById).execute(Tuple.of(partition, leaseId)).chain(rs -> {
            Row r = first(rs);
            AuthLease stored = r == null ? null : lease(r);
            if (stored == null) {
                return Uni.createFrom().item(false);
            }
            if (stored.revoked()) {
                return Uni.createFrom().item(true);
            }
            byte[] sealed = seal(partition, stored.clientId(), leaseId, stored.actorId(), r.getString(4),
                    stored.issuedAtMs(), stored.expiresAtMs(), true, stored.logEpoch());
            return pool.preparedQuery(revoke).execute(Tuple.of(partition, leaseId, nowMs, buf(sealed), buf(PgSql.bytes(r.getBuffer(8)))))
                    .chain(up -> up.rowCount() == 1 ? Uni.createFrom().item(true) : revoke(partition, leaseId, nowMs));
        });
    }

    /** The lease of a stored row, or {@code null} when its seal does not verify. */
    private AuthLease lease(Row r) {
        String scopes = r.getString(4);
        boolean revoked = r.getLong(7) != null;
        byte[] expected = seal(r.getString(0), r.getString(1), r.getString(2), r.getString(3), scopes, r.getLong(5),
                r.getLong(6), revoked, r.getString(9));
        if (!MessageDigest.isEqual(expected, PgSql.bytes(r.getBuffer(8)))) {
            return null;
        }
        try {
            return new AuthLease(r.getString(0), r.getString(1), r.getString(2), r.getString(3),
                    PgSql.JSON.readValue(scopes, SCOPES), r.getLong(5), r.getLong(6), revoked, r.getString(9));
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    private static io.vertx.core.buffer.Buffer buf(byte[] b) {
        return io.vertx.core.buffer.Buffer.buffer(b);
    }

    /**
     * HMAC-SHA256 over the length-prefixed fields (no separator ambiguity); the log epoch last, when recorded (a
     * record stored before epochs were recorded keeps its seal, and matches no epoch).
     */
    private byte[] seal(String partition, String clientId, String leaseId, String actorId, String scopes, long issued,
            long expires, boolean revoked, String logEpoch) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            for (String s : new String[] {partition, clientId, leaseId, actorId, scopes}) {
                byte[] b = s.getBytes(StandardCharsets.UTF_8);
                mac.update(java.nio.ByteBuffer.allocate(4).putInt(b.length).array());
                mac.update(b);
            }
            mac.update(java.nio.ByteBuffer.allocate(17).putLong(issued).putLong(expires).put((byte) (revoked ? 1 : 0))
                    .array());
            if (logEpoch != null) {
                byte[] b = logEpoch.getBytes(StandardCharsets.UTF_8);
                mac.update(java.nio.ByteBuffer.allocate(4).putInt(b.length).array());
                mac.update(b);
            }
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
            return PgSql.JSON.writeValueAsString(sorted);
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
