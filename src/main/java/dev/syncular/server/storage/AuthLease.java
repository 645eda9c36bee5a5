package dev.syncular.server.storage;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One stored auth lease (§7.3.1), keyed by {@code (partition, clientId)}: the actor it authorizes, the actor's
 * resolved allowed scopes at issuance ({@code '*'} = any value), the issuance and expiry instants and whether the
 * host revoked it (§7.3.4), and the partition's {@code logEpoch} (§2.1) it was issued in: a lease belongs to one
 * continuity of the log, so a restore (which brings back lease records of the backup's time, revoked ones
 * included) followed by the epoch rotation invalidates every lease issued before it. {@code logEpoch} is
 * {@code null} for a record stored before epochs were recorded: it matches no epoch. Only {@code leaseId} and
 * {@code expiresAtMs} ever reach the wire (§7.3.2).
 */
public record AuthLease(
        String partition,
        String clientId,
        String leaseId,
        String actorId,
        Map<String, List<String>> allowedScopes,
        long issuedAtMs,
        long expiresAtMs,
        boolean revoked,
        String logEpoch) {
    public AuthLease {
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(clientId, "clientId");
        Objects.requireNonNull(leaseId, "leaseId");
        Objects.requireNonNull(actorId, "actorId");
        allowedScopes = Map.copyOf(allowedScopes);
    }

    /** §7.3.1: valid at {@code nowMs} iff {@code nowMs < expiresAtMs} and not revoked. */
    public boolean validAt(long nowMs) {
        return !revoked && nowMs < expiresAtMs;
    }

    /** Whether the lease was issued in the partition's current continuity {@code logEpoch} (§2.1). */
    public boolean issuedIn(String currentLogEpoch) {
        return logEpoch != null && logEpoch.equals(currentLogEpoch);
    }
}
