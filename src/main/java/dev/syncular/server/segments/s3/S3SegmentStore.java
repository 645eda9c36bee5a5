package dev.syncular.server.segments.s3;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.s3.S3Call;
import dev.syncular.server.s3.S3Outage;
import dev.syncular.server.segments.SegmentCollisionException;
import dev.syncular.server.segments.SegmentPublication;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentStoreStats;
import dev.syncular.server.segments.SegmentUrlSigner;
import dev.syncular.server.segments.SegmentUrls;
import dev.syncular.server.segments.StoredSegment;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.Json;
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
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
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
 * <p><b>Threading.</b> Every call goes through the asynchronous client ({@link S3AsyncClient} on the Netty HTTP
 * client, issue 44 hole 5): no thread is held while S3 is slow, unreachable or retrying (the SDK schedules its
 * retries instead of sleeping), and the steps of an operation are composed {@link CompletableFuture}s that
 * continue on the client's future-completion executor (in the application, Quarkus's worker pool: never an
 * event loop). Publishers and sweeps of one entry in this process take turns without holding a thread (a chain
 * of futures per lock stripe), and a lost conditional write is retried after a back-off on a timer.
 */
public final class S3SegmentStore implements SegmentStore {
    /** Older records kept their metadata here (base64url JSON), on the bytes object. */
    static final String LEGACY_METADATA = "syncular-record";

    static final long STALE_DELETION_MS = 30_000;
    private static final int CAS_ATTEMPTS = 32;
    private static final Pattern SEGMENT_ID = Pattern.compile("sha256:[0-9a-f]{64}");
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private final S3AsyncClient s3;
    private final S3Presigner presigner;
    private final String bucket;
    private final String prefix;

    /**
     * @param s3        the asynchronous client (the S3 extension's, on the Netty HTTP client)
     * @param presigner for {@link #presignedUrls}; may be null when URLs are not wanted
     * @param keyPrefix namespace inside the bucket, e.g. {@code syncular/} (may be empty)
     */
    public S3SegmentStore(S3AsyncClient s3, S3Presigner presigner, String bucket, String keyPrefix) {
        this.s3 = Objects.requireNonNull(s3, "s3");
        this.presigner = presigner;
        this.bucket = Objects.requireNonNull(bucket, "bucket");
        this.prefix = keyPrefix == null ? "" : keyPrefix;
    }

    public String bucket() {
        return bucket;
    }

    /** Fails when the bucket is missing or the credentials are refused (start-up awaits it). */
    public Uni<Void> checkBucket() {
        return uni(() -> s3.headBucket(r -> r.bucket(bucket)).thenApply(r -> null));
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

    /**
     * The operation as a {@link Uni}, started anew for each subscription; a failure is the SDK's own exception
     * (or the store's), not the {@link CompletionException} that wraps it inside the composition — except an
     * outage of S3 (a timeout, a lost connection, a 5xx), which is the storage's transient refusal
     * ({@link S3Outage}: 429 {@code storage_unavailable} to the round, §10.2).
     */
    private static <T> Uni<T> uni(Supplier<CompletableFuture<T>> operation) {
        return S3Call.of(operation);
    }

    // ------------------------------------------------------------------------------------------------
    // publish
    // ------------------------------------------------------------------------------------------------

    @Override
    public Uni<Void> publish(String segmentId, byte[] bytes, SegmentPublication publication) {
        Objects.requireNonNull(bytes, "bytes");
        return uni(() -> {
            checkId(segmentId);
            if (!segmentId.equals("sha256:" + HexFormat.of().formatHex(sha256(bytes)))) {
                throw new SegmentCollisionException();
            }
            return publishInTurn(segmentId, bytes.length, publication, () -> AsyncRequestBody.fromBytes(bytes));
        });
    }

    /**
     * Streams the file to the bytes object (large SQLite images): never holds it in memory. The file is hashed
     * first, a blocking read, on the caller's thread (an image build's, never an event loop); the upload reads it
     * asynchronously.
     */
    @Override
    public Uni<Void> publishFile(String segmentId, Path file, SegmentPublication publication) {
        return uni(() -> {
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
            return publishInTurn(segmentId, length, publication, () -> AsyncRequestBody.fromFile(file));
        });
    }

    /**
     * Publishers and sweeps in this process take turns per entry (fewer lost conditional writes to retry); across
     * processes the conditional record writes alone keep every publication.
     */
    private CompletableFuture<Void> publishInTurn(
            String segmentId, long length, SegmentPublication publication, Supplier<AsyncRequestBody> body) {
        Objects.requireNonNull(publication, "publication");
        return inTurn(segmentId, () -> publishEntry(segmentId, length, publication, body));
    }

    /** One turn per lock stripe: the tail of each stripe's chain, completed (never failed) when its turn ends. */
    private final CompletableFuture<?>[] turns = turns();

    private static CompletableFuture<?>[] turns() {
        CompletableFuture<?>[] t = new CompletableFuture<?>[64];
        Arrays.fill(t, DONE);
        return t;
    }

    /** Runs {@code work} once the entry's stripe is free; the stripe is free again when its future completes. */
    private <T> CompletableFuture<T> inTurn(String segmentId, Supplier<CompletableFuture<T>> work) {
        int stripe = Math.floorMod(segmentId.hashCode(), turns.length);
        CompletableFuture<Void> released = new CompletableFuture<>();
        CompletableFuture<?> previous;
        synchronized (turns) {
            previous = turns[stripe];
            turns[stripe] = released;
        }
        return previous.thenCompose(v -> work.get()).whenComplete((r, e) -> released.complete(null));
    }

    /** Test seam: runs between reading a record and writing it back (to lose a conditional-write race). */
    volatile Runnable beforeRecordWrite;

    private CompletableFuture<Void> publishEntry(
            String segmentId, long length, SegmentPublication publication, Supplier<AsyncRequestBody> body) {
        // The record is written first: a sweep that marked this entry is over (or was taken over), so bytes
        // put now are never deleted underneath the new publication. A live entry's bytes may have been
        // removed by a lifecycle rule: put them back.
        return recordPublication(segmentId, length, publication, 0)
                .thenCompose(created -> created
                        ? CompletableFuture.completedFuture(true)
                        : exists(objectKey(segmentId)).thenApply(e -> !e))
                .thenCompose(putBytes -> putBytes
                        ? s3.putObject(
                                        PutObjectRequest.builder()
                                                .bucket(bucket)
                                                .key(objectKey(segmentId))
                                                .contentType("application/octet-stream")
                                                .contentLength(length)
                                                .build(),
                                        body.get())
                                .thenApply(r -> null)
                        : DONE)
                .thenCompose(v -> {
                    if (publication.rowCursor() != null || publication.nextRowCursor() != null) {
                        return DONE;
                    }
                    ObjectNode pointer = Json.object().put("segmentId", segmentId);
                    return s3.putObject(
                                    PutObjectRequest.builder()
                                            .bucket(bucket)
                                            .key(findKey(ReuseKey.of(publication)))
                                            .contentType("application/json")
                                            .build(),
                                    AsyncRequestBody.fromBytes(write(pointer)))
                            .thenApply(r -> null);
                });
    }

    /**
     * Merges the publication into the entry's record with a conditional write, re-reading and merging again when
     * another writer won; {@code true} when this write created the entry (no live record before).
     */
    private CompletableFuture<Boolean> recordPublication(
            String segmentId, long length, SegmentPublication publication, int attempt) {
        if (attempt == CAS_ATTEMPTS) {
            return CompletableFuture.failedFuture(
                    new IllegalStateException("segment record kept changing concurrently"));
        }
        return readRecord(segmentId).thenCompose(found -> {
            Versioned rec = found;
            if (rec != null && rec.deleting()) {
                if (System.currentTimeMillis() - rec.deletingSinceMs() < STALE_DELETION_MS) {
                    // a sweep is deleting this entry right now: let it finish, then recreate
                    return backoff(attempt)
                            .thenCompose(v -> recordPublication(segmentId, length, publication, attempt + 1));
                }
                rec = new Versioned(rec.etag(), null, -1, true, rec.deletingSinceMs()); // abandoned: take it over
            }
            boolean live = rec != null && !rec.deleting();
            if (live && rec.byteLength() != length) {
                throw new SegmentCollisionException();
            }
            List<SegmentPublication> pubs = live ? new ArrayList<>(rec.publications()) : new ArrayList<>();
            if (!merge(pubs, publication) && live) {
                return CompletableFuture.completedFuture(false); // the context already lives at least that long
            }
            Runnable race = beforeRecordWrite;
            if (race != null) {
                beforeRecordWrite = null;
                race.run();
            }
            return writeRecord(segmentId, length, pubs, rec == null ? null : rec.etag())
                    .thenCompose(written -> written
                            ? CompletableFuture.completedFuture(!live)
                            : backoff(attempt)
                                    .thenCompose(v -> recordPublication(segmentId, length, publication, attempt + 1)));
        });
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

    /** Completes after the attempt's back-off (a timer, no thread held). */
    private static CompletableFuture<Void> backoff(int attempt) {
        long ms = Math.min(200, 5L << Math.min(attempt, 6)) + (long) (Math.random() * 5);
        return CompletableFuture.runAsync(() -> {}, CompletableFuture.delayedExecutor(ms, TimeUnit.MILLISECONDS));
    }

    // ------------------------------------------------------------------------------------------------
    // reads
    // ------------------------------------------------------------------------------------------------

    @Override
    public Uni<StoredSegment> describe(String segmentId) {
        return uni(() -> {
            checkId(segmentId);
            return readRecord(segmentId).thenCompose(rec -> {
                if (rec != null) {
                    return CompletableFuture.completedFuture(
                            rec.deleting() ? null : new StoredSegment(segmentId, rec.byteLength(), rec.publications()));
                }
                return readLegacy(segmentId);
            });
        });
    }

    @Override
    public Uni<byte[]> read(String segmentId) {
        return uni(() -> {
            checkId(segmentId);
            return getBytes(objectKey(segmentId)).thenApply(got -> got == null ? null : got.asByteArray());
        });
    }

    @Override
    public Uni<Match> find(ReuseKey key, long nowMs) {
        return uni(() -> getBytes(findKey(key)).thenCompose(pointer -> {
            if (pointer == null) {
                return CompletableFuture.completedFuture(null);
            }
            String segmentId = parse(pointer.asByteArray()).path("segmentId").asText("");
            if (!SEGMENT_ID.matcher(segmentId).matches()) {
                return CompletableFuture.completedFuture(null);
            }
            return readRecord(segmentId).thenCompose(rec -> {
                if (rec == null || rec.deleting()) {
                    return CompletableFuture.completedFuture(null);
                }
                SegmentPublication best = null;
                for (SegmentPublication p : rec.publications()) {
                    if (key.matches(p)
                            && p.expiresAtMs() > nowMs
                            && (best == null || p.expiresAtMs() > best.expiresAtMs())) {
                        best = p;
                    }
                }
                if (best == null) {
                    return CompletableFuture.completedFuture(null);
                }
                SegmentPublication chosen = best;
                // lifecycle GC may have removed the bytes independently of the pointer and record
                return exists(objectKey(segmentId))
                        .thenApply(e -> e ? new Match(segmentId, rec.byteLength(), chosen) : null);
            });
        }));
    }

    // ------------------------------------------------------------------------------------------------
    // deleteExpired (the GC path: the only LIST)
    // ------------------------------------------------------------------------------------------------

    @Override
    public Uni<Integer> deleteExpired(long nowMs) {
        String recPrefix = prefix + "rec/sha256/";
        return uni(() -> {
            int[] forgotten = {0};
            // one entry after the other, as the listing yields them
            return listing(recPrefix, null, o -> {
                        String key = o.key();
                        String hex = key.substring(recPrefix.length(), key.length() - ".json".length());
                        return forgetIfExpired("sha256:" + hex, nowMs).thenAccept(gone -> {
                            if (gone) {
                                forgotten[0]++;
                            }
                        });
                    })
                    .thenApply(v -> forgotten[0]);
        });
    }

    /**
     * Every object under {@code keyPrefix}, page by page, {@code each} one after the other (a LIST: GC and
     * statistics paths only).
     */
    private CompletableFuture<Void> listing(
            String keyPrefix, String token, Function<S3Object, CompletableFuture<Void>> each) {
        return s3.listObjectsV2(r -> r.bucket(bucket).prefix(keyPrefix).continuationToken(token))
                .thenCompose(page -> {
                    CompletableFuture<Void> done = DONE;
                    for (S3Object o : page.contents()) {
                        done = done.thenCompose(v -> each.apply(o));
                    }
                    String next = Boolean.TRUE.equals(page.isTruncated()) ? page.nextContinuationToken() : null;
                    return next == null ? done : done.thenCompose(v -> listing(keyPrefix, next, each));
                });
    }

    /** In the entry's turn: publishers in this process never race this sweep's steps. */
    private CompletableFuture<Boolean> forgetIfExpired(String segmentId, long nowMs) {
        if (!SEGMENT_ID.matcher(segmentId).matches()) {
            return CompletableFuture.completedFuture(false);
        }
        return inTurn(segmentId, () -> forgetInTurn(segmentId, nowMs));
    }

    private CompletableFuture<Boolean> forgetInTurn(String segmentId, long nowMs) {
        return readRecord(segmentId).thenCompose(rec -> {
            if (rec == null) {
                return CompletableFuture.completedFuture(false);
            }
            if (rec.deleting()) {
                if (System.currentTimeMillis() - rec.deletingSinceMs() < STALE_DELETION_MS) {
                    return CompletableFuture.completedFuture(false); // another sweep is on it
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
                        // drop the expired publications only; a concurrent publish wins the race (412) and a
                        // later sweep retries
                        return writeRecord(segmentId, rec.byteLength(), live, rec.etag())
                                .thenApply(written -> false);
                    }
                    return CompletableFuture.completedFuture(false);
                }
            }
            // mark first, conditionally: a publication that lands meanwhile makes this fail and wins
            ObjectNode mark =
                    Json.object().put("segmentId", segmentId).put("deletingSinceMs", System.currentTimeMillis());
            return conditionalPut(recordKey(segmentId), write(mark), rec.etag()).thenCompose(marked -> {
                if (!marked) {
                    return CompletableFuture.completedFuture(false);
                }
                CompletableFuture<Void> steps = delete(objectKey(segmentId));
                for (SegmentPublication p : rec.publications()) {
                    if (p.rowCursor() == null && p.nextRowCursor() == null) {
                        // only a pointer still naming this entry: a rebuilt image of the same key may own it now
                        String key = findKey(ReuseKey.of(p));
                        steps = steps.thenCompose(v -> getBytes(key))
                                .thenCompose(pointer -> pointer != null
                                                && segmentId.equals(parse(pointer.asByteArray())
                                                        .path("segmentId")
                                                        .asText())
                                        ? delete(key)
                                        : DONE);
                    }
                }
                return steps.thenCompose(v -> delete(recordKey(segmentId))).thenApply(v -> !rec.deleting());
            });
        });
    }

    /**
     * A LIST of the bytes objects ({@code seg/}), like {@link #deleteExpired} a whole-bucket walk: entries and
     * their bytes. Publications live in one record object per entry and are not read ({@code -1}).
     */
    @Override
    public Uni<SegmentStoreStats> stats(long nowMs) {
        return uni(() -> {
            long[] segmentsAndBytes = {0, 0};
            return listing(prefix + "seg/sha256/", null, o -> {
                        segmentsAndBytes[0]++;
                        segmentsAndBytes[1] += o.size() == null ? 0 : o.size();
                        return DONE;
                    })
                    .thenApply(v -> new SegmentStoreStats("s3", segmentsAndBytes[0], segmentsAndBytes[1], -1, -1));
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

    private CompletableFuture<Versioned> readRecord(String segmentId) {
        return getBytes(recordKey(segmentId)).thenApply(got -> got == null ? null : versioned(got));
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

    private CompletableFuture<Boolean> writeRecord(
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
        return conditionalPut(recordKey(segmentId), write(n), etag);
    }

    /** PUT with {@code If-Match: etag} (or {@code If-None-Match: *} when null); {@code false} on 412/409. */
    private CompletableFuture<Boolean> conditionalPut(String key, byte[] body, String etag) {
        PutObjectRequest.Builder req =
                PutObjectRequest.builder().bucket(bucket).key(key).contentType("application/json");
        req = etag == null ? req.ifNoneMatch("*") : req.ifMatch(etag);
        return s3.putObject(req.build(), AsyncRequestBody.fromBytes(body)).handle((r, failure) -> {
            if (failure == null) {
                return true;
            }
            Throwable e = unwrap(failure);
            if (e instanceof SdkClientException || e instanceof UncheckedIOException) {
                // Outcome unknown (some servers answer 412 before reading the body and drop the connection):
                // the caller re-reads and merges again, which is idempotent whether or not this write landed.
                return false;
            }
            // 412 Precondition Failed; 409 ConditionalRequestConflict when racing another conditional write
            if (e instanceof S3Exception s && (s.statusCode() == 412 || s.statusCode() == 409)) {
                return false;
            }
            throw e instanceof RuntimeException re ? re : new CompletionException(e);
        });
    }

    /** The older shape: the record in the bytes object's user metadata. */
    private CompletableFuture<StoredSegment> readLegacy(String segmentId) {
        return head(objectKey(segmentId)).thenApply(head -> {
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

    // ------------------------------------------------------------------------------------------------
    // S3 helpers
    // ------------------------------------------------------------------------------------------------

    private CompletableFuture<ResponseBytes<GetObjectResponse>> getBytes(String key) {
        return orNull(s3.getObject(r -> r.bucket(bucket).key(key), AsyncResponseTransformer.toBytes()));
    }

    private CompletableFuture<HeadObjectResponse> head(String key) {
        return orNull(s3.headObject(r -> r.bucket(bucket).key(key)));
    }

    private CompletableFuture<Void> delete(String key) {
        return s3.deleteObject(r -> r.bucket(bucket).key(key)).thenApply(r -> null);
    }

    /** The call's result, or {@code null} when the object does not exist (404). */
    private static <T> CompletableFuture<T> orNull(CompletableFuture<T> call) {
        return call.handle((result, failure) -> {
            if (failure == null) {
                return result;
            }
            Throwable e = unwrap(failure);
            if (e instanceof NoSuchKeyException || e instanceof S3Exception s && s.statusCode() == 404) {
                return null;
            }
            throw e instanceof RuntimeException re ? re : new CompletionException(e);
        });
    }

    /** The failure a future's {@link CompletionException} (or {@link ExecutionException}) wraps. */
    private static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private CompletableFuture<Boolean> exists(String key) {
        return head(key).thenApply(Objects::nonNull);
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
            return Json.readTree(json);
        } catch (IOException e) {
            throw new IllegalStateException("corrupt segment record object", e);
        }
    }

    private static byte[] write(JsonNode n) {
        try {
            return Json.writeValueAsBytes(n);
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
