package dev.syncular.server.round;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.syncular.server.http.Ssp2;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ContentCodingTest {

    @Test
    void negotiation() {
        assertEquals(ContentCoding.IDENTITY, ContentCoding.negotiate(null));
        assertEquals(ContentCoding.IDENTITY, ContentCoding.negotiate(""));
        assertEquals(ContentCoding.IDENTITY, ContentCoding.negotiate("identity"));
        assertEquals(ContentCoding.IDENTITY, ContentCoding.negotiate("br, deflate"));
        assertEquals(ContentCoding.GZIP, ContentCoding.negotiate("gzip"));
        assertEquals(ContentCoding.GZIP, ContentCoding.negotiate("gzip, deflate, br"));
        assertEquals(ContentCoding.ZSTD, ContentCoding.negotiate("zstd"));
        assertEquals(ContentCoding.ZSTD, ContentCoding.negotiate("zstd, gzip"));
        assertEquals(ContentCoding.GZIP, ContentCoding.negotiate("gzip, zstd"));
        assertEquals(ContentCoding.ZSTD, ContentCoding.negotiate("gzip;q=0.5, zstd;q=0.8"));
        assertEquals(ContentCoding.GZIP, ContentCoding.negotiate("zstd;q=0.1, gzip"));
        assertEquals(ContentCoding.GZIP, ContentCoding.negotiate("zstd;q=0, gzip"));
        assertEquals(ContentCoding.IDENTITY, ContentCoding.negotiate("zstd;q=0, gzip;q=0"));
        assertEquals(ContentCoding.ZSTD, ContentCoding.negotiate("*"));
        assertEquals(ContentCoding.GZIP, ContentCoding.negotiate("*, zstd;q=0"));
        assertEquals(ContentCoding.GZIP, ContentCoding.negotiate("GZIP ; Q=1"));
    }

    /** §1.3 honoured, and compression only where it pays: identity below 1 KiB, gzip or zstd by size on a tie. */
    @Test
    void choiceBySize() {
        assertEquals(ContentCoding.IDENTITY, ContentCoding.choose("zstd, gzip", 97));
        assertEquals(ContentCoding.IDENTITY, ContentCoding.choose("gzip", ContentCoding.MIN_COMPRESSED_BYTES - 1));
        assertEquals(ContentCoding.GZIP, ContentCoding.choose("gzip", ContentCoding.MIN_COMPRESSED_BYTES));
        // a client that refuses identity gets what it accepts, however small
        assertEquals(ContentCoding.GZIP, ContentCoding.choose("gzip, identity;q=0", 97));
        assertEquals(ContentCoding.ZSTD, ContentCoding.choose("zstd, *;q=0", 97));
        assertEquals(ContentCoding.IDENTITY, ContentCoding.choose("zstd, identity, *;q=0", 97));
        // equal q-values: gzip's cheap start below 4 KiB, zstd's speed from there on, whichever is listed first
        assertEquals(ContentCoding.GZIP, ContentCoding.choose("zstd, gzip", 2000));
        assertEquals(ContentCoding.ZSTD, ContentCoding.choose("gzip, zstd", ContentCoding.ZSTD_FROM_BYTES));
        assertEquals(ContentCoding.ZSTD, ContentCoding.choose("*", 100_000));
        // a stated preference wins at every size
        assertEquals(ContentCoding.ZSTD, ContentCoding.choose("gzip;q=0.5, zstd", 2000));
        assertEquals(ContentCoding.GZIP, ContentCoding.choose("zstd;q=0.5, gzip", 100_000));
        assertEquals(ContentCoding.IDENTITY, ContentCoding.choose("br, deflate", 100_000));
        assertEquals(ContentCoding.IDENTITY, ContentCoding.choose(null, 100_000));
    }

    @Test
    void roundTrips() {
        byte[] data = "hello hello hello hello".repeat(1000).getBytes(StandardCharsets.UTF_8);
        assertArrayEquals(data, Ssp2.inflate(ContentCoding.GZIP.encodeAll(data), "gzip"));
        assertArrayEquals(data, Ssp2.inflate(ContentCoding.ZSTD.encodeAll(data), "zstd"));
        assertArrayEquals(data, ContentCoding.IDENTITY.encodeAll(data));
    }
}
