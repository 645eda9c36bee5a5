package dev.syncular.server.round;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.wire.Json;
import java.util.Map;

/**
 * The §10.1 error JSON: {@code code, category, retryable, recommendedAction, message} plus {@code details}
 * when present. Built as a Jackson tree (no reflection over user types, so native images need no
 * registration).
 */
public final class ErrorBodies {
    private ErrorBodies() {}

    public static ObjectNode body(ErrorCode code, String message, Map<String, Object> details) {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("code", code.code);
        n.put("category", code.category);
        n.put("retryable", code.retryable);
        n.put("recommendedAction", code.recommendedAction);
        n.put("message", message == null || message.isBlank() ? defaultMessage(code) : message);
        if (details != null && !details.isEmpty()) {
            JsonNode d = Json.valueToTree(details);
            n.set("details", d);
        }
        return n;
    }

    static String defaultMessage(ErrorCode code) {
        return switch (code) {
            case INTERNAL_ERROR -> "internal server error";
            case NOT_FOUND -> "not found";
            case AUTH_REQUIRED -> "authentication required";
            default -> code.code;
        };
    }
}
