package dev.syncular.server.testsupport;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The quickstart schema with the admin API and the console, in a storage schema of its own, with §7.3 leases issued
 * by configuration (an hour), the default five free admin attempts per source ({@code http.AdminThrottleTest} needs
 * them), and a policy whose one reaction rule plans a {@code todo.completed} reaction for a todo marked done,
 * dead-lettered on its first failure, delivered to {@link WebhookResource} with quick retries
 * ({@code console.ConsoleTest}; the other classes here push only todos not done, so no reaction and no webhook call
 * comes from them). The realtime outbound settings are {@code realtime.RealtimeBackpressureTest}'s: a 1 MiB outbound
 * buffer and delta cap, the count cap out of the way, stuck sockets closed after 2 s and 30 s heartbeats (so the idle
 * reaper does not close its stuck sockets first); the other classes' sockets read everything they are sent. One app
 * for {@code http.AdminRecoveryTest}, {@code http.AdminThrottleTest}, {@code console.ConsoleTest},
 * {@code realtime.RealtimeBackpressureTest} and {@code realtime.ClientVisibilityTest} (its stuck socket too): each distinct Quarkus test profile builds and restarts the app. Every test
 * works in a partition of its own (RealtimeBackpressureTest reads its counters as deltas); ConsoleTest takes readiness
 * down and brings it back within each of its checkpoint tests, and resets the webhook after each test.
 */
public class AdminRecoveryProfile implements QuarkusTestProfile {
    /** {@code syncular.admin.token}. */
    public static final String ADMIN_TOKEN = "admin-recovery-" + UUID.randomUUID();
    /** {@code syncular.storage.pg-schema}. */
    public static final String PG_SCHEMA =
            "sync_recovery_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    /** {@code syncular.policy.file}: written once per JVM. */
    public static final Path POLICY = policy();

    private static Path policy() {
        try {
            Path policy = Files.createTempFile("admin-recovery-policy", ".json");
            // a todo marked done plans one reaction, dead-lettered on its first failure
            Files.writeString(
                    policy,
                    "{\"reactions\":[{\"table\":\"todos\",\"when\":{\"column\":\"done\",\"equals\":true},"
                            + "\"type\":\"todo.completed\",\"maxAttempts\":1}]}");
            policy.toFile().deleteOnExit();
            return policy;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> m = new HashMap<>();
        m.put("syncular.admin.token", ADMIN_TOKEN);
        m.put("syncular.storage.pg-schema", PG_SCHEMA);
        m.put("syncular.leases.enabled", "true");
        m.put("syncular.leases.ttl", "1h");
        m.put("syncular.policy.file", POLICY.toString());
        m.put("syncular.reactions.webhook.url", "${webhook.base}/reactions");
        m.put("syncular.reactions.webhook.secret", WebhookResource.SECRET);
        m.put("syncular.reactions.initial-backoff", "50ms");
        m.put("syncular.reactions.max-backoff", "100ms");
        // RealtimeBackpressureTest: the bytes decide (the count cap would stop the stuck sockets' deltas at 64), and
        // the idle reaper stays out of the way (three silent heartbeat intervals would close them first, with 1000)
        m.put("syncular.realtime.outbound-buffer-bytes", "1M");
        m.put("syncular.realtime.max-delta-bytes", "1M");
        m.put("syncular.realtime.max-unacked-deltas", "100000");
        m.put("syncular.realtime.outbound-stuck-timeout", "2s");
        m.put("syncular.realtime.heartbeat-interval", "30s");
        return m;
    }

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(WebhookResource.class));
    }
}
