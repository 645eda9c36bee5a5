package dev.syncular.server.wire;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The canonical JSON of §11.2, used wherever the protocol hashes JSON (scope digest §3.5,
 * {@code X-Syncular-Scopes} §5.5): UTF-8, no insignificant whitespace, object keys sorted by UTF-16 code
 * unit, numbers in shortest round-trip form, strings escaped as JavaScript's {@code JSON.stringify} does.
 */
public final class CanonicalJson {
    private CanonicalJson() {}

    /** Renders maps, lists, strings, numbers, booleans, nulls and Jackson trees. */
    public static String write(Object value) {
        StringBuilder sb = new StringBuilder();
        append(sb, value);
        return sb.toString();
    }

    /**
     * The scope digest (§3.5): lowercase-hex SHA-256 over the canonical JSON of the effective-scope map,
     * keys sorted and every value list sorted and de-duplicated.
     */
    public static String scopeDigest(Map<String, ? extends Collection<String>> scopes) {
        return sha256Hex(write(canonicalScopes(scopes)));
    }

    /** The scope map with sorted keys and sorted, de-duplicated value lists. */
    public static Map<String, List<String>> canonicalScopes(Map<String, ? extends Collection<String>> scopes) {
        TreeMap<String, List<String>> out = new TreeMap<>();
        for (Map.Entry<String, ? extends Collection<String>> e : scopes.entrySet()) {
            out.put(e.getKey(), List.copyOf(new TreeSet<>(e.getValue())));
        }
        return out;
    }

    public static String sha256Hex(String text) {
        return sha256Hex(text.getBytes(StandardCharsets.UTF_8));
    }

    public static String sha256Hex(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void append(StringBuilder sb, Object v) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof String s) {
            string(sb, s);
        } else if (v instanceof Boolean b) {
            sb.append(b.booleanValue());
        } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            sb.append(((Number) v).longValue());
        } else if (v instanceof Number n) {
            sb.append(JsNumber.json(n.doubleValue()));
        } else if (v instanceof Map<?, ?> m) {
            Object[] keys = m.keySet().toArray();
            String[] sorted = Arrays.copyOf(keys, keys.length, String[].class);
            Arrays.sort(sorted);
            sb.append('{');
            for (int i = 0; i < sorted.length; i++) {
                if (i > 0) {
                    sb.append(',');
                }
                string(sb, sorted[i]);
                sb.append(':');
                append(sb, m.get(sorted[i]));
            }
            sb.append('}');
        } else if (v instanceof Collection<?> c) {
            sb.append('[');
            boolean first = true;
            for (Object o : c) {
                if (!first) {
                    sb.append(',');
                }
                first = false;
                append(sb, o);
            }
            sb.append(']');
        } else if (v instanceof JsonNode node) {
            node(sb, node);
        } else {
            throw new IllegalArgumentException("value has no canonical JSON form");
        }
    }

    private static void node(StringBuilder sb, JsonNode n) {
        if (n.isObject()) {
            List<String> names = new ArrayList<>();
            n.fieldNames().forEachRemaining(names::add);
            names.sort(null);
            sb.append('{');
            for (int i = 0; i < names.size(); i++) {
                if (i > 0) {
                    sb.append(',');
                }
                string(sb, names.get(i));
                sb.append(':');
                node(sb, n.get(names.get(i)));
            }
            sb.append('}');
        } else if (n.isArray()) {
            sb.append('[');
            Iterator<JsonNode> it = n.elements();
            boolean first = true;
            while (it.hasNext()) {
                if (!first) {
                    sb.append(',');
                }
                first = false;
                node(sb, it.next());
            }
            sb.append(']');
        } else if (n.isTextual()) {
            string(sb, n.textValue());
        } else if (n.isIntegralNumber() && n.canConvertToLong()) {
            long l = n.longValue();
            sb.append(Math.abs(l) < (1L << 53) ? Long.toString(l) : JsNumber.json((double) l));
        } else if (n.isNumber()) {
            sb.append(JsNumber.json(n.doubleValue()));
        } else if (n.isBoolean()) {
            sb.append(n.booleanValue());
        } else {
            sb.append("null");
        }
    }

    /** A JSON string literal escaped exactly as {@code JSON.stringify} does. */
    public static void string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    boolean loneHigh = Character.isHighSurrogate(c)
                            && (i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1)));
                    boolean loneLow =
                            Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(s.charAt(i - 1)));
                    if (c < 0x20 || loneHigh || loneLow) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
