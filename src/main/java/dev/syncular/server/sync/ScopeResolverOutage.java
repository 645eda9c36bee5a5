package dev.syncular.server.sync;

/**
 * The §7.3.3 outage signal: a {@link ScopeResolver} fails its {@code Uni} with this (and only this) to say that
 * the live authority is <em>unavailable</em>, which opts the request into lease authorization when leases are
 * configured. Any other failure still fails loud and revokes (§3.2 rule 5); with leases off an outage is treated
 * like any other resolver failure.
 */
public final class ScopeResolverOutage extends RuntimeException {
    public ScopeResolverOutage() {
        super("the host's scope authority is unavailable", null, false, false);
    }
}
