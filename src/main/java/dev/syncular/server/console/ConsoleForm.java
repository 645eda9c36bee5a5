package dev.syncular.server.console;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The fields of a console form ({@code application/x-www-form-urlencoded}), read by the console itself after the
 * session check and under {@link ConsoleAccess#MAX_FORM_BYTES}: the last value of each field counts.
 */
public record ConsoleForm(Map<String, String> fields) {
    public ConsoleForm {
        fields = Map.copyOf(fields);
    }

    /** Parses a urlencoded body; a malformed escape is an {@link IllegalArgumentException} (400). */
    static ConsoleForm parse(String body) {
        Map<String, String> out = new HashMap<>();
        if (body != null && !body.isEmpty()) {
            for (String pair : body.split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                out.put(k, v);
            }
        }
        return new ConsoleForm(out);
    }

    /** The field's value, or {@code ""} when absent. */
    public String get(String name) {
        return fields.getOrDefault(name, "");
    }
}
