package dev.syncular.server.storage;

import dev.syncular.server.wire.JsonText;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * One durable server reaction a planner returned for a new commit (§6.9 "planned record"), checked at
 * construction: {@code key} non-empty and at most 256 UTF-8 bytes, {@code type} a code-like name of at most 128
 * bytes, {@code version} positive, {@code payloadJson} a JSON document of at most 65,536 bytes and 16 levels,
 * {@code maxAttempts} from 1 through 100. An invalid record fails the push transaction before commit.
 */
public record PlannedReaction(String key, String type, int version, String payloadJson, int maxAttempts) {
    public static final int DEFAULT_MAX_ATTEMPTS = 10;
    public static final int MAX_PER_COMMIT = 100;
    public static final int MAX_PAYLOAD_BYTES = 65_536;
    private static final Pattern TYPE = Pattern.compile("[A-Za-z][A-Za-z0-9]*([._-][A-Za-z0-9]+)*");

    public PlannedReaction {
        if (key == null || key.isEmpty() || key.getBytes(StandardCharsets.UTF_8).length > 256) {
            throw new IllegalArgumentException("reaction key must be 1-256 UTF-8 bytes (§6.9)");
        }
        if (type == null
                || type.getBytes(StandardCharsets.UTF_8).length > 128
                || !TYPE.matcher(type).matches()) {
            throw new IllegalArgumentException("reaction type must be a code-like name of at most 128 bytes (§6.9)");
        }
        if (version < 1) {
            throw new IllegalArgumentException("reaction version must be a positive 32-bit integer (§6.9)");
        }
        if (maxAttempts < 1 || maxAttempts > 100) {
            throw new IllegalArgumentException("reaction maxAttempts must be 1-100 (§6.9)");
        }
        if (payloadJson == null
                || payloadJson.getBytes(StandardCharsets.UTF_8).length > MAX_PAYLOAD_BYTES
                || depth(payloadJson) > 16) {
            throw new IllegalArgumentException(
                    "reaction payload must be JSON of at most 65,536 bytes and 16 levels (§6.9)");
        }
        JsonText.requireDocument(payloadJson);
    }

    private static int depth(String json) {
        int depth = 0;
        int max = 0;
        boolean inString = false;
        for (int i = 0; i < json.length(); i++) {
            char c = json.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                max = Math.max(max, ++depth);
            } else if (c == '}' || c == ']') {
                depth--;
            }
        }
        return max;
    }
}
