package dev.syncular.server.testsupport;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.util.Map;
import java.util.UUID;

/**
 * The quickstart schema with the admin API, in a storage schema of its own: an event buffer of 50, a retention policy
 * that lets {@code POST /admin/prune} remove every commit but a partition's newest at once (the scheduled pass runs
 * only after an hour), 1000 free admin attempts per source ({@code http.AdminApiTest} refuses every route with a
 * missing and a wrong token), §8.6 presence off ({@code realtime.PresenceDisabledTest}; {@code PresenceTest} keeps "on
 * by default" on the default app, and no other class here uses presence), and a small request cap with a small buffer
 * budget ({@code realtime.SocketRoundCapTest}: 256 KiB and 1 MiB, so the rounds past them stay quick; the other
 * classes' bodies and responses are a few KiB, and that class reads the budget against a baseline). One app for
 * {@code http.AdminApiTest}, {@code realtime.OperatorDisconnectTest}, {@code realtime.PresenceDisabledTest} and
 * {@code realtime.SocketRoundCapTest}: each distinct Quarkus test profile builds and restarts the app. Every test works
 * in a partition of its own.
 */
public class QuickstartAdminProfile implements QuarkusTestProfile {
    /** {@code syncular.admin.token}. */
    public static final String ADMIN_TOKEN = "admin-" + UUID.randomUUID();
    /** {@code syncular.storage.pg-schema}. */
    public static final String PG_SCHEMA =
            "sync_qsadmin_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.ofEntries(
                // AdminApiTest reads the OpenAPI document, which the other test apps do not build
                // (application.properties)
                Map.entry("mp.openapi.scan.disable", "false"),
                Map.entry("syncular.admin.token", ADMIN_TOKEN),
                Map.entry("syncular.admin.event-buffer", "50"),
                Map.entry("syncular.storage.pg-schema", PG_SCHEMA),
                Map.entry("syncular.pruning.keep-newest-commits", "1"),
                Map.entry("syncular.pruning.active-window", "0s"),
                // AdminApiTest refuses every route once with a wrong token: more than the default allows a source
                Map.entry("syncular.admin.free-attempts", "1000"),
                Map.entry("syncular.realtime.presence-enabled", "false"),
                Map.entry("syncular.max-request-bytes", "256K"),
                Map.entry("syncular.limits.buffer-budget", "1M"));
    }
}
