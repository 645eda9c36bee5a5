package dev.syncular.server.segments.s3;

import dev.syncular.server.segments.SegmentStore.ReuseKey;
import dev.syncular.server.wire.CanonicalJson;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The deterministic object layout of the {@link S3SegmentStore} under its key prefix (§5.1, §5.4): the bytes
 * object, the publication record and the §5.3 whole-table reuse pointer of an entry, each found by a GET or HEAD
 * on its key, never a LIST.
 */
final class SegmentObjectKeys {
    static final Pattern SEGMENT_ID = Pattern.compile("sha256:[0-9a-f]{64}");

    private final String prefix;

    SegmentObjectKeys(String keyPrefix) {
        this.prefix = keyPrefix == null ? "" : keyPrefix;
    }

    /** The key prefix itself (possibly empty): the LIST walks start under it. */
    String prefix() {
        return prefix;
    }

    /** {@code {keyPrefix}seg/sha256/{hex}}: the object key embeds the segment id (§5.4 equivalence rule). */
    String objectKey(String segmentId) {
        return prefix + "seg/" + segmentId.replace(':', '/');
    }

    String recordKey(String segmentId) {
        return prefix + "rec/" + segmentId.replace(':', '/') + ".json";
    }

    String findKey(ReuseKey k) {
        List<Object> parts = List.of(
                k.partition(),
                k.logEpoch(),
                k.table(),
                k.schemaVersion(),
                k.mediaType().wireName,
                k.scopeDigest(),
                k.asOfCommitSeq());
        return prefix + "find/" + CanonicalJson.sha256Hex(CanonicalJson.write(parts)) + ".json";
    }
}
