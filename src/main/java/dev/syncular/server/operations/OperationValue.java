package dev.syncular.server.operations;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One decoded value of the REMOTE.md §4 tagged encoding. Objects keep their pairs in order; a key appears at
 * most once ({@link TaggedValueCodec} refuses duplicates).
 */
public sealed interface OperationValue {
    /** {@code {"t":"null"}}. */
    record Null() implements OperationValue {
        public static final Null INSTANCE = new Null();
    }

    /** {@code {"t":"boolean","v":true}}. */
    record Bool(boolean value) implements OperationValue {}

    /** {@code {"t":"number","v":1.5}}: a finite double. */
    record Number(double value) implements OperationValue {}

    /** {@code {"t":"string","v":"x"}}. */
    record Text(String value) implements OperationValue {}

    /** {@code {"t":"integer","v":"42"}}: a signed 64-bit integer in canonical decimal text. */
    record Integer(long value) implements OperationValue {}

    /** {@code {"t":"bytes","v":"AAE="}}: canonical padded standard base64. */
    record Bytes(byte[] value) implements OperationValue {
        @Override
        public boolean equals(Object o) {
            return o instanceof Bytes b && Arrays.equals(value, b.value);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(value);
        }

        @Override
        public String toString() {
            return "Bytes[" + value.length + "]";
        }
    }

    /** {@code {"t":"array","v":[...]}}. */
    record Array(List<OperationValue> items) implements OperationValue {
        public Array {
            items = List.copyOf(items);
        }
    }

    /** {@code {"t":"object","v":[["key",value],...]}}: pairs in order, keys unique. */
    record Obj(Map<String, OperationValue> fields) implements OperationValue {
        public Obj {
            fields = Collections.unmodifiableMap(new LinkedHashMap<>(fields));
        }

        public OperationValue get(String key) {
            return fields.get(key);
        }
    }

    static Text text(String s) {
        return new Text(s);
    }

    static Number number(double d) {
        return new Number(d);
    }
}
