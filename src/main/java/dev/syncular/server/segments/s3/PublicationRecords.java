package dev.syncular.server.segments.s3;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.segments.SegmentPublication;
import dev.syncular.server.segments.StoredSegment;
import dev.syncular.server.wire.Json;
import dev.syncular.server.wire.MediaType;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;

/**
 * The record object of an entry ({@code {keyPrefix}rec/sha256/{hex}.json}, §5.1): its publications, the length of
 * its bytes, or the mark of a sweep deleting it — read with the ETag its conditional update must match, and
 * written only conditionally. Also reads the older shape (flat publication fields with a {@code scopeDigests}
 * array, in the record object or base64url JSON in the bytes object's user metadata) as one publication per
 * recorded digest.
 */
final class PublicationRecords {
    /** Older records kept their metadata here (base64url JSON), on the bytes object. */
    static final String LEGACY_METADATA = "syncular-record";

    /** A deletion mark older than this is abandoned: a publisher or another sweep takes it over. */
    static final long STALE_DELETION_MS = 30_000;

    /** A record as read, with the ETag its conditional update must match. */
    record Versioned(
            String etag,
            List<SegmentPublication> publications,
            long byteLength,
            boolean deleting,
            long deletingSinceMs) {}

    private final S3Objects objects;
    private final SegmentObjectKeys keys;

    PublicationRecords(S3Objects objects, SegmentObjectKeys keys) {
        this.objects = objects;
        this.keys = keys;
    }

    CompletableFuture<Versioned> readRecord(String segmentId) {
        return objects.getBytes(keys.recordKey(segmentId)).thenApply(got -> got == null ? null : versioned(got));
    }

    private static Versioned versioned(ResponseBytes<GetObjectResponse> got) {
        JsonNode n = parse(got.asByteArray());
        String etag = got.response().eTag();
        if (n.has("deletingSinceMs")) {
            return new Versioned(
                    etag, List.of(), -1, true, n.path("deletingSinceMs").asLong());
        }
        if (!n.has("publications")) { // an older flat record moved into the record object
            return new Versioned(
                    etag, legacyPublications(n), n.path("byteLength").asLong(), false, 0);
        }
        List<SegmentPublication> pubs = new ArrayList<>();
        for (JsonNode p : n.path("publications")) {
            pubs.add(new SegmentPublication(
                    p.path("partition").asText(),
                    p.path("logEpoch").asText(),
                    p.path("table").asText(),
                    p.path("schemaVersion").asInt(),
                    mediaType(p.path("mediaType")),
                    p.path("scopeDigest").asText(),
                    p.path("asOfCommitSeq").asLong(),
                    text(p.get("rowCursor")),
                    text(p.get("nextRowCursor")),
                    p.path("rowCount").asLong(),
                    p.path("createdAtMs").asLong(),
                    p.path("expiresAtMs").asLong()));
        }
        return new Versioned(etag, List.copyOf(pubs), n.path("byteLength").asLong(), false, 0);
    }

    CompletableFuture<Boolean> writeRecord(
            String segmentId, long byteLength, List<SegmentPublication> pubs, String etag) {
        ObjectNode n = Json.object().put("segmentId", segmentId).put("byteLength", byteLength);
        ArrayNode arr = n.putArray("publications");
        for (SegmentPublication p : pubs) {
            ObjectNode o = arr.addObject();
            o.put("partition", p.partition())
                    .put("logEpoch", p.logEpoch())
                    .put("table", p.table())
                    .put("schemaVersion", p.schemaVersion())
                    .put("mediaType", p.mediaType().wireName)
                    .put("scopeDigest", p.scopeDigest())
                    .put("asOfCommitSeq", p.asOfCommitSeq())
                    .put("rowCursor", p.rowCursor())
                    .put("nextRowCursor", p.nextRowCursor())
                    .put("rowCount", p.rowCount())
                    .put("createdAtMs", p.createdAtMs())
                    .put("expiresAtMs", p.expiresAtMs());
        }
        return objects.conditionalPut(keys.recordKey(segmentId), write(n), etag);
    }

    /** The older shape: the record in the bytes object's user metadata. */
    CompletableFuture<StoredSegment> readLegacy(String segmentId) {
        return objects.head(keys.objectKey(segmentId)).thenApply(head -> {
            if (head == null) {
                return null;
            }
            String meta = head.metadata().get(LEGACY_METADATA);
            List<SegmentPublication> pubs = meta == null
                    ? List.of()
                    : legacyPublications(parse(Base64.getUrlDecoder().decode(meta.trim())));
            return new StoredSegment(segmentId, head.contentLength(), pubs);
        });
    }

    /** One publication per recorded digest of a flat (pre-publications) record. */
    private static List<SegmentPublication> legacyPublications(JsonNode r) {
        List<String> digests = new ArrayList<>();
        digests.add(r.path("scopeDigest").asText());
        for (JsonNode d : r.path("scopeDigests")) {
            if (!digests.contains(d.asText())) {
                digests.add(d.asText());
            }
        }
        List<SegmentPublication> out = new ArrayList<>();
        for (String d : digests) {
            out.add(new SegmentPublication(
                    r.path("partition").asText(),
                    r.path("logEpoch").asText(),
                    r.path("table").asText(),
                    r.path("schemaVersion").asInt(),
                    mediaType(r.path("mediaType")),
                    d,
                    r.path("asOfCommitSeq").asLong(),
                    text(r.get("rowCursor")),
                    text(r.get("nextRowCursor")),
                    r.path("rowCount").asLong(),
                    r.path("createdAtMs").asLong(),
                    r.path("expiresAtMs").asLong()));
        }
        return out;
    }

    private static MediaType mediaType(JsonNode n) {
        if (n.isNumber()) {
            return MediaType.of(n.asInt());
        }
        return "sqlite".equals(n.asText()) ? MediaType.SQLITE : MediaType.ROWS;
    }

    private static String text(JsonNode n) {
        return n == null || n.isNull() ? null : n.asText();
    }

    static JsonNode parse(byte[] json) {
        try {
            return Json.readTree(json);
        } catch (IOException e) {
            throw new IllegalStateException("corrupt segment record object", e);
        }
    }

    static byte[] write(JsonNode n) {
        try {
            return Json.writeValueAsBytes(n);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
