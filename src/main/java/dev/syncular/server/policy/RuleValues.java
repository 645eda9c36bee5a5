package dev.syncular.server.policy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.wire.DebugJson;
import java.util.Map;

/**
 * Row values as JSON, for declarative rules and webhooks: {@link DebugJson#value} per column type ({@code bytes}
 * and {@code crdt} as base64, {@code json} and {@code blob_ref} parsed), and value equality that compares numbers
 * by value ({@code 1} equals {@code 1.0}).
 */
final class RuleValues {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private RuleValues() {}

    static JsonNode value(ColumnSchema column, Object v) {
        return DebugJson.value(column.type(), v);
    }

    /** A row keyed by column name as a JSON object, or JSON null for a missing row. */
    static JsonNode row(TableSchema table, Map<String, Object> row) {
        if (row == null) {
            return F.nullNode();
        }
        ObjectNode o = F.objectNode();
        row.forEach((name, v) -> {
            ColumnSchema c = table.column(name);
            if (c != null) {
                o.set(name, value(c, v));
            }
        });
        return o;
    }

    static boolean same(JsonNode a, JsonNode b) {
        if (a == null || b == null) {
            return a == b;
        }
        if (a.isNumber() && b.isNumber()) {
            return a.decimalValue().compareTo(b.decimalValue()) == 0;
        }
        return a.equals(b);
    }
}
