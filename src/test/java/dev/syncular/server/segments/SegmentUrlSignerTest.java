package dev.syncular.server.segments;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/** §5.4 native signed-URL tokens: MAC, expiry with ≤ 60 s skew, segment binding, opaque audience. */
class SegmentUrlSignerTest {
    private static final byte[] KEY = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8);
    private static final String SEG = "sha256:" + "a".repeat(64);
    private final SegmentUrlSigner signer = new SegmentUrlSigner(KEY, "https://cdn.example/segments/", 600_000);

    private static String token(String url) {
        return url.substring(url.indexOf("?st=") + 4);
    }

    @Test
    void signsAndVerifies() {
        SegmentUrlSigner.SignedUrl u = signer.sign(SEG, "digest", "tenant-1", 1_000_000);
        assertTrue(u.url().startsWith("https://cdn.example/segments/" + SEG + "?st="));
        assertEquals(1_600_000, u.expiresAtMs());
        SegmentUrlSigner.Claims c = signer.verify(token(u.url()), SEG, 1_000_000);
        assertNotNull(c);
        assertEquals("digest", c.scopeDigest());
        assertEquals(signer.audience("tenant-1"), c.audience());
        assertNotEquals(signer.audience("tenant-1"), signer.audience("tenant-2"));
        assertTrue(!c.audience().contains("tenant"), "the partition cannot be read from the audience");
        String payload =
                new String(Base64.getUrlDecoder().decode(token(u.url()).split("\\.")[0]), StandardCharsets.UTF_8);
        assertTrue(payload.startsWith("{\"v\":1,\"seg\":\"" + SEG + "\",\"sd\":\"digest\",\"aud\":"), payload);
    }

    @Test
    void rejectsTamperingExpiryAndOtherSegments() {
        String t = token(signer.sign(SEG, "digest", "tenant-1", 1_000_000).url());
        assertNull(signer.verify(t, "sha256:" + "b".repeat(64), 1_000_000));
        assertNotNull(signer.verify(t, SEG, 1_600_000 + 60_000), "within the 60 s skew");
        assertNull(signer.verify(t, SEG, 1_600_000 + 61_000), "past the skew");
        char last = t.charAt(t.length() - 1);
        assertNull(signer.verify(t.substring(0, t.length() - 1) + (last == 'A' ? 'B' : 'A'), SEG, 1_000_000));
        String forged = Base64.getUrlEncoder()
                        .withoutPadding()
                        .encodeToString(
                                ("{\"v\":1,\"seg\":\"" + SEG + "\",\"sd\":\"other\",\"aud\":\"x\",\"exp\":9999999999}")
                                        .getBytes(StandardCharsets.UTF_8))
                + t.substring(t.indexOf('.'));
        assertNull(signer.verify(forged, SEG, 1_000_000));
        assertNull(signer.verify("garbage", SEG, 1_000_000));
        assertNull(new SegmentUrlSigner("another-key-another-key-another-k".getBytes(StandardCharsets.UTF_8), "x", 1000)
                .verify(t, SEG, 1_000_000));
        assertThrows(IllegalArgumentException.class, () -> new SegmentUrlSigner(KEY, "x", 16 * 60_000));
    }
}
