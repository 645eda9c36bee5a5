package dev.syncular.server.crdt.yjs;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * lib0's self-describing "any" values (the content of {@code ContentAny} items and subdocument options),
 * held as a JavaScript reader would hold them so that writing them back gives the bytes Yjs writes: numbers
 * are {@code Double} (an integral one within 31 bits is written as a varint, one exact in 32-bit floating
 * point as float32, else float64), 64-bit big integers are {@link BigInt}, byte arrays {@code byte[]},
 * {@link #UNDEFINED} stands for JavaScript's {@code undefined}, {@code null} for null, and objects keep
 * JavaScript's key order (integer-like keys ascending first, then the others as inserted).
 */
final class YjsAny {
    /** JavaScript's {@code undefined} (type 127). */
    static final Object UNDEFINED = new Object() {
        @Override
        public String toString() {
            return "undefined";
        }
    };

    /** A JavaScript {@code bigint} (type 122). */
    record BigInt(long value) {}

    private static final int MAX_DEPTH = 512;

    private YjsAny() {}

    static Object read(Lib0Reader r) {
        return read(r, 0);
    }

    private static Object read(Lib0Reader r, int depth) {
        if (depth > MAX_DEPTH) {
            throw new YjsFormatException("any value nested too deep");
        }
        int type = r.readUint8();
        switch (type) {
            case 127:
                return UNDEFINED;
            case 126:
                return null;
            case 125:
                return r.readVarInt();
            case 124:
                return (double) r.readFloat32();
            case 123:
                return r.readFloat64();
            case 122:
                return new BigInt(r.readBigInt64());
            case 121:
                return Boolean.FALSE;
            case 120:
                return Boolean.TRUE;
            case 119:
                return r.readVarString();
            case 118: {
                int n = r.readLength();
                Map<String, Object> obj = new LinkedHashMap<>();
                for (int i = 0; i < n; i++) {
                    String key = r.readVarString();
                    obj.put(key, read(r, depth + 1));
                }
                return obj;
            }
            case 117: {
                int n = r.readLength();
                List<Object> arr = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    arr.add(read(r, depth + 1));
                }
                return arr;
            }
            case 116:
                return r.readVarBytes();
            default:
                throw new YjsFormatException("unknown any type");
        }
    }

    @SuppressWarnings("unchecked")
    static void write(Lib0Writer w, Object v) {
        if (v == UNDEFINED) {
            w.writeUint8(127);
        } else if (v == null) {
            w.writeUint8(126);
        } else if (v instanceof Double d) {
            writeNumber(w, d);
        } else if (v instanceof BigInt b) {
            w.writeUint8(122);
            w.writeBigInt64(b.value());
        } else if (v instanceof Boolean b) {
            w.writeUint8(b ? 120 : 121);
        } else if (v instanceof String s) {
            w.writeUint8(119);
            w.writeVarString(s);
        } else if (v instanceof Map<?, ?> m) {
            w.writeUint8(118);
            List<String> keys = jsKeyOrder((Map<String, Object>) m);
            w.writeVarUint(keys.size());
            for (String k : keys) {
                w.writeVarString(k);
                write(w, m.get(k));
            }
        } else if (v instanceof List<?> l) {
            w.writeUint8(117);
            w.writeVarUint(l.size());
            for (Object o : l) {
                write(w, o);
            }
        } else if (v instanceof byte[] b) {
            w.writeUint8(116);
            w.writeVarBytes(b);
        } else {
            throw new IllegalArgumentException(
                    "not a lib0 any value: " + v.getClass().getName());
        }
    }

    private static void writeNumber(Lib0Writer w, double d) {
        if (!Double.isInfinite(d) && d == Math.rint(d) && Math.abs(d) <= 0x7fffffff) {
            w.writeUint8(125);
            w.writeVarInt(d);
        } else if ((double) (float) d == d) { // NaN fails this test and is written as float64, as in lib0
            w.writeUint8(124);
            w.writeFloat32((float) d);
        } else {
            w.writeUint8(123);
            w.writeFloat64(d);
        }
    }

    /** JavaScript own-key order: array-index keys ascending, then string keys in insertion order. */
    static List<String> jsKeyOrder(Map<String, Object> m) {
        List<String> indices = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (String k : m.keySet()) {
            (isArrayIndex(k) ? indices : names).add(k);
        }
        if (indices.isEmpty()) {
            return names;
        }
        indices.sort((a, b) -> Long.compare(Long.parseLong(a), Long.parseLong(b)));
        indices.addAll(names);
        return indices;
    }

    private static boolean isArrayIndex(String k) {
        if (k.isEmpty() || k.length() > 10 || (k.length() > 1 && k.charAt(0) == '0')) {
            return false;
        }
        for (int i = 0; i < k.length(); i++) {
            char c = k.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return Long.parseLong(k) < 0xffffffffL;
    }
}
