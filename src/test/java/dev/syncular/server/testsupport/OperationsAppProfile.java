package dev.syncular.server.testsupport;

import io.quarkus.test.junit.QuarkusTestProfile;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The remote-operations app (REMOTE.md): the demo fixture schema ({@code src/test/resources/operations}) in the storage
 * schema {@code operations_test}, its registered queries plus the hostile SQL shapes, privileged for the actor
 * {@code reader}, its declared commands, the admin API with the console, tracing on (the OpenTelemetry SDK exporting to
 * {@link InMemorySpans}, batches every 50 ms) and a §6.8 validator webhook ({@link WebhookResource}, answering {@code {}}
 * unless a test scripts it; none here does, {@code TracesTest} only resets it). One app for
 * {@code operations.OperationsResourceTest}, {@code operations.CommandsTest}, {@code console.ConsoleOperationsTest} and
 * {@code operations.TracesTest}: each distinct Quarkus test profile builds and restarts the app. Every test works in a
 * partition of its own; the console's counts are lower bounds other classes' calls can only raise, the spans are found
 * by partition and parent, and {@code TracesOffTest} keeps "tracing off by default" on the default app.
 */
public class OperationsAppProfile implements QuarkusTestProfile {
    public static final Path DIR = Path.of("src/test/resources/operations").toAbsolutePath();
    /** {@code syncular.admin.token}. */
    public static final String ADMIN_TOKEN = "ops-admin-" + UUID.randomUUID();

    /**
     * The schema, storage schema, queries and commands without the admin API, tracing or the webhook: the base of apps
     * that add settings the classes above must not see (a read replica), so they do not inherit this app's additions.
     */
    public static Map<String, String> base() {
        Map<String, String> m = new HashMap<>();
        m.put("syncular.schema.path", DIR.resolve("demo-react.syncular.ir.json").toString());
        m.put("syncular.storage.pg-schema", "operations_test");
        m.put(
                "syncular.operations.queries.path",
                DIR.resolve("demo-react.syncular.queries.ir.json") + "," + DIR.resolve("hostile.queries.ir.json"));
        m.put(
                "syncular.operations.queries.privileged",
                "listTodos,allTodos,aliased,aliasedAs,quoted,qualifiedColumns,"
                        + "cte,subquery,selfJoin,twice,countAll,injection,allTodosCapped,badType,nullForNonNullable,badSql");
        m.put("syncular.operations.queries.privileged-actors", "reader");
        m.put("syncular.operations.queries.max-rows-by-query.allTodosCapped", "2");
        m.put("syncular.dev-auth.allowed-scopes", "{\"list_id\":[\"l1\",\"l2\"]}");
        m.put("syncular.operations.commands.path", DIR.resolve("commands.json").toString());
        return m;
    }

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> m = base();
        m.put("syncular.admin.token", ADMIN_TOKEN);
        m.put("quarkus.otel.sdk.disabled", "false");
        m.put("quarkus.otel.bsp.schedule.delay", "50ms");
        m.put("syncular.policy.validator-webhook.url", "${webhook.base}/validate");
        m.put("syncular.policy.validator-webhook.secret", WebhookResource.SECRET);
        return m;
    }

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(WebhookResource.class));
    }
}
