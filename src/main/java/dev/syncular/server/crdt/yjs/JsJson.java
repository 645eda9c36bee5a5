package dev.syncular.server.crdt.yjs;

import dev.syncular.server.wire.JsNumber;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code JSON.stringify(JSON.parse(text))} as JavaScript computes it, for the JSON that Yjs keeps in
 * embeds, formatting values and legacy JSON content: Yjs parses it when it reads an update and stringifies it
 * when it writes one. Invalid JSON is refused ({@link YjsFormatException}), as {@code JSON.parse} refuses it;
 * valid JSON comes back in JavaScript's canonical form (no white space, object keys in JavaScript order with
 * a repeated key keeping its first place and its last value, numbers as JavaScript prints them: {@link
 * JsNumber}).
 */
final class JsJson {
    private static final int MAX_DEPTH = 512;

    private final String text;
    private int pos;

    private JsJson(String text) {
        this.text = text;
    }

    /** The canonical form of {@code json}. */
    static String canonical(String json) {
        JsJson p = new JsJson(json);
        p.space();
        Object v = p.value(0);
        p.space();
        if (p.pos != json.length()) {
            throw invalid();
        }
        StringBuilder out = new StringBuilder(json.length());
        write(out, v);
        return out.toString();
    }

    private static YjsFormatException invalid() {
        return new YjsFormatException("content is not valid JSON");
    }

    private void space() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private char peek() {
        if (pos >= text.length()) {
            throw invalid();
        }
        return text.charAt(pos);
    }

    private void expect(String word) {
        if (!text.startsWith(word, pos)) {
            throw invalid();
        }
        pos += word.length();
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) {
            throw invalid();
        }
        char c = peek();
        switch (c) {
            case '{':
                return object(depth);
            case '[':
                return array(depth);
            case '"':
                return string();
            case 't':
                expect("true");
                return Boolean.TRUE;
            case 'f':
                expect("false");
                return Boolean.FALSE;
            case 'n':
                expect("null");
                return null;
            default:
                return number();
        }
    }

    private Map<String, Object> object(int depth) {
        pos++;
        Map<String, Object> m = new LinkedHashMap<>();
        space();
        if (peek() == '}') {
            pos++;
            return m;
        }
        while (true) {
            space();
            if (peek() != '"') {
                throw invalid();
            }
            String key = string();
            space();
            expect(":");
            space();
            m.put(key, value(depth + 1)); // a repeated key keeps its place and takes the last value
            space();
            char c = peek();
            pos++;
            if (c == '}') {
                return m;
            }
            if (c != ',') {
                throw invalid();
            }
        }
    }

    private List<Object> array(int depth) {
        pos++;
        List<Object> l = new ArrayList<>();
        space();
        if (peek() == ']') {
            pos++;
            return l;
        }
        while (true) {
            space();
            l.add(value(depth + 1));
            space();
            char c = peek();
            pos++;
            if (c == ']') {
                return l;
            }
            if (c != ',') {
                throw invalid();
            }
        }
    }

    private String string() {
        pos++;
        StringBuilder out = new StringBuilder();
        while (true) {
            char c = peek();
            pos++;
            if (c == '"') {
                return out.toString();
            }
            if (c < 0x20) {
                throw invalid();
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char e = peek();
            pos++;
            switch (e) {
                case '"', '\\', '/' -> out.append(e);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    if (pos + 4 > text.length()) {
                        throw invalid();
                    }
                    int code = 0;
                    for (int i = 0; i < 4; i++) {
                        int d = Character.digit(text.charAt(pos++), 16);
                        if (d < 0) {
                            throw invalid();
                        }
                        code = code * 16 + d;
                    }
                    out.append((char) code);
                }
                default -> throw invalid();
            }
        }
    }

    private Double number() {
        int start = pos;
        if (pos < text.length() && text.charAt(pos) == '-') {
            pos++;
        }
        if (pos < text.length() && text.charAt(pos) == '0') {
            pos++;
        } else {
            digits();
        }
        if (pos < text.length() && text.charAt(pos) == '.') {
            pos++;
            digits();
        }
        if (pos < text.length() && (text.charAt(pos) == 'e' || text.charAt(pos) == 'E')) {
            pos++;
            if (pos < text.length() && (text.charAt(pos) == '+' || text.charAt(pos) == '-')) {
                pos++;
            }
            digits();
        }
        return Double.parseDouble(text.substring(start, pos));
    }

    private void digits() {
        int start = pos;
        while (pos < text.length() && text.charAt(pos) >= '0' && text.charAt(pos) <= '9') {
            pos++;
        }
        if (pos == start) {
            throw invalid();
        }
    }

    @SuppressWarnings("unchecked")
    private static void write(StringBuilder out, Object v) {
        if (v == null) {
            out.append("null");
        } else if (v instanceof Boolean b) {
            out.append(b);
        } else if (v instanceof Double d) {
            out.append(JsNumber.json(d));
        } else if (v instanceof String s) {
            quote(out, s);
        } else if (v instanceof List<?> l) {
            out.append('[');
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                write(out, l.get(i));
            }
            out.append(']');
        } else {
            Map<String, Object> m = (Map<String, Object>) v;
            out.append('{');
            boolean first = true;
            for (String k : YjsAny.jsKeyOrder(m)) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                quote(out, k);
                out.append(':');
                write(out, m.get(k));
            }
            out.append('}');
        }
    }

    /** JSON.stringify's string quoting: lone surrogates and control characters escaped. */
    private static void quote(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    boolean pairedHigh = Character.isHighSurrogate(c)
                            && i + 1 < s.length()
                            && Character.isLowSurrogate(s.charAt(i + 1));
                    boolean pairedLow =
                            Character.isLowSurrogate(c) && i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
                    if (c < 0x20 || (Character.isSurrogate(c) && !pairedHigh && !pairedLow)) {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
