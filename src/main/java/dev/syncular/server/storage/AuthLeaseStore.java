package dev.syncular.server.storage;

import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Map;

/**
 * The server's auth lease store (§7.3): one lease per {@code (partition, clientId)}, host-signed at rest (the
 * store verifies its own signature on read; a record whose signature does not verify reads as absent). Every
 * method is non-blocking; nothing is cached, so every pod sees every issuance and revocation at once.
 */
public interface AuthLeaseStore {

    /** Off: leases are not configured; nothing is stored, every read is absent, issuance fails. */
    AuthLeaseStore NONE = new AuthLeaseStore() {
        @Override
        public Uni<AuthLease> issue(
                String partition,
                String clientId,
                String actorId,
                Map<String, List<String>> allowedScopes,
                long nowMs,
                long ttlMs,
                String logEpoch) {
            return Uni.createFrom().failure(new IllegalStateException("auth leases are not configured"));
        }

        @Override
        public Uni<AuthLease> read(String partition, String clientId) {
            return Uni.createFrom().nullItem();
        }

        @Override
        public Uni<Boolean> revoke(String partition, String leaseId, long nowMs) {
            return Uni.createFrom().item(false);
        }
    };

    /**
     * §7.3.3 issuance and sliding refresh: stores {@code allowedScopes}, {@code issuedAtMs = nowMs},
     * {@code expiresAtMs = nowMs + ttlMs} and the partition's current {@code logEpoch} for
     * {@code (partition, clientId)} bound to {@code actorId}. An existing, unrevoked lease of the same actor and
     * epoch keeps its {@code leaseId}; a revoked one, one of another actor or one from another epoch (a restore
     * may have revived it, §2.1) is replaced under a fresh id, so a revoked handle never resurrects (§7.3.4).
     * Returns the stored lease.
     */
    Uni<AuthLease> issue(
            String partition,
            String clientId,
            String actorId,
            Map<String, List<String>> allowedScopes,
            long nowMs,
            long ttlMs,
            String logEpoch);

    /** The stored lease of {@code (partition, clientId)}, or a {@code null} item (none, or its signature fails). */
    Uni<AuthLease> read(String partition, String clientId);

    /** §7.3.4 {@code revokeLease(partition, leaseId)}: durable; the item is whether such a lease existed. */
    Uni<Boolean> revoke(String partition, String leaseId, long nowMs);
}
