package dev.syncular.server.crdt.yjs;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The options of a subdocument item as Yjs writes them back: reading one builds a document from the options
 * and writing it records only what that document keeps — {@code gc: false} when garbage collection was
 * switched off, {@code autoLoad: true} when set, and {@code meta} when present — in that order; a
 * {@code guid} among the options replaces the item's own. Options a document cannot be built from (null,
 * undefined, a non-text guid) are refused.
 */
final class SubdocOptions {
    private SubdocOptions() {}

    static ItemContent.Doc read(Lib0Reader r) {
        String guid = r.readVarString();
        Object opts = YjsAny.read(r);
        if (opts == null || opts == YjsAny.UNDEFINED) {
            throw new YjsFormatException("subdocument options missing");
        }
        Map<String, Object> written = new LinkedHashMap<>();
        if (opts instanceof Map<?, ?> m) {
            if (m.containsKey("guid")) {
                if (!(m.get("guid") instanceof String g)) {
                    throw new YjsFormatException("subdocument guid is not text");
                }
                guid = g;
            }
            Object gc = m.containsKey("gc") ? m.get("gc") : YjsAny.UNDEFINED;
            if (gc != YjsAny.UNDEFINED && !truthy(gc)) {
                written.put("gc", Boolean.FALSE);
            }
            if (truthy(m.containsKey("autoLoad") ? m.get("autoLoad") : YjsAny.UNDEFINED)) {
                written.put("autoLoad", Boolean.TRUE);
            }
            Object meta = m.containsKey("meta") ? m.get("meta") : YjsAny.UNDEFINED;
            if (meta != null && meta != YjsAny.UNDEFINED) {
                written.put("meta", meta);
            }
        }
        return new ItemContent.Doc(guid, written);
    }

    /** JavaScript truthiness of a lib0 any value. */
    private static boolean truthy(Object v) {
        if (v == null || v == YjsAny.UNDEFINED || Boolean.FALSE.equals(v) || "".equals(v)) {
            return false;
        }
        if (v instanceof Double d) {
            return d != 0 && !d.isNaN();
        }
        if (v instanceof YjsAny.BigInt b) {
            return b.value() != 0;
        }
        return true; // other strings, arrays, objects and byte arrays
    }
}
