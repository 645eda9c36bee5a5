package dev.syncular.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.wire.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Base64;
import java.util.Map;

/**
 * The CLI's {@code query} and {@code command} (REMOTE.md §4, §5): a request built from plain JSON params, posted to
 * {@code <mount>/operations}, the answer printed back as plain JSON.
 *
 * <p>Params are plain JSON: strings, booleans, null, arrays and objects as such, numbers as §4 {@code number};
 * {@code {"$integer":"<decimal>"}} sends an {@code integer} and {@code {"$bytes":"<base64>"}} sends {@code bytes}.
 * Answers come back plain: {@code integer} as a number when it is a safe integer (else its decimal text),
 * {@code bytes} as base64 text.
 */
final class RemoteOperationCall {
    static final String CONTENT_TYPE = "application/vnd.syncular.operations.v1+json";
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final long MAX_SAFE = (1L << 53) - 1;

    private RemoteOperationCall() {}

    /** The encoded §5 request; {@code requestId} null for a query. */
    static byte[] request(String clientId, String operationId, String requestId, JsonNode params) {
        ObjectNode req = tagged(
                "object",
                pairs(
                        "revision", tagged("number", F.numberNode(1)),
                        "kind", tagged("string", F.textNode(requestId == null ? "query" : "command")),
                        "clientId", tagged("string", F.textNode(clientId)),
                        "operationId", tagged("string", F.textNode(operationId))));
        ArrayNode v = (ArrayNode) req.get("v");
        if (requestId != null) {
            v.add(F.arrayNode().add("requestId").add(tagged("string", F.textNode(requestId))));
        }
        v.add(F.arrayNode().add("params").add(encode(params)));
        try {
            return Json.writeValueAsBytes(req);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Plain JSON to the §4 tagged form. */
    static JsonNode encode(JsonNode n) {
        if (n == null || n.isNull()) {
            return F.objectNode().put("t", "null");
        }
        if (n.isBoolean()) {
            return tagged("boolean", n);
        }
        if (n.isNumber()) {
            return tagged("number", n);
        }
        if (n.isTextual()) {
            return tagged("string", n);
        }
        if (n.isArray()) {
            ArrayNode items = F.arrayNode();
            n.forEach(x -> items.add(encode(x)));
            return tagged("array", items);
        }
        if (n.size() == 1 && n.has("$integer") && n.get("$integer").isTextual()) {
            return tagged("integer", n.get("$integer"));
        }
        if (n.size() == 1 && n.has("$bytes") && n.get("$bytes").isTextual()) {
            return tagged("bytes", n.get("$bytes"));
        }
        ArrayNode pairs = F.arrayNode();
        for (Map.Entry<String, JsonNode> e : n.properties()) {
            pairs.add(F.arrayNode().add(e.getKey()).add(encode(e.getValue())));
        }
        return tagged("object", pairs);
    }

    /** The §4 tagged form back to plain JSON (see the class comment). */
    static JsonNode decode(JsonNode n) {
        String t = n.path("t").asText();
        JsonNode v = n.get("v");
        return switch (t) {
            case "null" -> F.nullNode();
            case "boolean", "number", "string" -> v;
            case "integer" -> {
                long value = Long.parseLong(v.asText());
                yield Math.abs(value) <= MAX_SAFE ? F.numberNode(value) : F.textNode(v.asText());
            }
            case "bytes" ->
                F.textNode(
                        Base64.getEncoder().encodeToString(Base64.getDecoder().decode(v.asText())));
            case "array" -> {
                ArrayNode out = F.arrayNode();
                v.forEach(x -> out.add(decode(x)));
                yield out;
            }
            case "object" -> {
                ObjectNode out = F.objectNode();
                v.forEach(p -> out.set(p.get(0).asText(), decode(p.get(1))));
                yield out;
            }
            default -> throw new IllegalStateException("the server answered an unknown value tag '" + t + "'");
        };
    }

    private static ObjectNode tagged(String tag, JsonNode value) {
        ObjectNode o = F.objectNode().put("t", tag);
        o.set("v", value);
        return o;
    }

    private static ArrayNode pairs(Object... kv) {
        ArrayNode a = F.arrayNode();
        for (int i = 0; i < kv.length; i += 2) {
            a.add(F.arrayNode().add((String) kv[i]).add((JsonNode) kv[i + 1]));
        }
        return a;
    }
}
