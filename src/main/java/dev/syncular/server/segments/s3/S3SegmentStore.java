package dev.syncular.server.segments.s3;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.segments.SegmentCollisionException;
import dev.syncular.server.segments.SegmentPublication;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentStoreStats;
import dev.syncular.server.segments.SegmentUrlSigner;
import dev.syncular.server.segments.SegmentUrls;
import dev.syncular.server.segments.StoredSegment;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.MediaType;
import io.smallrye.mutiny.Uni;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;
import software.amazon.awssdk.services.s3.presigner.model.PresignedGetObjectRequest;

/**
 * {@link SegmentStore} on an S3-compatible object store (AWS S3, Cloudflare R2, MinIO) — §5.1 cache semantics
 * and §5.4 delegated presign. Every lookup is a GET or HEAD on a deterministic key, never a LIST:
 *
 * <ul>
 *   <li>{@code {keyPrefix}seg/sha256/{hex}} — the segment bytes, verbatim and immutable, so a presigned GET
 *       serves exactly the content-addressed bytes;
 *   <li>{@code {keyPrefix}rec/sha256/{hex}.json} — the mutable record of the entry's publications, written
 *       only with conditional requests ({@code If-None-Match: *} to create, {@code If-Match: <etag>} to
 *       update) and re-read and merged again on {@code 412}: two publishers racing on one entry cannot both
 *       win and drop a publication. The ETag is over the record itself, not over the bytes (a content hash,
 *       identical for identical bytes);
 *   <li>{@code {keyPrefix}find/{sha256(reuse key)}.json} — the §5.3 whole-table reuse pointer, written for
 *       publications with both row cursors absent.
 * </ul>
 *
 * A record written in the older shape — flat publication fields with a {@code scopeDigests} array, in the
 * record object or base64url JSON in the bytes object's {@code x-amz-meta-syncular-record} user metadata —
 * is read as one publication per recorded digest; the next publish rewrites it in the current shape.
 *
 * <p><b>Expiry.</b> Records keep each publication's expiry; {@link #describe} returns expired ones (the
 * download route answers {@code sync.segment_expired}) and {@link #find} skips them. {@link #deleteExpired} is
 * the one LISTing operation (a GC path): it marks a fully expired record as being deleted (conditionally, so a
 * concurrent publication wins), deletes the bytes, then the record. A publisher that meets such a mark waits
 * for the deletion to finish (or takes over a mark older than {@link #STALE_DELETION_MS}) and then recreates the
 * entry, bytes included — no publication is lost. A bucket lifecycle rule is garbage collection only and must
 * expire {@code seg/}, {@code rec/} and {@code find/} objects well after the segment TTL (docs/SEGMENTS.md).
 *
 * <p>The AWS SDK client is synchronous: every call runs on {@code executor} (a worker pool), never on the
 * Vert.x event loop.
 */
public final class S3SegmentStore implements SegmentStore {
    /** Older records kept their metadata here (base64url JSON), on the bytes object. */
    static final String LEGACY_METADATA = "syncular-record";

    static final long STALE_DELETION_MS = 30_000;
    private static final int CAS_ATTEMPTS = 32;
    private static final Pattern SEGMENT_ID = Pattern.compile("sha256:[0-9a-f]{64}");
    private static final ObjectMapper JSON = new ObjectMapper();

    private final S3Client s3;
    private final S3Presigner presigner;
    private final String bucket;
    private final String prefix;
    private final Executor executor;

    /**
     * @param s3        a synchronous client (calls run on {@code executor})
     * @param presigner for {@link #presignedUrls}; may be null when URLs are not wanted
     * @param keyPrefix namespace inside the bucket, e.g. {@code syncular/} (may be empty)
     * @param executor  worker pool for the blocking SDK calls
     */
    public S3SegmentStore(S3Client s3, S3Presigner presigner, String bucket, String keyPrefix, Executor executor) {
        this.s3 = Objects.requireNonNull(s3, "s3");
        this.presigner = presigner;
        this.bucket = Objects.requireNonNull(bucket, "bucket");
        this.prefix = keyPrefix == null ? "" : keyPrefix;
        this.executor = Objects.requireNonNull(executor, "executor");
    }

    public String bucket() {
        return bucket;
    }

    /** Fails when the bucket is missing or the credentials are refused (a blocking call: start-up only). */
    public void checkBucket() {
        s3.headBucket(r -> r.bucket(bucket));
    }

    /** {@code {keyPrefix}seg/sha256/{hex}}: the object key embeds the segment id (§5.4 equivalence rule). */
    public String objectKey(String segmentId) {
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

    /**
     * §5.4 delegated presign: a provider presigned GET of the segment object, valid for {@code ttl} (at most
     * 15 minutes). The presigner signs with the wall clock; the expiry reported is the one it signed.
     */
    public SegmentUrls presignedUrls(Duration ttl) {
        if (presigner == null) {
            throw new IllegalStateException("no presigner configured");
        }
        if (ttl.isZero() || ttl.isNegative() || ttl.compareTo(Duration.ofMinutes(15)) > 0) {
            throw new IllegalArgumentException("presigned URL TTL must be within (0, 15 min]");
        }
        return (segmentId, scopeDigest, partition, nowMs) -> {
            PresignedGetObjectRequest p = presigner.presignGetObject(r -> r.signatureDuration(ttl)
                    .getObjectRequest(g -> g.bucket(bucket).key(objectKey(segmentId))));
            return new SegmentUrlSigner.SignedUrl(
                    p.url().toString(), p.expiration().toEpochMilli());
        };
    }

    private <T> Uni<T> blocking(Supplier<T> work) {
        return Uni.createFrom().item(work).runSubscriptionOn(executor);
    }

    // ------------------------------------------------------------------------------------------------
    // publish
    // ------------------------------------------------------------------------------------------------

    @Override
    public Uni<Void> publish(String segmentId, byte[] bytes, SegmentPublication publication) {
        Objects.requireNonNull(bytes, "bytes");
        return blocking(() -> {
            checkId(segmentId);
            if (!segmentId.equals("sha256:" + HexFormat.of().formatHex(sha256(bytes)))) {
                throw new SegmentCollisionException();
            }
            publishBlocking(segmentId, bytes.length, publication, () -> RequestBody.fromBytes(bytes));
            return null;
        });
    }

    /** Streams the file to the bytes object (large SQLite images): never holds it in memory. */
    @Override
    public Uni<Void> publishFile(String segmentId, Path file, SegmentPublication publication) {
        return blocking(() -> {
            checkId(segmentId);
            long length;
            try (InputStream in = new DigestInputStream(Files.newInputStream(file), digest())) {
                length = in.transferTo(OutputStream.nullOutputStream());
                byte[] hash = ((DigestInputStream) in).getMessageDigest().digest();
                if (!segmentId.equals("sha256:" + HexFormat.of().formatHex(hash))) {
                    throw new SegmentCollisionException();
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            publishBlocking(segmentId, length, publication, () -> RequestBody.fromFile(file));
            return null;
        });
    }

    private void publishBlocking(
            String segmentId, long length, SegmentPublication publication, Supplier<RequestBody> body) {
        Objects.requireNonNull(publication, "publication");
        // Publishers and sweeps in this process take turns per entry (fewer lost conditional writes to retry);
        // across processes the conditional record writes alone keep every publication.
        ReentrantLock lock = locks[Math.floorMod(segmentId.hashCode(), locks.length)];
        lock.lock();
        try {
            publishLocked(segmentId, length, publication, body);
        } finally {
            lock.unlock();
        }
    }

    private final ReentrantLock[] locks = locks();

    private static ReentrantLock[] locks() {
        ReentrantLock[] l = new ReentrantLock[64];
        for (int i = 0; i < l.length; i++) {
            l[i] = new ReentrantLock();
        }
        return l;
    }

    /** Test seam: runs between reading a record and writing it back (to lose a conditional-write race). */
    volatile Runnable beforeRecordWrite;

    private void publishLocked(
            String segmentId, long length, SegmentPublication publication, Supplier<RequestBody> body) {
        boolean created = false;
        for (int attempt = 0; ; attempt++) {
            if (attempt == CAS_ATTEMPTS) {
                throw new IllegalStateException("segment record kept changing concurrently");
            }
            Versioned rec = readRecord(segmentId);
            if (rec != null && rec.deleting()) {
                if (System.currentTimeMillis() - rec.deletingSinceMs() < STALE_DELETION_MS) {
                    backoff(attempt); // a sweep is deleting this entry right now: let it finish, then recreate
                    continue;
                }
                rec = new Versioned(rec.etag(), null, -1, true, rec.deletingSinceMs()); // abandoned: take it over
            }
            boolean live = rec != null && !rec.deleting();
            if (live && rec.byteLength() != length) {
                throw new SegmentCollisionException();
            }
            List<SegmentPublication> pubs = live ? new ArrayList<>(rec.publications()) : new ArrayList<>();
            if (!merge(pubs, publication) && live) {
                break; // nothing to write: the context already lives at least that long
            }
            Runnable race = beforeRecordWrite;
            if (race != null) {
                beforeRecordWrite = null;
                race.run();
            }
            if (writeRecord(segmentId, length, pubs, rec == null ? null : rec.etag())) {
                created = !live;
                break;
            }
            backoff(attempt);
        }
        // The record is written first: a sweep that marked this entry is over (or was taken over), so bytes
        // put now are never deleted underneath the new publication. A live entry's bytes may have been
        // removed by a lifecycle rule: put them back.
        if (created || !exists(objectKey(segmentId))) {
            s3.putObject(
                    PutObjectRequest.builder()
                            .bucket(bucket)
                            .key(objectKey(segmentId))
                            .contentType("application/octet-stream")
                            .contentLength(length)
                            .build(),
                    body.get());
        }
        if (publication.rowCursor() == null && publication.nextRowCursor() == null) {
            ObjectNode pointer = JSON.createObjectNode().put("segmentId", segmentId);
            s3.putObject(
                    PutObjectRequest.builder()
                            .bucket(bucket)
                            .key(findKey(ReuseKey.of(publication)))
                            .contentType("application/json")
                            .build(),
                    RequestBody.fromBytes(write(pointer)));
        }
    }

    /** Merges {@code p} into {@code pubs} (§5.1); {@code true} when the list changed. */
    private static boolean merge(List<SegmentPublication> pubs, SegmentPublication p) {
        for (int i = 0; i < pubs.size(); i++) {
            SegmentPublication old = pubs.get(i);
            if (old.sameContext(p)) {
                if (p.expiresAtMs() <= old.expiresAtMs()) {
                    return false;
                }
                pubs.set(
                        i,
                        new SegmentPublication(
                                old.partition(),
                                old.logEpoch(),
                                old.table(),
                                old.schemaVersion(),
                                old.mediaType(),
                                old.scopeDigest(),
                                old.asOfCommitSeq(),
                                old.rowCursor(),
                                old.nextRowCursor(),
                                old.rowCount(),
                                old.createdAtMs(),
                                p.expiresAtMs()));
                return true;
            }
        }
        pubs.add(p);
        return true;
    }

    private static void backoff(int attempt) {
        try {
            Thread.sleep(Math.min(200, 5L << Math.min(attempt, 6)) + (long) (Math.random() * 5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    // ------------------------------------------------------------------------------------------------
    // reads
    // ------------------------------------------------------------------------------------------------

    @Override
    public Uni<StoredSegment> describe(String segmentId) {
        return blocking(() -> {
            checkId(segmentId);
            Versioned rec = readRecord(segmentId);
            if (rec != null) {
                return rec.deleting() ? null : new StoredSegment(segmentId, rec.byteLength(), rec.publications());
            }
            return readLegacy(segmentId);
        });
    }

    @Override
    public Uni<byte[]> read(String segmentId) {
        return blocking(() -> {
            checkId(segmentId);
            ResponseBytes<GetObjectResponse> got = getBytes(objectKey(segmentId));
            return got == null ? null : got.asByteArray();
        });
    }

    @Override
    public Uni<Match> find(ReuseKey key, long nowMs) {
        return blocking(() -> {
            ResponseBytes<GetObjectResponse> pointer = getBytes(findKey(key));
            if (pointer == null) {
                return null;
            }
            String segmentId = parse(pointer.asByteArray()).path("segmentId").asText("");
            if (!SEGMENT_ID.matcher(segmentId).matches()) {
                return null;
            }
            Versioned rec = readRecord(segmentId);
            if (rec == null || rec.deleting()) {
                return null;
            }
            SegmentPublication best = null;
            for (SegmentPublication p : rec.publications()) {
                if (key.matches(p)
                        && p.expiresAtMs() > nowMs
                        && (best == null || p.expiresAtMs() > best.expiresAtMs())) {
                    best = p;
                }
            }
            // lifecycle GC may have removed the bytes independently of the pointer and record
            return best == null || !exists(objectKey(segmentId)) ? null : new Match(segmentId, rec.byteLength(), best);
        });
    }

    // ------------------------------------------------------------------------------------------------
    // deleteExpired (the GC path: the only LIST)
    // ------------------------------------------------------------------------------------------------

    @Override
    public Uni<Integer> deleteExpired(long nowMs) {
        return blocking(() -> {
            int[] forgotten = {0};
            listing(prefix + "rec/sha256/", o -> {
                String key = o.key();
                String hex = key.substring((prefix + "rec/sha256/").length(), key.length() - ".json".length());
                if (forgetIfExpired("sha256:" + hex, nowMs)) {
                    forgotten[0]++;
                }
            });
            return forgotten[0];
        });
    }

    /** Every object under {@code keyPrefix}, page by page (a LIST: GC and statistics paths only). */
    private void listing(String keyPrefix, Consumer<S3Object> each) {
        String token = null;
        do {
            String continuation = token;
            ListObjectsV2Response page =
                    s3.listObjectsV2(r -> r.bucket(bucket).prefix(keyPrefix).continuationToken(continuation));
            page.contents().forEach(each);
            token = Boolean.TRUE.equals(page.isTruncated()) ? page.nextContinuationToken() : null;
        } while (token != null);
    }

    /** Under the entry's in-process lock: publishers in this process never race this sweep's steps. */
    private boolean forgetIfExpired(String segmentId, long nowMs) {
        if (!SEGMENT_ID.matcher(segmentId).matches()) {
            return false;
        }
        ReentrantLock lock = locks[Math.floorMod(segmentId.hashCode(), locks.length)];
        lock.lock();
        try {
            return forgetLocked(segmentId, nowMs);
        } finally {
            lock.unlock();
        }
    }

    private boolean forgetLocked(String segmentId, long nowMs) {
        Versioned rec = readRecord(segmentId);
        if (rec == null) {
            return false;
        }
        if (rec.deleting()) {
            if (System.currentTimeMillis() - rec.deletingSinceMs() < STALE_DELETION_MS) {
                return false; // another sweep is on it
            }
        } else {
            List<SegmentPublication> live = new ArrayList<>();
            for (SegmentPublication p : rec.publications()) {
                if (p.expiresAtMs() >= nowMs) {
                    live.add(p);
                }
            }
            if (!live.isEmpty()) {
                if (live.size() < rec.publications().size()) {
                    // drop the expired publications only; a concurrent publish wins the race (412) and a later
                    // sweep retries
                    writeRecord(segmentId, rec.byteLength(), live, rec.etag());
                }
                return false;
            }
        }
        // mark first, conditionally: a publication that lands meanwhile makes this fail and wins
        ObjectNode mark =
                JSON.createObjectNode().put("segmentId", segmentId).put("deletingSinceMs", System.currentTimeMillis());
        if (!conditionalPut(recordKey(segmentId), write(mark), rec.etag())) {
            return false;
        }
        s3.deleteObject(r -> r.bucket(bucket).key(objectKey(segmentId)));
        for (SegmentPublication p : rec.publications()) {
            if (p.rowCursor() == null && p.nextRowCursor() == null) {
                // only a pointer still naming this entry: a rebuilt image of the same key may own it now
                String key = findKey(ReuseKey.of(p));
                ResponseBytes<GetObjectResponse> pointer = getBytes(key);
                if (pointer != null
                        && segmentId.equals(
                                parse(pointer.asByteArray()).path("segmentId").asText())) {
                    s3.deleteObject(r -> r.bucket(bucket).key(key));
                }
            }
        }
        s3.deleteObject(r -> r.bucket(bucket).key(recordKey(segmentId)));
        return !rec.deleting();
    }

    /**
     * A LIST of the bytes objects ({@code seg/}), like {@link #deleteExpired} a whole-bucket walk: entries and
     * their bytes. Publications live in one record object per entry and are not read ({@code -1}).
     */
    @Override
    public Uni<SegmentStoreStats> stats(long nowMs) {
        return blocking(() -> {
            long[] segmentsAndBytes = {0, 0};
            listing(prefix + "seg/sha256/", o -> {
                segmentsAndBytes[0]++;
                segmentsAndBytes[1] += o.size() == null ? 0 : o.size();
            });
            return new SegmentStoreStats("s3", segmentsAndBytes[0], segmentsAndBytes[1], -1, -1);
        });
    }

    // ------------------------------------------------------------------------------------------------
    // record objects
    // ------------------------------------------------------------------------------------------------

    /** A record as read, with the ETag its conditional update must match. */
    private record Versioned(
            String etag,
            List<SegmentPublication> publications,
            long byteLength,
            boolean deleting,
            long deletingSinceMs) {}

    private Versioned readRecord(String segmentId) {
        ResponseBytes<GetObjectResponse> got = getBytes(recordKey(segmentId));
        if (got == null) {
            return null;
        }
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

    private boolean writeRecord(String segmentId, long byteLength, List<SegmentPublication> pubs, String etag) {
        ObjectNode n = JSON.createObjectNode().put("segmentId", segmentId).put("byteLength", byteLength);
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
        return conditionalPut(recordKey(segmentId), write(n), etag);
    }

    /** PUT with {@code If-Match: etag} (or {@code If-None-Match: *} when null); {@code false} on 412/409. */
    private boolean conditionalPut(String key, byte[] body, String etag) {
        PutObjectRequest.Builder req =
                PutObjectRequest.builder().bucket(bucket).key(key).contentType("application/json");
        req = etag == null ? req.ifNoneMatch("*") : req.ifMatch(etag);
        try {
            s3.putObject(req.build(), RequestBody.fromBytes(body));
            return true;
        } catch (software.amazon.awssdk.core.exception.SdkClientException | UncheckedIOException e) {
            // Outcome unknown (some servers answer 412 before reading the body and drop the connection):
            // the caller re-reads and merges again, which is idempotent whether or not this write landed.
            return false;
        } catch (S3Exception e) {
            // 412 Precondition Failed; 409 ConditionalRequestConflict when racing another conditional write
            if (e.statusCode() == 412 || e.statusCode() == 409) {
                return false;
            }
            throw e;
        }
    }

    /** The older shape: the record in the bytes object's user metadata. */
    private StoredSegment readLegacy(String segmentId) {
        HeadObjectResponse head = head(objectKey(segmentId));
        if (head == null) {
            return null;
        }
        String meta = head.metadata().get(LEGACY_METADATA);
        List<SegmentPublication> pubs = meta == null
                ? List.of()
                : legacyPublications(parse(Base64.getUrlDecoder().decode(meta.trim())));
        return new StoredSegment(segmentId, head.contentLength(), pubs);
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

    // ------------------------------------------------------------------------------------------------
    // S3 helpers
    // ------------------------------------------------------------------------------------------------

    private ResponseBytes<GetObjectResponse> getBytes(String key) {
        return orNull(() -> s3.getObjectAsBytes(r -> r.bucket(bucket).key(key)));
    }

    private HeadObjectResponse head(String key) {
        return orNull(() -> s3.headObject(r -> r.bucket(bucket).key(key)));
    }

    /** The call's result, or {@code null} when the object does not exist (404). */
    private static <T> T orNull(Supplier<T> call) {
        try {
            return call.get();
        } catch (S3Exception e) {
            if (e instanceof NoSuchKeyException || e.statusCode() == 404) {
                return null;
            }
            throw e;
        }
    }

    private boolean exists(String key) {
        return head(key) != null;
    }

    private static void checkId(String segmentId) {
        if (segmentId == null || !SEGMENT_ID.matcher(segmentId).matches()) {
            throw new IllegalArgumentException("segment id must be sha256:<64 lowercase hex>");
        }
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

    private static JsonNode parse(byte[] json) {
        try {
            return JSON.readTree(json);
        } catch (IOException e) {
            throw new IllegalStateException("corrupt segment record object", e);
        }
    }

    private static byte[] write(JsonNode n) {
        try {
            return JSON.writeValueAsBytes(n);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static MessageDigest digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] sha256(byte[] bytes) {
        return digest().digest(bytes);
    }
}
