package dev.syncular.server.storage.postgres;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.Json;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The stored scopes of a change, a row or a blob reference (§3.1) as the {@code jsonb} text the storage
 * writes ({@link #scopesJson}) and reads back ({@link #parseScopes}, cached by text).
 */
final class StoredScopes {
    private StoredScopes() {}

    /** Stored scopes as a JSON object, keys sorted (written per change and per row: no ObjectMapper round). */
    static String scopesJson(Map<String, String> scopes) {
        String[] keys = scopes.keySet().toArray(new String[0]);
        Arrays.sort(keys);
        StringBuilder sb = new StringBuilder(16 + 24 * keys.length).append('{');
        for (int i = 0; i < keys.length; i++) {
            if (i > 0) {
                sb.append(',');
            }
            CanonicalJson.string(sb, keys[i]);
            sb.append(':');
            String v = scopes.get(keys[i]);
            if (v == null) {
                sb.append("null");
            } else {
                CanonicalJson.string(sb, v);
            }
        }
        return sb.append('}').toString();
    }

    private static final int SCOPES_CACHE_MAX = 4096;
    /**
     * Parsed stored-scopes documents by their text: a partition's changes and rows repeat a handful of scope
     * combinations, so each is parsed once. Bounded (cleared when full); the maps are unmodifiable.
     */
    private static final ConcurrentHashMap<String, Map<String, String>> SCOPES_CACHE = new ConcurrentHashMap<>();

    static Map<String, String> parseScopes(String json) {
        Map<String, String> cached = SCOPES_CACHE.get(json);
        if (cached != null) {
            return cached;
        }
        Map<String, String> parsed;
        try {
            parsed = Collections.unmodifiableMap(
                    Json.readValue(json, new TypeReference<LinkedHashMap<String, String>>() {}));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored scopes are not a JSON object", e);
        }
        if (SCOPES_CACHE.size() >= SCOPES_CACHE_MAX) {
            SCOPES_CACHE.clear();
        }
        SCOPES_CACHE.put(json, parsed);
        return parsed;
    }
}
