package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.storage.AuthLeaseStore;
import dev.syncular.server.wire.Lease;
import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Auth leases (§7.3) as the engine applies them: issuance and sliding refresh on a round whose live
 * {@code resolveScopes} resolved (§7.3.3), and the enforcement seam — during a host-signalled outage
 * ({@link ScopeResolverOutage}) the stored lease's allowed scopes authorize the round, or the round fails
 * request-level with {@code sync.auth_lease_required} / {@code sync.auth_lease_revoked}. {@link #OFF} when
 * {@code leases} is not configured: then no {@code LEASE} frame is ever emitted and no lease is looked up.
 */
public final class AuthLeases {
    /** Leases not configured ({@link #enabled()} is false): rounds neither issue nor consult leases. */
    public static final AuthLeases OFF = new AuthLeases(AuthLeaseStore.NONE, Long.MAX_VALUE, () -> 0L);

    private final AuthLeaseStore store;
    private final long ttlMs;
    private final LongSupplier clock;

    public AuthLeases(AuthLeaseStore store, long ttlMs, LongSupplier clockMs) {
        if (ttlMs <= 0) {
            throw new IllegalArgumentException("lease TTL must be positive");
        }
        this.store = Objects.requireNonNull(store, "store");
        this.ttlMs = ttlMs;
        this.clock = clockMs;
    }

    /** Whether leases are configured (anything but {@link #OFF}). */
    public boolean enabled() {
        return store != AuthLeaseStore.NONE;
    }

    /** §7.3.3 issuance / refresh: stores the just-resolved allowed map and answers the {@code LEASE} frame. */
    Uni<Lease> issue(SyncRequestContext ctx, String clientId, Map<String, List<String>> allowed, String logEpoch) {
        return store.issue(ctx.partition(), clientId, ctx.actorId(), allowed, clock.getAsLong(), ttlMs, logEpoch)
                .map(l -> new Lease(l.leaseId(), l.expiresAtMs()));
    }

    /**
     * §7.3.3 enforcement during an outage: the valid lease's allowed scopes, or a request-level failure —
     * {@code sync.auth_lease_revoked} for a revoked lease (§7.3.4), {@code sync.auth_lease_required} when there is
     * none, it expired ({@code now >= expiresAtMs}), it belongs to another actor, or it was issued in another
     * {@code logEpoch} than the partition's current one: after a restore and its epoch rotation (§2.1) no lease of
     * the old continuity authorizes anything, so a lease the host revoked after the backup was taken cannot come
     * back with the restored records ({@code details.reason} {@code log_epoch_rotated}). Rounds call it through
     * {@link RoundState}; a realtime connection (§8.1) registers its subscriptions with it during an outage.
     */
    public Uni<Map<String, List<String>>> authorize(SyncRequestContext ctx, String clientId, String logEpoch) {
        return store.read(ctx.partition(), clientId).map(lease -> {
            if (lease != null && lease.actorId().equals(ctx.actorId()) && lease.revoked()) {
                throw new SyncError(ErrorCode.AUTH_LEASE_REVOKED, "the auth lease was revoked");
            }
            if (lease != null && lease.actorId().equals(ctx.actorId()) && !lease.issuedIn(logEpoch)) {
                throw new SyncError(
                        ErrorCode.AUTH_LEASE_REQUIRED,
                        "the auth lease predates the partition's log epoch",
                        Map.of("reason", "log_epoch_rotated"));
            }
            if (lease == null || !lease.actorId().equals(ctx.actorId()) || !lease.validAt(clock.getAsLong())) {
                throw new SyncError(
                        ErrorCode.AUTH_LEASE_REQUIRED, "no valid auth lease during the authorization outage");
            }
            return lease.allowedScopes();
        });
    }

    /** §7.3.4 {@code revokeLease(partition, leaseId)}; the item is whether the lease exists. */
    public Uni<Boolean> revoke(String partition, String leaseId) {
        return store.revoke(partition, leaseId, clock.getAsLong());
    }
}
