package dev.syncular.server.operations;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** REMOTE.md §4: the exact encoded form of every tag, and the boundaries of integers and base64. */
class TaggedValueCodecTest {

    static String enc(OperationValue v) {
        return new String(TaggedValueCodec.encode(v), StandardCharsets.UTF_8);
    }

    static OperationValue dec(String s) {
        return TaggedValueCodec.decode(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void everyTagRoundTrips() {
        Map<String, OperationValue> fields = new LinkedHashMap<>();
        fields.put("n", OperationValue.Null.INSTANCE);
        fields.put("b", new OperationValue.Bool(true));
        fields.put("f", new OperationValue.Number(1.5));
        fields.put("i", new OperationValue.Number(42));
        fields.put("s", new OperationValue.Text("x"));
        fields.put("big", new OperationValue.Integer(Long.MIN_VALUE));
        fields.put("bytes", new OperationValue.Bytes(new byte[] {0, 1}));
        fields.put("a", new OperationValue.Array(List.of(new OperationValue.Text("y"))));
        OperationValue v = new OperationValue.Obj(fields);
        String text = enc(v);
        assertEquals(
                "{\"t\":\"object\",\"v\":[[\"n\",{\"t\":\"null\"}],[\"b\",{\"t\":\"boolean\",\"v\":true}],"
                        + "[\"f\",{\"t\":\"number\",\"v\":1.5}],[\"i\",{\"t\":\"number\",\"v\":42}],[\"s\",{\"t\":\"string\",\"v\":\"x\"}],"
                        + "[\"big\",{\"t\":\"integer\",\"v\":\"-9223372036854775808\"}],[\"bytes\",{\"t\":\"bytes\",\"v\":\"AAE=\"}],"
                        + "[\"a\",{\"t\":\"array\",\"v\":[{\"t\":\"string\",\"v\":\"y\"}]}]]}",
                text);
        assertEquals(v, dec(text));
    }

    @Test
    void integerAndBase64Boundaries() {
        assertEquals(
                new OperationValue.Integer(Long.MAX_VALUE), dec("{\"t\":\"integer\",\"v\":\"9223372036854775807\"}"));
        assertEquals(new OperationValue.Integer(0), dec("{\"t\":\"integer\",\"v\":\"0\"}"));
        for (String bad :
                List.of("\"-9223372036854775809\"", "\"+1\"", "\"1.0\"", "\"1e3\"", "\" 1\"", "\"\"", "1", "\"00\"")) {
            OperationException e =
                    assertThrows(OperationException.class, () -> dec("{\"t\":\"integer\",\"v\":" + bad + "}"));
            assertEquals(OperationErrorCode.INVALID_REQUEST, e.code(), bad);
        }
        assertEquals(new OperationValue.Bytes(new byte[0]), dec("{\"t\":\"bytes\",\"v\":\"\"}"));
        for (String bad : List.of("AA==\n", "AA", "AB==", "AA=A", "-_8=")) {
            assertThrows(
                    OperationException.class,
                    () -> dec("{\"t\":\"bytes\",\"v\":\"" + bad.replace("\n", "\\n") + "\"}"),
                    bad);
        }
        assertThrows(OperationException.class, () -> dec("{\"t\":\"number\",\"v\":1e400}"));
    }
}
