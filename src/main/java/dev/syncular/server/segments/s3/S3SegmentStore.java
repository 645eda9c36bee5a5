package dev.syncular.server.segments.s3;

import dev.syncular.server.s3.S3Call;
import dev.syncular.server.s3.S3Outage;
import dev.syncular.server.segments.SegmentCollisionException;
import dev.syncular.server.segments.SegmentPublication;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentStoreStats;
import dev.syncular.server.segments.SegmentUrls;
import dev.syncular.server.segments.StoredSegment;
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
import java.util.HexFormat;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;

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
 * for the deletion to finish (or takes over a mark older than {@link PublicationRecords#STALE_DELETION_MS}) and then recreates the
 * entry, bytes included — no publication is lost. A bucket lifecycle rule is garbage collection only and must
 * expire {@code seg/}, {@code rec/} and {@code find/} objects well after the segment TTL (docs/SEGMENTS.md).
 *
 * <p><b>Threading.</b> Every call goes through the asynchronous client ({@link S3AsyncClient} on the Netty HTTP
 * client, issue 44 hole 5): no thread is held while S3 is slow, unreachable or retrying (the SDK schedules its
 * retries instead of sleeping), and the steps of an operation are composed {@link CompletableFuture}s that
 * continue on the client's future-completion executor (in the application, Quarkus's worker pool: never an
 * event loop). Publishers and sweeps of one entry in this process take turns without holding a thread (a chain
 * of futures per lock stripe), and a lost conditional write is retried after a back-off on a timer.
 *
 * <p>The parts: {@link SegmentObjectKeys} (the object layout), {@link S3Objects} (the object calls),
 * {@link PublicationRecords} (the record objects), {@link SegmentUpload} (the upload path), {@link EntryTurns}
 * (turn-taking per entry), {@link ExpirySweep} (the expiry sweep and statistics) and
 * {@link PresignedSegmentUrls} (§5.4 presigning).
 */
public final class S3SegmentStore implements SegmentStore {
    private final S3Objects objects;
    private final String bucket;
    private final SegmentObjectKeys keys;
    private final PresignedSegmentUrls presigned;
    private final PublicationRecords records;
    private final EntryTurns turns;
    private final ExpirySweep sweep;

    /** The upload path (package-private: its test seam loses a conditional-write race on purpose). */
    final SegmentUpload upload;

    /**
     * @param s3        the asynchronous client (the S3 extension's, on the Netty HTTP client)
     * @param presigner for {@link #presignedUrls}; may be null when URLs are not wanted
     * @param keyPrefix namespace inside the bucket, e.g. {@code syncular/} (may be empty)
     */
    public S3SegmentStore(S3AsyncClient s3, S3Presigner presigner, String bucket, String keyPrefix) {
        this.objects = new S3Objects(Objects.requireNonNull(s3, "s3"), Objects.requireNonNull(bucket, "bucket"));
        this.bucket = bucket;
        this.keys = new SegmentObjectKeys(keyPrefix);
        this.presigned = new PresignedSegmentUrls(presigner, bucket, keys);
        this.records = new PublicationRecords(objects, keys);
        this.turns = new EntryTurns();
        this.upload = new SegmentUpload(objects, keys, records);
        this.sweep = new ExpirySweep(objects, keys, records, turns);
    }

    public String bucket() {
        return bucket;
    }

    /** Fails when the bucket is missing or the credentials are refused (start-up awaits it). */
    public Uni<Void> checkBucket() {
        return uni(objects::headBucket);
    }

    /** {@code {keyPrefix}seg/sha256/{hex}}: the object key embeds the segment id (§5.4 equivalence rule). */
    public String objectKey(String segmentId) {
        return keys.objectKey(segmentId);
    }

    String findKey(ReuseKey k) {
        return keys.findKey(k);
    }

    /**
     * §5.4 delegated presign: a provider presigned GET of the segment object, valid for {@code ttl} (at most
     * 15 minutes). The presigner signs with the wall clock; the expiry reported is the one it signed.
     */
    public SegmentUrls presignedUrls(Duration ttl) {
        return presigned.urls(ttl);
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
        return turns.inTurn(segmentId, () -> upload.publishEntry(segmentId, length, publication, body));
    }

    // ------------------------------------------------------------------------------------------------
    // reads
    // ------------------------------------------------------------------------------------------------

    @Override
    public Uni<StoredSegment> describe(String segmentId) {
        return uni(() -> {
            checkId(segmentId);
            return records.readRecord(segmentId).thenCompose(rec -> {
                if (rec != null) {
                    return CompletableFuture.completedFuture(
                            rec.deleting() ? null : new StoredSegment(segmentId, rec.byteLength(), rec.publications()));
                }
                return records.readLegacy(segmentId);
            });
        });
    }

    @Override
    public Uni<byte[]> read(String segmentId) {
        return uni(() -> {
            checkId(segmentId);
            return objects.getBytes(keys.objectKey(segmentId)).thenApply(got -> got == null ? null : got.asByteArray());
        });
    }

    @Override
    public Uni<Match> find(ReuseKey key, long nowMs) {
        return uni(() -> objects.getBytes(keys.findKey(key)).thenCompose(pointer -> {
            if (pointer == null) {
                return CompletableFuture.completedFuture(null);
            }
            String segmentId = PublicationRecords.parse(pointer.asByteArray())
                    .path("segmentId")
                    .asText("");
            if (!SegmentObjectKeys.SEGMENT_ID.matcher(segmentId).matches()) {
                return CompletableFuture.completedFuture(null);
            }
            return records.readRecord(segmentId).thenCompose(rec -> {
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
                return objects.exists(keys.objectKey(segmentId))
                        .thenApply(e -> e ? new Match(segmentId, rec.byteLength(), chosen) : null);
            });
        }));
    }

    // ------------------------------------------------------------------------------------------------
    // deleteExpired and stats (the GC and statistics paths: the only LISTs)
    // ------------------------------------------------------------------------------------------------

    @Override
    public Uni<Integer> deleteExpired(long nowMs) {
        return uni(() -> sweep.deleteExpired(nowMs));
    }

    @Override
    public Uni<SegmentStoreStats> stats(long nowMs) {
        return uni(sweep::stats);
    }

    private static void checkId(String segmentId) {
        if (segmentId == null
                || !SegmentObjectKeys.SEGMENT_ID.matcher(segmentId).matches()) {
            throw new IllegalArgumentException("segment id must be sha256:<64 lowercase hex>");
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
