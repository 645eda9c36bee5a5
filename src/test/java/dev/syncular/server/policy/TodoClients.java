package dev.syncular.server.policy;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.SyncTestClient;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Clients of the bundled quickstart schema's {@code todos} (list {@code l1}) on one partition of the running app. */
record TodoClients(CompiledSchema schema, int port, String partition) {

    /** A new client of {@code actor}, subscribed to list {@code l1} and bootstrapped. */
    SyncTestClient client(String actor) {
        SyncTestClient c = new SyncTestClient(
                        schema,
                        new HttpTransport("http://localhost:" + port, partition),
                        actor,
                        actor + "-" + UUID.randomUUID())
                .subscribe("todos", "todos", Map.of("list_id", List.of("l1")));
        c.syncUntilIdle();
        return c;
    }

    static Map<String, Object> todo(String id, String title, boolean done) {
        return Map.of("id", id, "list_id", "l1", "title", title, "done", done, "position", 1L, "updated_at_ms", 0L);
    }
}
