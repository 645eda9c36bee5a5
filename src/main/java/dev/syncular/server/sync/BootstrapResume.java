package dev.syncular.server.sync;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.StorableText;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.Json;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A parsed §4.7 resume token ({@code SUB_END.bootstrapState}): the bootstrap's pin and the row cursor the
 * next rows page (§5.2) starts after.
 */
record BootstrapResume(long asOfCommitSeq, String rowCursor) {

    /**
     * §4.7: a token that does not parse, names other tables, was pinned below the horizon, or whose row cursor
     * the storage cannot compare (U+0000, {@link StorableText}) restarts fresh — never a request error.
     */
    static BootstrapResume parse(String token, TableSchema table, PartitionState state) {
        if (token == null) {
            return null;
        }
        try {
            JsonNode n = Json.readTree(token);
            JsonNode tables = n.get("tables");
            JsonNode asOf = n.get("asOfCommitSeq");
            JsonNode index = n.get("tableIndex");
            JsonNode cursor = n.get("rowCursor");
            if (tables == null
                    || !tables.isArray()
                    || tables.size() != 1
                    || !table.name().equals(tables.get(0).asText())
                    || asOf == null
                    || !asOf.canConvertToExactIntegral()
                    || index == null
                    || index.asInt(-1) != 0
                    || cursor == null
                    || !(cursor.isNull() || cursor.isTextual())
                    || (cursor.isTextual() && !StorableText.storable(cursor.asText()))) {
                return null;
            }
            long pin = asOf.asLong();
            if (pin < state.horizonSeq() || pin > state.maxCommitSeq()) {
                return null;
            }
            return new BootstrapResume(pin, cursor.isNull() ? null : cursor.asText());
        } catch (Exception e) {
            return null;
        }
    }

    /** The token a page that stops mid-table hands back, to resume after {@code rowCursor} at pin {@code asOf}. */
    static String token(long asOf, String table, String rowCursor) {
        Map<String, Object> token = new LinkedHashMap<>();
        token.put("asOfCommitSeq", asOf);
        token.put("tables", List.of(table));
        token.put("tableIndex", 0);
        token.put("rowCursor", rowCursor);
        return CanonicalJson.write(token);
    }
}
