package dev.syncular.server.auth;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.schema.ScopePattern;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.sync.EffectiveScopes;
import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.wire.Json;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Development scope resolver (§3.2 {@code resolveScopes}): every actor gets the same allowed scopes, from
 * {@code syncular.dev-auth.allowed-scopes} (a JSON object of variable → values), or by default
 * {@code "*"} for every scope variable of the running schema. Produced by {@code boot.AuthProducer} (a
 * {@code @DefaultBean}) when JWT is not configured: a host declaring its own {@link ScopeResolver} bean replaces it.
 */
public class ConfiguredScopeResolver implements ScopeResolver {
    private final Map<String, List<String>> allowed;

    public ConfiguredScopeResolver(DevAuthConfig config, SchemaWindow window) {
        this.allowed = allowedScopes(config.allowedScopes(), window.current());
    }

    @Override
    public Uni<Map<String, List<String>>> resolveScopes(String actorId, String partition) {
        return Uni.createFrom().item(allowed);
    }

    public Map<String, List<String>> allowed() {
        return allowed;
    }

    /** Parses and validates the configured map; fails start-up with a clear message when it is wrong. */
    static Map<String, List<String>> allowedScopes(Optional<String> json, CompiledSchema schema) {
        Map<String, List<String>> out = new TreeMap<>();
        if (json.isEmpty() || json.get().isBlank()) {
            for (TableSchema t : schema.tables()) {
                for (ScopePattern p : t.scopePatterns()) {
                    out.put(p.variable(), List.of(EffectiveScopes.WILDCARD));
                }
            }
            return Collections.unmodifiableMap(out);
        }
        JsonNode root;
        try {
            root = Json.readTree(json.get());
        } catch (Exception e) {
            throw invalid("is not valid JSON");
        }
        if (root == null || !root.isObject()) {
            throw invalid("must be a JSON object of scope variable -> array of values");
        }
        Map<String, List<String>> parsed = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isArray()) {
                throw invalid("value of \"" + e.getKey() + "\" must be an array of strings");
            }
            List<String> values = new ArrayList<>();
            for (JsonNode v : e.getValue()) {
                if (!v.isTextual()) {
                    throw invalid("value of \"" + e.getKey() + "\" must be an array of strings");
                }
                values.add(v.asText());
            }
            parsed.put(e.getKey(), List.copyOf(values));
        }
        try {
            EffectiveScopes.validateAllowed(schema, parsed);
        } catch (RuntimeException e) {
            throw invalid("names a scope variable that no table of the schema declares");
        }
        out.putAll(parsed);
        return Collections.unmodifiableMap(out);
    }

    private static ConfigurationException invalid(String why) {
        return new ConfigurationException(
                "syncular.dev-auth.allowed-scopes " + why + " (example: {\"list_id\":[\"*\"]})");
    }
}
