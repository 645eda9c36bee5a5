package dev.syncular.server.crdt.yjs;

/**
 * The value of a formatting item as Yjs compares it: the JSON parsed to a JavaScript value and compared with
 * {@code ===}. Null, booleans, numbers and strings compare by value; an object or array value is only ever
 * equal to itself, so it is represented by the formatting content that holds it.
 */
final class FormatValue {
    private FormatValue() {}

    /** The value of {@code f}: {@code null}, a {@link Boolean}, {@link Double} or {@link String}, or {@code f}. */
    static Object of(ItemContent.Format f) {
        String json = f.json().strip();
        switch (json) {
            case "null": return null;
            case "true": return Boolean.TRUE;
            case "false": return Boolean.FALSE;
            default: break;
        }
        if (json.length() >= 2 && json.charAt(0) == '"' && json.charAt(json.length() - 1) == '"') {
            String s = unquote(json);
            return s == null ? f : s;
        }
        if (!json.isEmpty() && (json.charAt(0) == '-' || Character.isDigit(json.charAt(0)))) {
            try {
                return Double.parseDouble(json);
            } catch (NumberFormatException e) {
                return f;
            }
        }
        return f; // an object or array
    }

    /** JavaScript's {@code ===} on two values made by {@link #of}. */
    static boolean same(Object a, Object b) {
        if (a == b) {
            return true;
        }
        if (a instanceof Double x && b instanceof Double y) {
            return x.doubleValue() == y.doubleValue();
        }
        return (a instanceof String || a instanceof Boolean) && a.equals(b);
    }

    /** The text of a JSON string literal, or {@code null} when it is not a plain one. */
    private static String unquote(String json) {
        StringBuilder out = new StringBuilder(json.length());
        for (int i = 1; i < json.length() - 1; i++) {
            char c = json.charAt(i);
            if (c == '"') {
                return null;
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            if (++i >= json.length() - 1) {
                return null;
            }
            char e = json.charAt(i);
            switch (e) {
                case '"', '\\', '/' -> out.append(e);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    if (i + 4 >= json.length()) {
                        return null;
                    }
                    try {
                        out.append((char) Integer.parseInt(json.substring(i + 1, i + 5), 16));
                    } catch (NumberFormatException ex) {
                        return null;
                    }
                    i += 4;
                }
                default -> {
                    return null;
                }
            }
        }
        return out.toString();
    }
}
