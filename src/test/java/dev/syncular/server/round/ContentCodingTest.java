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

    @Test
    void roundTrips() {
        byte[] data = "hello hello hello hello".repeat(1000).getBytes(StandardCharsets.UTF_8);
        assertArrayEquals(data, Ssp2.inflate(ContentCoding.GZIP.encodeAll(data), "gzip"));
        assertArrayEquals(data, Ssp2.inflate(ContentCoding.ZSTD.encodeAll(data), "zstd"));
        assertArrayEquals(data, ContentCoding.IDENTITY.encodeAll(data));
    }
}
