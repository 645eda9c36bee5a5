package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.ScopePattern;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.wire.ColumnType;
import dev.syncular.server.wire.JsNumber;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/** §3.2: requested scopes validated against the table, intersected with the actor's allowed scopes. */
public final class EffectiveScopes {
    public static final String WILDCARD = "*";

    private EffectiveScopes() {}

    /**
     * §3.2 rule 2: every requested key is a variable the table declares and no requested value is
     * {@code '*'}; otherwise the whole request fails with {@code sync.invalid_subscription}.
     */
    public static void validateRequested(TableSchema table, Map<String, List<String>> requested) {
        for (Map.Entry<String, List<String>> e : requested.entrySet()) {
            if (!table.hasScopeVariable(e.getKey())) {
                throw new SyncError(
                        ErrorCode.INVALID_SUBSCRIPTION,
                        "requested scope key not declared by the table",
                        Map.of("table", table.name(), "scopeKey", e.getKey()));
            }
            if (e.getValue().contains(WILDCARD)) {
                throw new SyncError(
                        ErrorCode.INVALID_SUBSCRIPTION,
                        "wildcard is not a requestable scope value",
                        Map.of("table", table.name(), "scopeKey", e.getKey()));
            }
        }
    }

    /** §3.2 rule 3: every allowed key must be declared by some table of the schema. */
    public static void validateAllowed(CompiledSchema schema, Map<String, List<String>> allowed) {
        Set<String> declared = new HashSet<>();
        for (TableSchema t : schema.tables()) {
            for (ScopePattern p : t.scopePatterns()) {
                declared.add(p.variable());
            }
        }
        for (String key : allowed.keySet()) {
            if (!declared.contains(key)) {
                throw new SyncError(
                        ErrorCode.INVALID_SUBSCRIPTION,
                        "resolved scope key declared by no table",
                        Map.of("scopeKey", key));
            }
        }
    }

    /**
     * §3.2 rules 4–5: effective = requested ∩ allowed per requested key, or {@code null} when the
     * subscription is revoked (a requested key lost entirely, or nothing effective). Keys sorted; values
     * in request order, de-duplicated.
     */
    public static Map<String, List<String>> effective(
            Map<String, List<String>> requested, Map<String, List<String>> allowed) {
        Map<String, List<String>> out = new TreeMap<>();
        for (Map.Entry<String, List<String>> e : requested.entrySet()) {
            List<String> allowedValues = allowed.get(e.getKey());
            if (allowedValues == null) {
                return null;
            }
            Set<String> values = new LinkedHashSet<>();
            boolean any = allowedValues.contains(WILDCARD);
            for (String v : e.getValue()) {
                if (any || allowedValues.contains(v)) {
                    values.add(v);
                }
            }
            if (values.isEmpty()) {
                return null;
            }
            out.put(e.getKey(), List.copyOf(values));
        }
        return out.isEmpty() ? null : out;
    }

    /**
     * §3.4 steps 2–3: every declared scope variable of the row must have a non-empty value that the
     * allowed scopes grant (or grant {@code '*'}).
     */
    public static boolean authorizesRow(TableSchema table, Object[] row, Map<String, List<String>> allowed) {
        for (ScopePattern p : table.scopePatterns()) {
            Object v = row[p.columnIndex()];
            if (v == null) {
                return false;
            }
            String value = scopeValue(v);
            if (value.isEmpty()) {
                return false;
            }
            List<String> granted = allowed.get(p.variable());
            if (granted == null || !(granted.contains(WILDCARD) || granted.contains(value))) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@link #authorizesRow} over a row's stored scopes (§3.1) instead of its values — the §5.9.5 blob
     * download check of a referencing row.
     */
    public static boolean authorizesStoredScopes(
            TableSchema table, Map<String, String> stored, Map<String, List<String>> allowed) {
        for (ScopePattern p : table.scopePatterns()) {
            String value = stored.get(p.variable());
            if (value == null || value.isEmpty()) {
                return false;
            }
            List<String> granted = allowed.get(p.variable());
            if (granted == null || !(granted.contains(WILDCARD) || granted.contains(value))) {
                return false;
            }
        }
        return true;
    }

    /** §3.1: the stored scopes of a row — variable → the row's value of the mapped column. */
    public static Map<String, String> storedScopes(TableSchema table, Object[] row) {
        Map<String, String> out = new TreeMap<>();
        for (ScopePattern p : table.scopePatterns()) {
            Object v = row[p.columnIndex()];
            if (v != null) {
                out.put(p.variable(), scopeValue(v));
            }
        }
        return out;
    }

    /**
     * §3.1: a column value as a scope value, the text the JavaScript and Rust clients give it and match against
     * the allowed scopes — a {@code float} by ECMAScript {@code Number::toString} ({@link JsNumber}: 2.0 is
     * {@code "2"}, 1e21 is {@code "1e+21"}, -0 is {@code "0"}), an {@code integer} in decimal, a {@code boolean}
     * as {@code true}/{@code false}, text ({@code string}, {@code json}, {@code blob_ref}) as it is.
     */
    static String scopeValue(Object columnValue) {
        return columnValue instanceof Double d ? JsNumber.text(d) : columnValue.toString();
    }

    /**
     * §3.1 read backwards: the value of a column of {@code type} whose {@link #scopeValue} is exactly
     * {@code scopeValue}, or empty when no value of the type has that text — then no row holds that scope value. A
     * {@code float} takes the text {@link JsNumber} prints ({@code "2"} is 2.0, {@code "1e+21"} is 1e21; {@code "2.0"},
     * {@code "1e21"}, {@code "-0"}, {@code " 2"} are the scope value of no float), an {@code integer} its decimal
     * ({@code "7"}, not {@code "07"} or {@code "+7"}), a {@code boolean} {@code "true"} or {@code "false"}, text
     * ({@code string}, {@code json}, {@code blob_ref}) itself.
     */
    static Optional<Object> columnValue(ColumnType type, String scopeValue) {
        return switch (type) {
            case STRING, JSON, BLOB_REF -> Optional.of(scopeValue);
            case INTEGER -> integer(scopeValue);
            case FLOAT -> number(scopeValue);
            case BOOLEAN ->
                "true".equals(scopeValue)
                        ? Optional.of(Boolean.TRUE)
                        : "false".equals(scopeValue) ? Optional.of(Boolean.FALSE) : Optional.empty();
            case BYTES, CRDT -> Optional.empty(); // never a scope column (schema compile, §5.10.1)
        };
    }

    private static Optional<Object> integer(String text) {
        long n;
        try {
            n = Long.parseLong(text);
        } catch (NumberFormatException e) {
            return Optional.empty(); // not decimal digits, or outside the column's 64-bit range
        }
        return Long.toString(n).equals(text) ? Optional.of(n) : Optional.empty();
    }

    private static Optional<Object> number(String text) {
        double d;
        try {
            d = Double.parseDouble(text);
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
        return JsNumber.text(d).equals(text) ? Optional.of(d) : Optional.empty();
    }

    /** Effective scopes as the storage queries take them: each key's values as a sorted set. */
    static Map<String, Set<String>> asSets(Map<String, List<String>> scopes) {
        Map<String, Set<String>> out = new LinkedHashMap<>();
        scopes.forEach((k, v) -> out.put(k, new TreeSet<>(v)));
        return out;
    }
}
