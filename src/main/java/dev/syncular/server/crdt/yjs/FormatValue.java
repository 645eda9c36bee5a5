package dev.syncular.server.crdt.yjs;

/**
 * The value of a formatting item as Yjs compares it: the JSON parsed to a JavaScript value and compared with
 * {@code ===}. A primitive (boolean, number, string) is equal to any primitive with the same canonical JSON
 * text ({@link JsJson}, which the content already holds); an object or array value is only ever equal to
 * itself, so it is represented by the formatting content that holds it; JSON {@code null} is {@code null}.
 */
final class FormatValue {
    private FormatValue() {}

    /** {@code null}, the canonical text of a primitive, or {@code f} itself for an object or array. */
    static Object of(ItemContent.Format f) {
        String json = f.json();
        if (json.equals("null")) {
            return null;
        }
        return json.startsWith("{") || json.startsWith("[") ? f : json;
    }

    /** JavaScript's {@code ===} on two values made by {@link #of}. */
    static boolean same(Object a, Object b) {
        return a == b || (a instanceof String x && x.equals(b));
    }
}
