package dev.syncular.server.wire;

import java.util.Arrays;

/**
 * Strict RFC 8259 validation of {@code json} values (Conventions): the raw text is checked to be one
 * JSON document (top-level scalars included) and is otherwise never interpreted or re-serialized.
 * Iterative, so hostile nesting depth cannot overflow the stack.
 */
public final class JsonText {
    private final String s;
    private int i;
    private boolean sawWhitespace;

    private JsonText(String s) {
        this.s = s;
    }

    /** Throws a decode error unless {@code text} is exactly one JSON document. */
    public static void requireDocument(String text) {
        new JsonText(text).run();
    }

    /** True when {@code text} is exactly one JSON document. */
    public static boolean isDocument(String text) {
        try {
            requireDocument(text);
            return true;
        } catch (WireException e) {
            return false;
        }
    }

    /** Validates and reports whether any insignificant whitespace occurred (for canonical shapes, §5.9.1). */
    static boolean requireDocumentReportWhitespace(String text) {
        JsonText v = new JsonText(text);
        v.run();
        return v.sawWhitespace;
    }

    private static WireException bad() {
        return WireException.invalid("json value is not a JSON document");
    }

    private void ws() {
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                sawWhitespace = true;
                i++;
            } else {
                return;
            }
        }
    }

    private char peek() {
        if (i >= s.length()) {
            throw bad();
        }
        return s.charAt(i);
    }

    private void run() {
        // Container stack: 'o' object, 'a' array.
        byte[] stack = new byte[16];
        int depth = 0;
        ws();
        value:
        while (true) {
            // Expect a value.
            char c = peek();
            switch (c) {
                case '{':
                    i++;
                    ws();
                    if (peek() == '}') {
                        i++;
                        break;
                    }
                    if (depth == stack.length) {
                        stack = Arrays.copyOf(stack, depth * 2);
                    }
                    stack[depth++] = 'o';
                    member();
                    continue value;
                case '[':
                    i++;
                    ws();
                    if (peek() == ']') {
                        i++;
                        break;
                    }
                    if (depth == stack.length) {
                        stack = Arrays.copyOf(stack, depth * 2);
                    }
                    stack[depth++] = 'a';
                    continue value;
                case '"':
                    string();
                    break;
                case 't':
                    literal("true");
                    break;
                case 'f':
                    literal("false");
                    break;
                case 'n':
                    literal("null");
                    break;
                default:
                    number();
                    break;
            }
            // After a value: close containers or move to the next element.
            while (true) {
                ws();
                if (depth == 0) {
                    if (i != s.length()) {
                        throw bad();
                    }
                    return;
                }
                char d = peek();
                if (d == ',') {
                    i++;
                    ws();
                    if (stack[depth - 1] == 'o') {
                        member();
                    }
                    continue value;
                }
                if ((d == '}' && stack[depth - 1] == 'o') || (d == ']' && stack[depth - 1] == 'a')) {
                    i++;
                    depth--;
                    continue;
                }
                throw bad();
            }
        }
    }

    /** Reads {@code "key" :} leaving the cursor at the member value. */
    private void member() {
        if (peek() != '"') {
            throw bad();
        }
        string();
        ws();
        if (peek() != ':') {
            throw bad();
        }
        i++;
        ws();
    }

    private void literal(String word) {
        if (!s.startsWith(word, i)) {
            throw bad();
        }
        i += word.length();
    }

    private void string() {
        i++; // opening quote
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i++);
            if (c == '"') {
                return;
            }
            if (c < 0x20) {
                throw bad();
            }
            if (c == '\\') {
                char e = peek();
                i++;
                switch (e) {
                    case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
                        break;
                    case 'u':
                        for (int k = 0; k < 4; k++) {
                            if (!isHexDigit(peek())) {
                                throw bad();
                            }
                            i++;
                        }
                        break;
                    default:
                        throw bad();
                }
            }
        }
        throw bad();
    }

    private void number() {
        if (peek() == '-') {
            i++;
        }
        char c = peek();
        if (c == '0') {
            i++;
        } else if (c >= '1' && c <= '9') {
            digits();
        } else {
            throw bad();
        }
        if (i < s.length() && s.charAt(i) == '.') {
            i++;
            if (!isDigit(peek())) {
                throw bad();
            }
            digits();
        }
        if (i < s.length() && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
            i++;
            char sign = peek();
            if (sign == '+' || sign == '-') {
                i++;
            }
            if (!isDigit(peek())) {
                throw bad();
            }
            digits();
        }
    }

    private void digits() {
        while (i < s.length() && isDigit(s.charAt(i))) {
            i++;
        }
    }

    /** ASCII hex only (RFC 8259 HEXDIG); {@code Character.digit} would also accept e.g. U+0661 or U+FF21. */
    private static boolean isHexDigit(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }
}
