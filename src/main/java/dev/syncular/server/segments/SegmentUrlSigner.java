package dev.syncular.server.segments;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.Json;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The native signed-URL scheme of §5.4: {@code st = base64url(payloadJson) "." base64url(HMAC-SHA256(key,
 * payloadJson))} with {@code payloadJson = {"v":1,"seg":…,"sd":…,"aud":…,"exp":<unix seconds>}}. {@code aud}
 * is a keyed derivation of the partition, stable per partition, from which no client can recover it.
 */
public final class SegmentUrlSigner implements SegmentUrls {
    /** §5.4: verification allows at most 60 s of clock skew on {@code exp}. */
    public static final long SKEW_MS = 60_000;
    /** §5.4: TTL SHOULD be at most 15 minutes. */
    public static final long MAX_TTL_MS = 15 * 60_000;

    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder B64D = Base64.getUrlDecoder();

    private final SecretKeySpec key;
    private final String baseUrl;
    private final long ttlMs;

    /**
     * @param key     the HMAC key, shared by every process serving the same segments
     * @param baseUrl the public URL prefix of the segment route, e.g. {@code https://sync.example.com/segments}
     * @param ttlMs   URL lifetime, at most 15 minutes; zero mints URLs that are born expired (the conformance host's
     *                {@code setSignedUrlTtlSeconds(0)}; the production configuration refuses it at start-up)
     */
    public SegmentUrlSigner(byte[] key, String baseUrl, long ttlMs) {
        if (key.length < 32) {
            throw new IllegalArgumentException("signing key must have at least 32 bytes");
        }
        if (ttlMs < 0 || ttlMs > MAX_TTL_MS) {
            throw new IllegalArgumentException("signed URL TTL must be within [0, 15 min]");
        }
        this.key = new SecretKeySpec(key.clone(), "HmacSHA256");
        this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.ttlMs = ttlMs;
    }

    /** A URL and its expiry (the descriptor's {@code url} and {@code urlExpiresAtMs}). */
    public record SignedUrl(String url, long expiresAtMs) {}

    /** The verified claims of a token. */
    public record Claims(String segmentId, String scopeDigest, String audience) {}

    private byte[] mac(byte[] data) {
        try {
            Mac m = Mac.getInstance("HmacSHA256");
            m.init(key);
            return m.doFinal(data);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The opaque, stable audience of a partition: a keyed derivation (§5.4). */
    public String audience(String partition) {
        byte[] full = mac(("syncular-segment-aud\u0000" + partition).getBytes(StandardCharsets.UTF_8));
        return B64.encodeToString(Arrays.copyOf(full, 16));
    }

    @Override
    public SignedUrl issue(String segmentId, String scopeDigest, String partition, long nowMs) {
        return sign(segmentId, scopeDigest, partition, nowMs);
    }

    public SignedUrl sign(String segmentId, String scopeDigest, String partition, long nowMs) {
        long exp = (nowMs + ttlMs) / 1000;
        String payload = "{\"v\":1,\"seg\":" + quote(segmentId) + ",\"sd\":" + quote(scopeDigest) + ",\"aud\":"
                + quote(audience(partition)) + ",\"exp\":" + exp + "}";
        byte[] bytes = payload.getBytes(StandardCharsets.UTF_8);
        String token = B64.encodeToString(bytes) + "." + B64.encodeToString(mac(bytes));
        return new SignedUrl(baseUrl + "/" + segmentId + "?st=" + token, exp * 1000);
    }

    /**
     * Verifies the MAC, the expiry (with at most 60 s skew) and the segment; returns the claims, or
     * {@code null} for any failure (the caller answers {@code sync.forbidden} without saying which).
     */
    public Claims verify(String token, String segmentId, long nowMs) {
        if (token == null) {
            return null;
        }
        int dot = token.indexOf('.');
        if (dot <= 0 || dot != token.lastIndexOf('.')) {
            return null;
        }
        try {
            byte[] payload = B64D.decode(token.substring(0, dot));
            byte[] sig = B64D.decode(token.substring(dot + 1));
            if (!MessageDigest.isEqual(sig, mac(payload))) {
                return null;
            }
            JsonNode p = Json.readTree(payload);
            if (p.path("v").asInt() != 1 || !p.path("exp").canConvertToExactIntegral()) {
                return null;
            }
            if (p.path("exp").asLong() * 1000 + SKEW_MS < nowMs) {
                return null;
            }
            if (!segmentId.equals(p.path("seg").asText(null))) {
                return null;
            }
            String sd = p.path("sd").asText(null);
            String aud = p.path("aud").asText(null);
            return sd == null || aud == null ? null : new Claims(segmentId, sd, aud);
        } catch (Exception e) {
            return null;
        }
    }

    private static String quote(String s) {
        StringBuilder sb = new StringBuilder();
        CanonicalJson.string(sb, s);
        return sb.toString();
    }
}
