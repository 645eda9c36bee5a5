package dev.syncular.server.s3;

import dev.syncular.server.config.DurationRange;
import dev.syncular.server.config.StoreKind;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The S3 bucket for segments and/or blobs; the client itself is configured under {@code quarkus.s3.*}. */
@ConfigMapping(prefix = "syncular.s3")
public interface S3Config {
    /** §5.4: a URL lifetime is more than 0s and at most 15 minutes. */
    String URL_TTL = "must be more than 0s and at most 15m (SSP2 §5.4)";

    /** Bucket name; required when a store is {@code s3}. */
    Optional<String> bucket();

    /**
     * Namespace inside the bucket, e.g. {@code syncular/} (keys become {@code syncular/seg/sha256/...}); unset =
     * none. (Optional: SmallRye Config treats an empty default as missing.)
     */
    Optional<String> keyPrefix();

    /** TTL of provider-presigned GET/PUT URLs (§5.4: at most 15 minutes; checked whether or not a store is S3). */
    @WithDefault("10m")
    @DurationRange(min = "PT1S", max = "PT15M", message = URL_TTL)
    Duration presignTtl();

    /** The mapping's one cross-field check, run at start-up: a store set to {@code s3} needs the bucket. */
    static List<String> problems(S3Config config, StoreKind segments, StoreKind blobs) {
        List<String> out = new ArrayList<>();
        boolean bucket = config.bucket().filter(b -> !b.isBlank()).isPresent();
        if (segments == StoreKind.S3 && !bucket) {
            out.add("syncular.segments.store=s3 needs syncular.s3.bucket (and quarkus.s3.* endpoint/credentials)");
        }
        if (blobs == StoreKind.S3 && !bucket) {
            out.add("syncular.blobs.store=s3 needs a bucket: set syncular.s3.bucket");
        }
        return out;
    }
}
