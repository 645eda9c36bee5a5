package dev.syncular.server.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The bounded {@code detailsJson} object of {@code PUSH_RESULT_DETAILS} (§6.3.1): only {@code fieldPaths},
 * {@code reason}, {@code requiredAction} and {@code references}, at least one, each within its limits,
 * at most 4,096 encoded bytes. Any violation is a decode error.
 */
public final class RecoveryDetails {
    private static final JsonFactory JSON = JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .build();
    private static final Pattern TOKEN = Pattern.compile("[a-z][a-z0-9]*([._-][a-z0-9]+)*");
    private static final Pattern PATH = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*");
    public static final int MAX_BYTES = 4096;

    private RecoveryDetails() {}

    public static void require(String json) {
        if (json.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
            throw bad();
        }
        JsonText.requireDocument(json);
        try (JsonParser p = JSON.createParser(json)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw bad();
            }
            int members = 0;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                p.nextToken();
                switch (name) {
                    case "fieldPaths" -> fieldPaths(p);
                    case "reason", "requiredAction" -> token(p, 96);
                    case "references" -> references(p);
                    default -> throw bad();
                }
                members++;
            }
            if (members == 0) {
                throw bad();
            }
        } catch (IOException e) {
            throw bad();
        }
    }

    public static boolean isValid(String json) {
        try {
            require(json);
            return true;
        } catch (WireException e) {
            return false;
        }
    }

    private static void token(JsonParser p, int max) throws IOException {
        if (p.currentToken() != JsonToken.VALUE_STRING) {
            throw bad();
        }
        String t = p.getText();
        if (t.length() > max || !TOKEN.matcher(t).matches()) {
            throw bad();
        }
    }

    private static void fieldPaths(JsonParser p) throws IOException {
        if (p.currentToken() != JsonToken.START_ARRAY) {
            throw bad();
        }
        Set<String> seen = new HashSet<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
            if (p.currentToken() != JsonToken.VALUE_STRING) {
                throw bad();
            }
            String path = p.getText();
            if (path.length() > 160 || !PATH.matcher(path).matches() || !seen.add(path)) {
                throw bad();
            }
        }
        if (seen.isEmpty() || seen.size() > 32) {
            throw bad();
        }
    }

    private static void references(JsonParser p) throws IOException {
        if (p.currentToken() != JsonToken.START_OBJECT) {
            throw bad();
        }
        int n = 0;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String key = p.currentName();
            if (key.length() > 64 || !TOKEN.matcher(key).matches()) {
                throw bad();
            }
            if (p.nextToken() != JsonToken.VALUE_STRING) {
                throw bad();
            }
            String v = p.getText();
            if (v.isEmpty()
                    || !v.equals(v.strip())
                    || v.getBytes(StandardCharsets.UTF_8).length > 256
                    || v.chars().anyMatch(Character::isISOControl)) {
                throw bad();
            }
            n++;
        }
        if (n == 0 || n > 16) {
            throw bad();
        }
    }

    private static WireException bad() {
        return WireException.invalid("push result details violate the bounded shape");
    }
}
