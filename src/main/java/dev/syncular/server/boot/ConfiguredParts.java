package dev.syncular.server.boot;

import dev.syncular.server.config.ServesRequests;
import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.s3.S3Config;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentUrlSigner;
import dev.syncular.server.segments.SegmentUrls;
import dev.syncular.server.segments.SignedUrlsConfig;
import dev.syncular.server.segments.s3.S3SegmentStore;
import dev.syncular.server.storage.AuthLeaseStorage;
import dev.syncular.server.storage.StorageConfig;
import dev.syncular.server.sync.AuthLeases;
import dev.syncular.server.sync.LeasesConfig;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.configuration.ConfigUtils;
import io.quarkus.runtime.configuration.ConfigurationException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Optional;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * The engine's parts that {@code syncular.*} switches on and that need a key shared by every pod: §5.4 segment
 * URLs ({@code syncular.signed-urls.*}, or the S3 store's presigned GETs) and §7.3 auth leases
 * ({@code syncular.leases.*}). Off, they are {@link SegmentUrls#NONE} and {@link AuthLeases#OFF}.
 */
public final class ConfiguredParts {
    private ConfiguredParts() {}

    /** §7.3 auth leases from {@code syncular.leases.*}, or {@link AuthLeases#OFF} when disabled (the default). */
    public static AuthLeases leases(LeasesConfig l, StorageConfig config, AuthLeaseStorage storage) {
        if (!l.enabled() || !ServesRequests.thisProcess()) {
            return AuthLeases.OFF; // a one-shot command issues no lease
        }
        // the ttl (more than 0s) and the key's length are checked at start-up (LeasesConfig.problems)
        byte[] key = key(
                l.key(),
                "syncular.leases.key",
                MISSING_LEASE_KEY,
                "syncular development lease key",
                config.pgSchema(),
                ConfigUtils.isProfileActive("prod"));
        return new AuthLeases(storage.authLeases(key), l.ttl().toMillis(), System::currentTimeMillis);
    }

    static final String MISSING_LEASE_KEY = "syncular.leases.key is not set. Auth lease records (SSP2 §7.3) are sealed"
            + " at rest and verified by whichever pod serves the client, so every pod needs the same key: set"
            + " syncular.leases.key (env SYNCULAR_LEASES_KEY) to at least 32 random bytes of text, e.g."
            + " `openssl rand -base64 48`, the same on every pod; or set syncular.leases.enabled=false.";

    /** §5.4: provider presigned GETs for the S3 store, the native HMAC scheme for the embedded one. */
    public static SegmentUrls urls(
            SignedUrlsConfig signed,
            S3Config s3Config,
            StorageConfig storage,
            SyncularConfig config,
            SegmentStore segments) {
        if (!ServesRequests.thisProcess()) {
            return SegmentUrls.NONE; // a one-shot command hands no URL to a client
        }
        if (segments instanceof S3SegmentStore s3) {
            return s3.presignedUrls(s3Config.presignTtl());
        }
        return signer(signed, storage, config);
    }

    /**
     * §5.4 signer from {@code syncular.signed-urls.*}, or {@link SegmentUrls#NONE} when they are disabled. Every pod serving
     * the database must verify what another pod signed, so the key is configured ({@link #signingKey}).
     */
    public static SegmentUrls signer(SignedUrlsConfig s, StorageConfig storage, SyncularConfig config) {
        if (!s.enabled()) {
            return SegmentUrls.NONE;
        }
        byte[] key = signingKey(s.key(), storage.pgSchema(), ConfigUtils.isProfileActive("prod"));
        boolean test = LaunchMode.current() == LaunchMode.TEST;
        String port = ConfigProvider.getConfig()
                .getOptionalValue(test ? "quarkus.http.test-port" : "quarkus.http.port", String.class)
                .orElse(test ? "8081" : "8080");
        String base = s.baseUrl().orElse("http://localhost:" + port + config.mountPrefix() + "/segments");
        // the ttl (within 15 minutes, §5.4) and the key's length are checked at start-up (SignedUrlsConfig.problems)
        return new SegmentUrlSigner(key, base, s.ttl().toMillis());
    }

    static final String MISSING_KEY = "syncular.signed-urls.key is not set. Signed segment URLs (SSP2 §5.4) are"
            + " verified by whichever pod the client reaches, so every pod needs the same key: set"
            + " syncular.signed-urls.key (env SYNCULAR_SIGNED_URLS_KEY) to at least 32 random bytes of text, e.g."
            + " `openssl rand -base64 48`, the same on every pod; or set syncular.signed-urls.enabled=false to serve"
            + " segments only through the authenticated GET <mount>/segments/{id}.";

    /**
     * The HMAC key: the configured one (at least 32 bytes); without one {@code prod} refuses to start
     * ({@link #MISSING_KEY}) and {@code dev}/{@code test} use a development key derived from the storage schema,
     * the same in every process on that schema, and public, hence forgeable: development only.
     */
    public static byte[] signingKey(Optional<String> configured, String pgSchema, boolean prod) {
        return key(
                configured,
                "syncular.signed-urls.key",
                MISSING_KEY,
                "syncular development signed-URL key",
                pgSchema,
                prod);
    }

    /** An HMAC key from {@code property} (its length checked at start-up), or the development key; see {@link #signingKey}. */
    static byte[] key(
            Optional<String> configured,
            String property,
            String missing,
            String devPurpose,
            String pgSchema,
            boolean prod) {
        if (configured.isPresent() && !configured.get().isBlank()) {
            return configured.get().getBytes(StandardCharsets.UTF_8);
        }
        if (prod) {
            throw new ConfigurationException(missing);
        }
        try {
            return MessageDigest.getInstance("SHA-256")
                    .digest((devPurpose + "," + " storage schema " + pgSchema).getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
