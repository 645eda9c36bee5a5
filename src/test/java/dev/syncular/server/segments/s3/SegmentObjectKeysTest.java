package dev.syncular.server.segments.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.segments.SegmentStore.ReuseKey;
import dev.syncular.server.wire.MediaType;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The S3 object layout of segments (§5.1, §5.4): what a key embeds and what a reuse lookup is keyed by. */
class SegmentObjectKeysTest {
    static final String ID = "sha256:" + "ab".repeat(32);

    @Test
    void theObjectKeyEmbedsTheSegmentId() {
        SegmentObjectKeys keys = new SegmentObjectKeys("tenant-a/");
        // §5.4: a segment id names exactly one object, whichever pod wrote it
        assertEquals("tenant-a/seg/sha256/" + "ab".repeat(32), keys.objectKey(ID));
        assertEquals("tenant-a/rec/sha256/" + "ab".repeat(32) + ".json", keys.recordKey(ID));
        assertEquals("tenant-a/", keys.prefix());
        assertTrue(SegmentObjectKeys.SEGMENT_ID.matcher(ID).matches());
        assertFalse(SegmentObjectKeys.SEGMENT_ID.matcher(ID.toUpperCase()).matches());
        assertEquals("seg/sha256/" + "ab".repeat(32), new SegmentObjectKeys("").objectKey(ID));
    }

    @Test
    void aReuseLookupDependsOnEveryFieldOfItsKey() {
        SegmentObjectKeys keys = new SegmentObjectKeys("");
        ReuseKey base = new ReuseKey("p1", "e1", "todos", 3, MediaType.ROWS, "d1", 42);
        List<ReuseKey> variants = List.of(
                base,
                new ReuseKey("p2", "e1", "todos", 3, MediaType.ROWS, "d1", 42),
                new ReuseKey("p1", "e2", "todos", 3, MediaType.ROWS, "d1", 42),
                new ReuseKey("p1", "e1", "notes", 3, MediaType.ROWS, "d1", 42),
                new ReuseKey("p1", "e1", "todos", 4, MediaType.ROWS, "d1", 42),
                new ReuseKey("p1", "e1", "todos", 3, MediaType.SQLITE, "d1", 42),
                new ReuseKey("p1", "e1", "todos", 3, MediaType.ROWS, "d2", 42),
                new ReuseKey("p1", "e1", "todos", 3, MediaType.ROWS, "d1", 43));
        Set<String> found = new HashSet<>();
        for (ReuseKey k : variants) {
            String key = keys.findKey(k);
            assertTrue(key.startsWith("find/") && key.endsWith(".json"), key);
            found.add(key);
        }
        assertEquals(variants.size(), found.size(), "each field changes the lookup key");
        assertEquals(keys.findKey(base), keys.findKey(new ReuseKey("p1", "e1", "todos", 3, MediaType.ROWS, "d1", 42)));
        assertNotEquals(keys.findKey(base), new SegmentObjectKeys("x/").findKey(base));
    }
}
