package dev.syncular.server.config;

import org.eclipse.microprofile.config.ConfigProvider;

/**
 * Whether this process answers requests: a server does; a one-shot command of the packaged app (the backfill,
 * {@code boot.ServerMain}) starts with its HTTP listener off ({@code quarkus.http.host-enabled=false}) and answers
 * none. What exists only for requests — how they are authenticated, the keys of the segment URLs and leases handed
 * to clients — is neither required nor built for a command.
 */
public final class ServesRequests {
    private ServesRequests() {}

    /** {@code false} for a one-shot command. */
    public static boolean thisProcess() {
        return ConfigProvider.getConfig()
                .getOptionalValue("quarkus.http.host-enabled", Boolean.class)
                .orElse(true);
    }
}
