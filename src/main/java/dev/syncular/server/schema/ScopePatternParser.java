package dev.syncular.server.schema;

import static dev.syncular.server.schema.SchemaException.q;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Scope patterns (§3.1): reads a table's declared {@code scopes} — {@code 'prefix:{variable}'} strings or
 * {@code {pattern, variable, column}} objects — into {@link SchemaIr.Scope}s for {@link SchemaIrParser}, and
 * splits a pattern into its literal prefix and its variable for {@link SchemaCompiler} (exactly one
 * {@code {variable}} per pattern; the prefix makes the scope key {@code prefix:value}). Every other shape
 * is a {@link SchemaException} at schema-compile time.
 */
final class ScopePatternParser {

    /** A pattern's literal prefix (before {@code ":{"}) and its variable name (inside the braces). */
    record Parts(String prefix, String variable) {}

    private ScopePatternParser() {}

    /** An absent, null or empty {@code scopes} reads as no scopes; the §3.1 "at least one" is the compiler's. */
    static List<SchemaIr.Scope> readScopes(JsonNode t, String table) {
        String where = "table " + q(table);
        JsonNode scopes = SchemaIrParser.optionalArray(
                t, "scopes", table, "scopes_missing", where + ": \"scopes\" must be an array of scope patterns");
        List<SchemaIr.Scope> out = new ArrayList<>();
        for (int i = 0; scopes != null && i < scopes.size(); i++) {
            JsonNode s = scopes.get(i);
            if (s.isTextual()) {
                out.add(new SchemaIr.Scope(s.textValue(), null, null));
            } else if (s.isObject()) {
                String pattern = SchemaIrParser.requireString(s, "pattern", table, null, where + " scopes[" + i + "]");
                String variable = null;
                String column = null;
                JsonNode v = s.get("variable");
                if (v != null && !v.isNull()) {
                    if (!v.isTextual()) {
                        throw SchemaException.reason("scope_pattern_invalid")
                                .table(table)
                                .with("pattern", pattern)
                                .error(where + ": scope pattern " + q(pattern) + " has a non-string \"variable\"");
                    }
                    variable = v.textValue();
                }
                JsonNode cn = s.get("column");
                if (cn != null && !cn.isNull()) {
                    if (!cn.isTextual() || cn.textValue().isEmpty()) {
                        throw SchemaException.reason("scope_pattern_invalid")
                                .table(table)
                                .with("pattern", pattern)
                                .error(where + ": scope pattern " + q(pattern) + " has an invalid \"column\"");
                    }
                    column = cn.textValue();
                }
                out.add(new SchemaIr.Scope(pattern, variable, column));
            } else {
                throw SchemaException.reason("scope_pattern_invalid")
                        .table(table)
                        .error(where + ": scopes[" + i + "] must be a pattern string or an object {pattern, column}");
            }
        }
        return out;
    }

    /** @param table the declaring table, for the diagnostic */
    static Parts parse(String pattern, String table) {
        String where = "table " + q(table);
        int open = pattern.indexOf('{');
        int close = pattern.indexOf('}');
        boolean one = open >= 0
                && close > open + 1
                && pattern.indexOf('{', open + 1) < 0
                && pattern.indexOf('}', close + 1) < 0;
        if (!one) {
            throw SchemaException.reason("scope_pattern_variable_count")
                    .table(table)
                    .with("pattern", pattern)
                    .error(where + ": scope pattern " + q(pattern) + " must contain exactly one {variable}");
        }
        String variable = pattern.substring(open + 1, close);
        if (!SchemaCompiler.IDENTIFIER.matcher(variable).matches()) {
            throw SchemaException.reason("scope_variable_invalid")
                    .table(table)
                    .with("pattern", pattern)
                    .with("variable", variable)
                    .error(where + ": scope pattern " + q(pattern) + " has an invalid variable name " + q(variable)
                            + " (letters, digits and underscores, not starting with a digit)");
        }
        if (close != pattern.length() - 1 || open < 2 || pattern.charAt(open - 1) != ':') {
            throw SchemaException.reason("scope_pattern_shape")
                    .table(table)
                    .with("pattern", pattern)
                    .error(
                            where + ": scope pattern " + q(pattern)
                                    + " must have the form 'prefix:{variable}' (a non-empty literal prefix, ':', then the variable)");
        }
        String prefix = pattern.substring(0, open - 1);
        for (int i = 0; i < prefix.length(); i++) {
            char ch = prefix.charAt(i);
            if (Character.isWhitespace(ch) || Character.isISOControl(ch)) {
                throw SchemaException.reason("scope_pattern_shape")
                        .table(table)
                        .with("pattern", pattern)
                        .error(where + ": scope pattern " + q(pattern)
                                + " has whitespace or a control character in its prefix");
            }
        }
        return new Parts(prefix, variable);
    }
}
