package dev.syncular.server.crdt.yjs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * JSON in embeds, formatting values and JSON content is read and written as Yjs does it,
 * {@code JSON.stringify(JSON.parse(text))}: the expected texts were printed by Node 20's JSON, and the
 * refused ones are those {@code JSON.parse} throws on.
 */
class JsJsonTest {
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            quoteCharacter = '`',
            value = {
                "1.0|1",
                "1e21|1e+21",
                "1e-7|1e-7",
                "123456789012345678901234|1.2345678901234569e+23",
                "0.1|0.1",
                "-0|0",
                "`{\"b\":1,\"a\":2,\"1\":3,\"0\":4,\"b\":5}`|`{\"0\":4,\"1\":3,\"b\":5,\"a\":2}`",
                "`\"\\u0041\\ud800x\"`|`\"A\\ud800x\"`",
                "`[1, 2 ,\n3]`|[1,2,3]",
                "5e-324|5e-324",
                "1.7976931348623157e308|1.7976931348623157e+308",
                "0.000001|0.000001",
                "1e300|1e+300",
                "2e-7|2e-7",
                "100|100",
                "1.5e3|1500",
                "` true `|true",
                "`\"\\u2028\\u001f\\/\"`|`\"\u2028\\u001f/\"`",
                "-123.456e-10|-1.23456e-8",
                "1e400|null",
                "`{\"10\":1,\"9\":2,\"x\":3,\"4294967295\":4,\"4294967294\":5}`|`{\"9\":2,\"10\":1,\"4294967294\":5,\"x\":3,\"4294967295\":4}`",
                "0.30000000000000004|0.30000000000000004",
                "144115188075855877|144115188075855870",
                "9007199254740993|9007199254740992",
                "1.2345678901234567e-300|1.2345678901234568e-300",
                "5.684341886080802e-14|5.684341886080802e-14", // 2^-44: 16 digits (the binade's narrower lower half)
                "1125899906842624.25|1125899906842624.2"
            })
    void canonicalIsJavaScriptsStringifyOfParse(String json, String expected) {
        assertEquals(expected, JsJson.canonical(json));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "nul",
                "{\"a\":}",
                "[1,]",
                "01",
                "1.",
                ".5",
                "\"\\x\"",
                "\"a\u0001\"",
                "undefined",
                "NaN",
                "+1",
                "[1 2]",
                "{a:1}",
                "\"\\u12\"",
                "tru"
            })
    void invalidJsonIsRefused(String json) {
        assertThrows(YjsFormatException.class, () -> JsJson.canonical(json));
    }
}
