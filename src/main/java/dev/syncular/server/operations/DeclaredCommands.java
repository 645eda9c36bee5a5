package dev.syncular.server.operations;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.wire.ColumnType;
import dev.syncular.server.wire.Json;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Reads the declared-commands document ({@code syncular.operations.commands.path}, docs/OPERATIONS.md):
 *
 * <pre>{"commands": [{"id": "todos.rename", "table": "todos", "op": "update", "row": "id",
 *   "set": {"title": {"param": "title"}, "done": false}, "actors": ["*"]}]}</pre>
 *
 * {@code op} is {@code update} (the row must exist), {@code upsert} or {@code delete}; {@code row} names the param
 * holding the row id (tables with a string primary key); {@code set} maps columns to constants or
 * {@code {"param": name}}; {@code actors} lists who may run it ({@code *}: everyone authenticated). Anything the
 * schema does not have, or a malformed entry, is an {@link IllegalArgumentException} naming it.
 */
public final class DeclaredCommands {

    private DeclaredCommands() {}

    public static List<RemoteCommand> load(byte[] document, CompiledSchema schema) {
        JsonNode root;
        try {
            root = Json.readTree(document);
        } catch (IOException e) {
            throw new IllegalArgumentException("not JSON (" + e.getClass().getSimpleName() + ")");
        }
        if (root == null || !root.path("commands").isArray()) {
            throw new IllegalArgumentException("the document needs a \"commands\" array");
        }
        List<RemoteCommand> out = new ArrayList<>();
        Set<String> ids = new LinkedHashSet<>();
        for (JsonNode c : root.get("commands")) {
            String id = text(c, "id", "");
            if (!ids.add(id)) {
                throw new IllegalArgumentException("the command id " + id + " is declared twice");
            }
            String where = "command " + id;
            TableSchema table = schema.table(text(c, "table", where));
            if (table == null) {
                throw new IllegalArgumentException(where + ": the schema has no table " + c.get("table"));
            }
            if (table.primaryKeyColumn().type() != ColumnType.STRING) {
                throw new IllegalArgumentException(where + ": declared commands need a string primary key");
            }
            DeclaredCommand.Kind kind;
            try {
                kind = DeclaredCommand.Kind.valueOf(text(c, "op", where).toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": op must be update, upsert or delete");
            }
            Map<String, DeclaredCommand.Value> set = new LinkedHashMap<>();
            JsonNode s = c.path("set");
            if (kind != DeclaredCommand.Kind.DELETE && (!s.isObject() || s.isEmpty())) {
                throw new IllegalArgumentException(where + ": set must name the columns written");
            }
            for (Map.Entry<String, JsonNode> e : s.properties()) {
                if (table.column(e.getKey()) == null || e.getKey().equals(table.primaryKey())) {
                    throw new IllegalArgumentException(
                            where + ": " + table.name() + " has no writable column " + e.getKey());
                }
                JsonNode v = e.getValue();
                set.put(
                        e.getKey(),
                        v.isObject()
                                        && v.size() == 1
                                        && v.get("param") != null
                                        && v.get("param").isTextual()
                                ? new DeclaredCommand.Value(v.get("param").asText(), null)
                                : new DeclaredCommand.Value(null, constant(v)));
            }
            Set<String> actors = new LinkedHashSet<>();
            c.path("actors").forEach(a -> actors.add(a.asText()));
            if (actors.isEmpty()) {
                throw new IllegalArgumentException(where + ": actors must list who may run it (or \"*\")");
            }
            out.add(new DeclaredCommand(id, table, kind, text(c, "row", where), set, actors));
        }
        return out;
    }

    private static String text(JsonNode c, String field, String where) {
        JsonNode v = c.get(field);
        if (v == null || !v.isTextual() || v.asText().isEmpty()) {
            throw new IllegalArgumentException((where.isEmpty() ? "a command" : where) + " needs \"" + field + "\"");
        }
        return v.asText();
    }

    private static Object constant(JsonNode v) {
        if (v.isNull()) {
            return null;
        }
        if (v.isBoolean()) {
            return v.booleanValue();
        }
        if (v.isIntegralNumber()) {
            return v.longValue();
        }
        if (v.isNumber()) {
            return v.doubleValue();
        }
        if (v.isTextual()) {
            return v.textValue();
        }
        throw new IllegalArgumentException("a declared value must be null, a boolean, a number or a string");
    }
}
