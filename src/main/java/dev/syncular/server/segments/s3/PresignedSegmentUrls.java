package dev.syncular.server.segments.s3;

import dev.syncular.server.segments.SegmentUrlSigner;
import dev.syncular.server.segments.SegmentUrls;
import java.time.Duration;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;
import software.amazon.awssdk.services.s3.presigner.model.PresignedGetObjectRequest;

/**
 * §5.4 delegated presign: provider presigned GETs of the segment bytes objects, whose keys embed the segment id.
 */
final class PresignedSegmentUrls {
    private final S3Presigner presigner;
    private final String bucket;
    private final SegmentObjectKeys keys;

    /** @param presigner may be null when URLs are not wanted ({@link #urls} then refuses) */
    PresignedSegmentUrls(S3Presigner presigner, String bucket, SegmentObjectKeys keys) {
        this.presigner = presigner;
        this.bucket = bucket;
        this.keys = keys;
    }

    /**
     * A presigned GET of the segment object, valid for {@code ttl} (1s to 15 minutes: the constraints of {@code s3.S3Config#presignTtl}). The presigner signs with
     * the wall clock; the expiry reported is the one it signed.
     */
    SegmentUrls urls(Duration ttl) {
        if (presigner == null) {
            throw new IllegalStateException("no presigner configured");
        }
        return (segmentId, scopeDigest, partition, nowMs) -> {
            PresignedGetObjectRequest p = presigner.presignGetObject(r -> r.signatureDuration(ttl)
                    .getObjectRequest(g -> g.bucket(bucket).key(keys.objectKey(segmentId))));
            return new SegmentUrlSigner.SignedUrl(
                    p.url().toString(), p.expiration().toEpochMilli());
        };
    }
}
