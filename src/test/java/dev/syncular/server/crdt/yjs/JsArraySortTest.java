package dev.syncular.server.crdt.yjs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link JsArraySort} makes V8's comparisons, so even a comparator like {@code Y.mergeUpdates}' — equal keys
 * of different kinds both claim to come first — orders as in Node: the expected orders were printed by
 * Node 20 sorting the same elements with the same comparator.
 */
class JsArraySortTest {
    /** An element: its id, its key, and its kind ({@code g} or {@code i}). */
    private record El(char id, int key, char kind) {}

    private static final Comparator<El> YJS_LIKE =
            (x, y) -> x.key() != y.key() ? Integer.compare(x.key(), y.key()) : x.kind() == y.kind() ? 0 : -1;

    @ParameterizedTest
    @CsvSource({
        "a0g b0i, ba",
        "a0g b0i c0g, cba",
        "a1g b0i c0i d0g, dbca",
        "a0g b0g c0i d1i e0g, cabed",
        "a2i b1g c1i d0g e1g f0i, fdcbea"
    })
    void sortsAsV8(String elements, String expected) {
        List<El> list = new ArrayList<>();
        for (String w : elements.split(" ")) {
            list.add(new El(w.charAt(0), w.charAt(1) - '0', w.charAt(2)));
        }
        JsArraySort.sort(list, YJS_LIKE);
        StringBuilder ids = new StringBuilder();
        list.forEach(e -> ids.append(e.id()));
        assertEquals(expected, ids.toString());
    }

    @Test
    void fortyElementsSortAsV8() {
        List<El> list = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            list.add(new El((char) (65 + i), (i * 7) % 5, 'g'));
        }
        JsArraySort.sort(list, YJS_LIKE);
        StringBuilder ids = new StringBuilder();
        list.forEach(e -> ids.append(e.id()));
        assertEquals("AFKPUZ_dDINSX]bgBGLQV[`eEJOTY^chCHMRW\\af", ids.toString());
    }
}
