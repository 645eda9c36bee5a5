package dev.syncular.server.segments;

import dev.syncular.server.config.SecretKey;
import dev.syncular.server.config.StoreKind;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * §5.4 native signed segment URLs ({@code syncular.signed-urls.*}), offered to clients that advertise
 * {@code accept} bit 3. Every process serving the same database must share the key.
 */
@ConfigMapping(prefix = "syncular.signed-urls")
public interface SignedUrlsConfig {
    /**
     * Whether to offer native signed URLs (embedded segment store). {@code false} serves segments only
     * through the authenticated {@code GET <mount>/segments/{id}}.
     */
    @WithDefault("true")
    boolean enabled();

    /**
     * HMAC key (at least 32 bytes of text), the same on every pod. Unset: {@code prod} refuses to start
     * while signed URLs are enabled; {@code dev}/{@code test} derive a fixed development key from the
     * storage schema (public, so forgeable: never for production).
     */
    Optional<String> key();

    /** At most 15 minutes (§5.4): the revocation window of already issued URLs. */
    @WithDefault("10m")
    Duration ttl();

    /** Public URL of the segment route, e.g. {@code https://sync.example.com/segments}. */
    Optional<String> baseUrl();

    /**
     * The mapping's one cross-field check, run at start-up: while native signed URLs serve the embedded segment
     * store ({@code syncular.segments.store} not {@code s3}), a ttl within 15 minutes (§5.4) and a long enough key.
     */
    static List<String> problems(SignedUrlsConfig config, SegmentsConfig segments) {
        List<String> out = new ArrayList<>();
        if (!config.enabled() || segments.store() == StoreKind.S3) {
            return out;
        }
        Duration ttl = config.ttl();
        if (ttl.isZero() || ttl.isNegative() || ttl.toMillis() > SegmentUrlSigner.MAX_TTL_MS) {
            out.add("syncular.signed-urls.ttl must be more than 0s and at most 15m (SSP2 §5.4), was " + ttl);
        }
        if (!SecretKey.Check.acceptable(config.key().orElse(""))) {
            out.add("syncular.signed-urls.key must have at least " + SecretKey.MIN_BYTES + " bytes");
        }
        return out;
    }
}
