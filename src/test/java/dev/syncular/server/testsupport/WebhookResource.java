package dev.syncular.server.testsupport;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import java.util.Map;

/**
 * Starts one {@link TestWebhook} before the app and points both webhooks of the application policy at it: the
 * validator webhook at {@code /validate} and reaction delivery at {@code /reactions}, signed with {@link #SECRET}.
 * The policy itself (a validator webhook or not, which reaction rules) is the test profile's choice: this resource
 * sets only where the endpoints are, through the {@code webhook.base} property the profiles reference.
 */
public final class WebhookResource implements QuarkusTestResourceLifecycleManager {
    public static final String SECRET = "test-webhook-secret-0123456789abcdef";
    public static volatile TestWebhook hook;

    @Override
    public Map<String, String> start() {
        hook = new TestWebhook();
        return Map.of("webhook.base", hook.url(""));
    }

    @Override
    public void stop() {
        if (hook != null) {
            hook.close();
        }
    }
}
