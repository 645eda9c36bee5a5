package dev.syncular.server.sync;

import dev.syncular.server.config.SecretKey;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * §7.3 auth leases: a {@code LEASE} frame issued and slid on every round the host's scope resolver answered, and
 * lease-authorized rounds while the resolver signals an outage. Off by default: no frame, no lease lookups.
 */
@ConfigMapping(prefix = "syncular.leases")
public interface LeasesConfig {
    /** Whether to issue leases and serve outages from them. */
    @WithDefault("false")
    boolean enabled();

    /** The lease TTL: {@code expiresAtMs = issuedAtMs + ttl}, slid on every live-authorized round. */
    @WithDefault("24h")
    Duration ttl();

    /**
     * HMAC key sealing the lease records at rest (at least 32 bytes of text), the same on every pod. Unset:
     * {@code prod} refuses to start while leases are enabled; {@code dev}/{@code test} derive a public
     * development key from the storage schema (never for production).
     */
    Optional<String> key();

    /** The mapping's one cross-field check, run at start-up: while leases are on, a ttl and a long enough key. */
    static List<String> problems(LeasesConfig config) {
        List<String> out = new ArrayList<>();
        if (!config.enabled()) {
            return out;
        }
        if (config.ttl().isZero() || config.ttl().isNegative()) {
            out.add("syncular.leases.ttl must be more than 0s, was " + config.ttl());
        }
        if (!SecretKey.Check.acceptable(config.key().orElse(""))) {
            out.add("syncular.leases.key must have at least " + SecretKey.MIN_BYTES + " bytes");
        }
        return out;
    }
}
