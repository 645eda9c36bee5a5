package dev.syncular.server.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link JsNumber} is ECMAScript {@code Number::toString}: every row of the table Node printed
 * ({@code src/test/resources/numbers/}, see its README) comes out byte for byte — the number text of §3.1 scope
 * values, §11.1 and §11.2.
 */
class JsNumberTest {
    private static final String TABLE = "/numbers/ecmascript-number-tostring.tsv";

    @Test
    void everyRowOfNodesTableComesOutAsNodePrintsIt() throws IOException {
        List<String> wrong = new ArrayList<>();
        int rows = 0;
        try (InputStream in = JsNumberTest.class.getResourceAsStream(TABLE)) {
            assertNotNull(in, TABLE);
            BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                int tab = line.indexOf('\t');
                double x = Double.longBitsToDouble(Long.parseUnsignedLong(line.substring(0, tab), 16));
                String expected = line.substring(tab + 1);
                rows++;
                String text = JsNumber.text(x);
                if (!text.equals(expected)) {
                    wrong.add(line + " -> " + text);
                }
                String json = JsNumber.json(x);
                if (!json.equals(Double.isFinite(x) ? expected : "null")) {
                    wrong.add(line + " -> json " + json);
                }
            }
        }
        assertTrue(rows > 9000, "table rows: " + rows);
        assertEquals(List.of(), wrong.subList(0, Math.min(20, wrong.size())), wrong.size() + " rows differ");
    }

    /** A few rows spelled out, so a reader sees the rules without the table. */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "2.0|2",
                "-0.0|0",
                "0.1|0.1",
                "1e21|1e+21",
                "999999999999999900000|999999999999999900000",
                "1e-7|1e-7",
                "0.000001|0.000001",
                "9007199254740993|9007199254740992",
                "1125899906842624.25|1125899906842624.2", // a tie at the 17th digit: the even one
                "4.9E-324|5e-324", // Java 17's Double.toString: 4.9E-324
                "1.0E23|1e+23", // Java 17: 9.999999999999999E22
                "8.41e21|8.41e+21", // Java 17: 8.409999999999999E21
                "1.7976931348623157e308|1.7976931348623157e+308",
                "NaN|NaN",
                "-Infinity|-Infinity"
            })
    void spelledOut(double x, String expected) {
        assertEquals(expected, JsNumber.text(x));
    }
}
