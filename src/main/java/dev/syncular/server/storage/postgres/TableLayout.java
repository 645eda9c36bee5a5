package dev.syncular.server.storage.postgres;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.wire.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A persisted per-table layout: primary key and (name, type, nullable) columns in declaration order — the
 * {@code layouts} of the {@code sync_schema} marker that §2.4 same-version readiness compares against the
 * running schema ({@code sync.storage.stored_layout_mismatch}) and an additive upgrade extends.
 */
record TableLayout(String primaryKey, List<ColumnLayout> columns) {
    record ColumnLayout(String name, String type, boolean nullable) {}

    static TableLayout of(TableSchema ts) {
        List<ColumnLayout> cols = new ArrayList<>();
        for (ColumnSchema c : ts.columns()) {
            cols.add(new ColumnLayout(c.name(), c.type().wireName, c.nullable()));
        }
        return new TableLayout(ts.primaryKey(), cols);
    }

    static String render(CompiledSchema s) {
        ObjectNode root = Json.object();
        root.put("schemaVersion", s.version());
        ObjectNode tablesNode = root.putObject("tables");
        for (TableSchema ts : s.tables()) {
            TableLayout l = of(ts);
            ObjectNode tn = tablesNode.putObject(ts.name());
            tn.put("primaryKey", l.primaryKey());
            ArrayNode cols = tn.putArray("columns");
            for (ColumnLayout c : l.columns()) {
                cols.addObject().put("name", c.name()).put("type", c.type()).put("nullable", c.nullable());
            }
        }
        return root.toString();
    }

    static Map<String, TableLayout> parse(String json) {
        Map<String, TableLayout> out = new LinkedHashMap<>();
        try {
            JsonNode tablesNode = Json.readTree(json).path("tables");
            var it = tablesNode.fields();
            while (it.hasNext()) {
                var e = it.next();
                List<ColumnLayout> cols = new ArrayList<>();
                for (JsonNode c : e.getValue().path("columns")) {
                    cols.add(new ColumnLayout(
                            c.path("name").asText(),
                            c.path("type").asText(),
                            c.path("nullable").asBoolean()));
                }
                out.put(
                        e.getKey(),
                        new TableLayout(e.getValue().path("primaryKey").asText(), cols));
            }
        } catch (JsonProcessingException | RuntimeException e) {
            throw new StorageException(
                    StorageException.STORED_LAYOUT_MISMATCH, "persisted layouts are unreadable", Map.of(), e);
        }
        return out;
    }

    /** §2.4 case 1; {@code null} when the persisted layouts equal the running schema's. */
    static StorageException compare(CompiledSchema running, Map<String, TableLayout> stored) {
        for (TableSchema ts : running.tables()) {
            TableLayout before = stored.get(ts.name());
            if (before == null) {
                return mismatch(ts.name(), null);
            }
            TableLayout now = of(ts);
            int n = Math.max(before.columns().size(), now.columns().size());
            for (int i = 0; i < n; i++) {
                ColumnLayout a = i < before.columns().size() ? before.columns().get(i) : null;
                ColumnLayout b = i < now.columns().size() ? now.columns().get(i) : null;
                if (!Objects.equals(a, b)) {
                    return mismatch(ts.name(), b != null ? b.name() : a.name());
                }
            }
            if (!before.primaryKey().equals(now.primaryKey())) {
                return mismatch(ts.name(), now.primaryKey());
            }
        }
        for (String name : stored.keySet()) {
            if (running.table(name) == null) {
                return mismatch(name, null);
            }
        }
        return null;
    }

    private static StorageException mismatch(String table, String column) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("table", table);
        if (column != null) {
            d.put("column", column);
        }
        return new StorageException(
                StorageException.STORED_LAYOUT_MISMATCH, "persisted table layouts differ from the running schema", d);
    }
}
