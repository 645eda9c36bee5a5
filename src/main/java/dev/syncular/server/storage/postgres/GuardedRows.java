package dev.syncular.server.storage.postgres;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.storage.QueryRows;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.wire.Json;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The answer of {@code sync_guarded_query} ({@link PushTransaction#queryRows}): the statement's rows as a JSON array
 * of objects (PostgreSQL's {@code json_agg}: keys in select-list order), or {@code {"sqlstate": ...}} when it
 * failed.
 */
final class GuardedRows {

    private GuardedRows() {}

    static QueryRows parse(String text) {
        JsonNode doc;
        try {
            doc = text == null ? null : Json.readTree(text);
        } catch (JsonProcessingException e) {
            doc = null;
        }
        if (doc == null || !doc.isArray()) {
            String state = doc == null ? "unreadable" : doc.path("sqlstate").asText("unknown");
            throw new StorageException(
                    StorageException.QUERY_FAILED, "guarded statement failed", Map.of("sqlstate", state));
        }
        List<String> columns = new ArrayList<>();
        List<List<Object>> rows = new ArrayList<>(doc.size());
        for (JsonNode row : doc) {
            List<Object> values = new ArrayList<>(row.size());
            boolean first = rows.isEmpty();
            for (Iterator<Map.Entry<String, JsonNode>> it = row.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                if (first) {
                    columns.add(e.getKey());
                }
                values.add(value(e.getValue()));
            }
            rows.add(values);
        }
        return new QueryRows(columns, rows);
    }

    private static Object value(JsonNode v) {
        if (v.isNull()) {
            return null;
        }
        if (v.isTextual()) {
            return v.asText();
        }
        if (v.isBoolean()) {
            return v.asBoolean();
        }
        if (v.isIntegralNumber()) {
            return v.canConvertToLong() ? (Object) v.asLong() : v.decimalValue();
        }
        if (v.isNumber()) {
            return v.asDouble();
        }
        return v.toString(); // a json column's value
    }
}
