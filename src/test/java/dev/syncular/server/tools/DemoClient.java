package dev.syncular.server.tools;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.DebugJson;
import dev.syncular.server.wire.Message;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A walkthrough against a running server (the README's "watch it work"): Alice pushes a todo, Bob
 * bootstraps the list and sees it, Alice edits it with optimistic concurrency, Bob pulls the change.
 * Every response is printed as its §11.1 debug rendering. Uses the bundled quickstart schema and the
 * development authenticator ({@code x-actor-id}).
 *
 * <p>Run: {@code bench/demo.sh [http://localhost:8080]}
 */
public final class DemoClient {
    private DemoClient() {
    }

    public static void main(String[] args) throws Exception {
        String base = args.length > 0 ? args[0] : "http://localhost:8080";
        CompiledSchema schema;
        try (InputStream in = DemoClient.class.getResourceAsStream("/schema/quickstart.syncular.ir.json")) {
            schema = SchemaLoader.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
        HttpTransport http = new HttpTransport(base, null);
        Map<String, List<String>> groceries = Map.of("list_id", List.of("groceries"));
        String run = Long.toString(System.currentTimeMillis(), 36);
        SyncTestClient alice = new SyncTestClient(schema, http, "alice", "alice-" + run).subscribe("todos", "todos", groceries);
        SyncTestClient bob = new SyncTestClient(schema, http, "bob", "bob-" + run).subscribe("todos", "todos", groceries);

        step("Alice acquires the partition's log epoch (§2.1)", alice.sync());
        String id = "todo-" + run;
        Map<String, Object> todo = new LinkedHashMap<>();
        todo.put("id", id);
        todo.put("list_id", "groceries");
        todo.put("title", "Buy milk");
        todo.put("done", false);
        todo.put("position", 1L);
        todo.put("updated_at_ms", System.currentTimeMillis());
        alice.upsert("todos", todo, null);
        step("Alice pushes a todo and pulls in the same round", alice.sync());

        bob.sync();
        step("Bob bootstraps the groceries list (rows segment, §5)", bob.sync());
        long version = bob.table("todos").get(id).version();
        System.out.println("Bob now holds " + bob.table("todos").size() + " todo(s); " + id + " is at version " + version);

        alice.upsert("todos", Map.of("id", id, "title", "Buy oat milk", "updated_at_ms", System.currentTimeMillis()), version);
        step("Alice edits the title with baseVersion " + version + " (§6.2)", alice.sync());
        step("Bob pulls the change incrementally (§4.5)", bob.sync());
        System.out.println("Bob's copy of " + id + ": title = " + bob.table("todos").get(id).values()[2]);
    }

    private static void step(String title, Message response) {
        System.out.println("\n== " + title);
        System.out.println(DebugJson.toText(DebugJson.render(response)));
    }
}
