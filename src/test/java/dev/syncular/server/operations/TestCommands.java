package dev.syncular.server.operations;

import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The remote commands {@link CommandsTest} calls (REMOTE.md §3): CDI beans of the test application, as a team would
 * ship its own. Each counts how often its {@code run} was called, so a test can prove a retry did not run it again.
 */
final class TestCommands {
    private TestCommands() {}

    /** {@code {id, list, title}}: renames a todo (keeping its other columns) or creates it; counts its runs. */
    @ApplicationScoped
    static class RenameTodo implements RemoteCommand {
        static final AtomicInteger RUNS = new AtomicInteger();

        @Override
        public String id() {
            return "test.renameTodo";
        }

        @Override
        public Uni<Boolean> authorize(Call call) {
            return Uni.createFrom().item(!"mallory".equals(call.actorId()));
        }

        @Override
        public Uni<List<Mutation>> run(Call call, Rows rows) {
            RUNS.incrementAndGet();
            @SuppressWarnings("unchecked")
            Map<String, Object> p = (Map<String, Object>) call.params();
            String id = (String) p.get("id");
            return rows.getRow("todos", id).map(found -> {
                Map<String, Object> row = new LinkedHashMap<>(
                        found.orElseGet(() -> Map.of("id", id, "done", false, "position", 1L, "updated_at_ms", 1L)));
                row.put("list_id", p.get("list"));
                row.put("title", p.get("title"));
                return List.of(Mutation.upsert("todos", id, row));
            });
        }
    }

    /** Returns no mutations: {@code operation.invalid_request}. */
    @ApplicationScoped
    static class Nothing implements RemoteCommand {
        @Override
        public String id() {
            return "test.nothing";
        }

        @Override
        public Uni<Boolean> authorize(Call call) {
            return Uni.createFrom().item(true);
        }

        @Override
        public Uni<List<Mutation>> run(Call call, Rows rows) {
            return Uni.createFrom().item(List.of());
        }
    }

    /** Fails inside the transaction: a request failure, nothing stored. */
    @ApplicationScoped
    static class Boom implements RemoteCommand {
        @Override
        public String id() {
            return "test.boom";
        }

        @Override
        public Uni<Boolean> authorize(Call call) {
            return Uni.createFrom().item(true);
        }

        @Override
        public Uni<List<Mutation>> run(Call call, Rows rows) {
            throw new IllegalStateException("command bug with a secret 7f3c in its message");
        }
    }

    /** {@code {id, list, attachment}}: writes a todo whose {@code attachment} ({@code blob_ref}) is the given text. */
    @ApplicationScoped
    static class AttachToTodo implements RemoteCommand {
        @Override
        public String id() {
            return "test.attach";
        }

        @Override
        public Uni<Boolean> authorize(Call call) {
            return Uni.createFrom().item(true);
        }

        @Override
        public Uni<List<Mutation>> run(Call call, Rows rows) {
            @SuppressWarnings("unchecked")
            Map<String, Object> p = (Map<String, Object>) call.params();
            String id = (String) p.get("id");
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("id", id);
            row.put("list_id", p.get("list"));
            row.put("title", "with attachment");
            row.put("done", false);
            row.put("position", 1L);
            row.put("updated_at_ms", 1L);
            row.put("attachment", p.get("attachment"));
            return Uni.createFrom().item(List.of(Mutation.upsert("todos", id, row)));
        }
    }
}
