package dev.syncular.server.errors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The §10.2 catalogue, held against the specification's table ({@code src/test/resources/errors/catalogue-10.2.tsv},
 * copied from SPEC §10.2 with its origin): every {@code sync.*} and {@code blob.*} code of the table is an
 * {@link ErrorCode} with the table's category, retryability and recommended action, and no other code is. The
 * {@code operation.*} codes (REMOTE.md §7) are the remote operations' own envelope, not this catalogue's.
 */
class ErrorCodeTest {

    record Entry(String category, boolean retryable, String action) {}

    static Map<String, Entry> specTable() throws IOException {
        Map<String, Entry> table = new LinkedHashMap<>();
        try (InputStream in = ErrorCodeTest.class.getResourceAsStream("/errors/catalogue-10.2.tsv")) {
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] f = line.split("\t");
                table.put(f[0], new Entry(f[1], f[2].equals("yes"), f[3]));
            }
        }
        return table;
    }

    @Test
    void theCatalogueIsTheSpecificationsTable() throws IOException {
        Map<String, Entry> spec = specTable();
        Set<String> expected = new TreeSet<>();
        spec.keySet().stream().filter(c -> !c.startsWith("operation.")).forEach(expected::add);
        Set<String> ours = new TreeSet<>();
        for (ErrorCode e : ErrorCode.values()) {
            ours.add(e.code);
            Entry want = spec.get(e.code);
            if (want != null) {
                assertEquals(want.category(), e.category, e.code + ": category (§10.2)");
                assertEquals(want.retryable(), e.retryable, e.code + ": retryable (§10.2)");
                assertEquals(want.action(), e.recommendedAction, e.code + ": recommended action (§10.2)");
            }
        }
        assertEquals(expected, ours, "the sync.* and blob.* codes of §10.2");
        assertTrue(expected.size() >= 30, "the table was read: " + expected.size() + " codes");
    }

    @Test
    void aWireCodeFindsItsEntryAndAnUnknownOneNone() {
        for (ErrorCode e : ErrorCode.values()) {
            assertSame(e, ErrorCode.of(e.code));
        }
        assertNull(ErrorCode.of("sync.no_such_code"));
        assertNull(ErrorCode.of("operation.unknown"));
    }

    @Test
    void retryableCodesAskForARetryAndTheirStatusSaysWhy() {
        for (ErrorCode e : ErrorCode.values()) {
            if (e.retryable) {
                assertTrue(
                        Set.of("retryLater", "refreshAuth").contains(e.recommendedAction),
                        e.code + " is retryable but recommends " + e.recommendedAction);
            }
            assertTrue(e.httpStatus >= 400 && e.httpStatus < 600, e.code + ": " + e.httpStatus);
        }
        assertEquals(429, ErrorCode.RATE_LIMITED.httpStatus);
        assertEquals(401, ErrorCode.AUTH_REQUIRED.httpStatus);
        assertEquals(413, ErrorCode.BLOB_TOO_LARGE.httpStatus);
    }
}
