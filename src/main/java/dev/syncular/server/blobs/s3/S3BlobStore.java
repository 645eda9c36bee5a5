package dev.syncular.server.blobs.s3;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.blobs.BlobContent;
import dev.syncular.server.blobs.BlobIds;
import dev.syncular.server.blobs.BlobInfo;
import dev.syncular.server.blobs.BlobKey;
import dev.syncular.server.blobs.BlobPage;
import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.blobs.PresignedUrl;
import dev.syncular.server.s3.S3Call;
import dev.syncular.server.s3.S3Outage;
import dev.syncular.server.wire.Json;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;
import mutiny.zero.flow.adapters.AdaptersToFlow;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;
import software.amazon.awssdk.services.s3.presigner.model.PresignedGetObjectRequest;
import software.amazon.awssdk.services.s3.presigner.model.PresignedPutObjectRequest;

/**
 * {@link BlobStore} on an S3-compatible object store (AWS S3, Cloudflare R2, MinIO).
 *
 * <h2>Layout</h2>
 *
 * One object per blob at {@code {keyPrefix}blob/{partition}/sha256/{hex}}: content-addressed and
 * partition-scoped. The partition segment is percent-encoded outside {@code [A-Za-z0-9._~-]} (so a partition
 * id holding {@code /} cannot alias another key); ordinary ids appear verbatim. The body is the blob bytes
 * verbatim with {@code Content-Type: application/octet-stream} (the advisory media type is never served as
 * the object's type). Upload info rides as user metadata {@code x-amz-meta-syncular-blob} = base64url (no
 * padding) of {@code {"byteLength":n,"mediaType":"…"?,"createdAtMs":t}}, so {@link #describe} is one HEAD.
 * Objects written through a presigned PUT carry no such metadata; their info comes from the object itself
 * ({@code Content-Length}, {@code Last-Modified}).
 *
 * <h2>Durability</h2>
 *
 * No expiry is written and none may be configured: never put a lifecycle-expiration rule on the
 * {@code blob/} prefix (it would delete attachments live rows reference). Only the orphan sweep deletes.
 * An upload checks existence first and then writes with {@code If-None-Match: *}, so a re-upload keeps the
 * first upload's {@code createdAtMs}.
 *
 * <h2>Threading</h2>
 *
 * Every call goes through the asynchronous client ({@link S3AsyncClient} on the Netty HTTP client, issue 44 hole
 * 5): no thread is held while S3 is slow, unreachable or retrying. A result is emitted back on the caller's Vert.x
 * context (when it has one), otherwise on the client's future-completion executor; a download's body arrives as
 * the subscriber asks for it (the client's publisher, with back-pressure), an upload's body is sent from the
 * array or read asynchronously from the spooled file.
 */
public final class S3BlobStore implements BlobStore {
    /** §5.4: provider-presigned URLs live at most this long. */
    public static final Duration MAX_PRESIGN_TTL = Duration.ofMinutes(15);

    static final String META_KEY = "syncular-blob";

    private final S3AsyncClient s3;
    private final S3Presigner presigner;
    private final String bucket;
    private final String keyPrefix;
    private final Duration presignTtl;

    /**
     * @param presigner  mints presigned GET/PUT URLs; {@code null} disables them (downloads stream through the
     *                   server, upload grants answer "no grant")
     * @param presignTtl lifetime of presigned URLs, 1 s to 15 min
     */
    public S3BlobStore(S3AsyncClient s3, S3Presigner presigner, String bucket, String keyPrefix, Duration presignTtl) {
        this.s3 = Objects.requireNonNull(s3, "s3");
        this.presigner = presigner;
        if (bucket == null || bucket.isBlank()) {
            throw new IllegalArgumentException("bucket is required");
        }
        this.bucket = bucket.trim();
        this.keyPrefix = keyPrefix == null ? "" : keyPrefix;
        Objects.requireNonNull(presignTtl, "presignTtl");
        if (presignTtl.compareTo(Duration.ofSeconds(1)) < 0 || presignTtl.compareTo(MAX_PRESIGN_TTL) > 0) {
            throw new IllegalArgumentException("presign TTL must be between 1 second and 15 minutes");
        }
        this.presignTtl = presignTtl;
    }

    public String bucket() {
        return bucket;
    }

    // ------------------------------------------------------------------------------------------- keys

    private String listPrefix() {
        return keyPrefix + "blob/";
    }

    /** The object key of a blob. */
    public String key(String partition, String blobId) {
        if (!BlobIds.isValid(blobId)) {
            throw new IllegalArgumentException("malformed blobId");
        }
        return listPrefix() + encodePartition(partition) + "/sha256/" + BlobIds.hex(blobId);
    }

    /** The blob a key names, or {@code null} for a key outside the layout. */
    BlobKey parseKey(String key) {
        String p = listPrefix();
        if (!key.startsWith(p)) {
            return null;
        }
        String rest = key.substring(p.length());
        int slash = rest.indexOf('/');
        if (slash < 0 || !rest.startsWith("/sha256/", slash)) {
            return null;
        }
        String blobId = BlobIds.PREFIX + rest.substring(slash + "/sha256/".length());
        String partition = decodePartition(rest.substring(0, slash));
        return partition == null || !BlobIds.isValid(blobId) ? null : new BlobKey(partition, blobId);
    }

    static String encodePartition(String partition) {
        StringBuilder sb = new StringBuilder();
        for (byte b : partition.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9')
                    || c == '.'
                    || c == '_'
                    || c == '~'
                    || c == '-') {
                sb.append((char) c);
            } else {
                sb.append('%')
                        .append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
            }
        }
        return sb.toString();
    }

    static String decodePartition(String encoded) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < encoded.length(); i++) {
            char c = encoded.charAt(i);
            if (c == '%') {
                if (i + 2 >= encoded.length()) {
                    return null;
                }
                int hi = Character.digit(encoded.charAt(i + 1), 16);
                int lo = Character.digit(encoded.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    return null;
                }
                out.write((hi << 4) | lo);
                i += 2;
            } else {
                out.write(c);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    // ------------------------------------------------------------------------------------------- metadata

    static String encodeMeta(long byteLength, String mediaType, long createdAtMs) {
        ObjectNode n = Json.object();
        n.put("byteLength", byteLength);
        if (mediaType != null) {
            n.put("mediaType", mediaType);
        }
        n.put("createdAtMs", createdAtMs);
        return Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString(n.toString().getBytes(StandardCharsets.UTF_8));
    }

    private BlobInfo info(String partition, String blobId, HeadObjectResponse head) {
        long byteLength = head.contentLength() == null ? 0 : head.contentLength();
        String mediaType = null;
        long createdAtMs = head.lastModified() == null ? 0 : head.lastModified().toEpochMilli();
        String meta = head.metadata() == null ? null : head.metadata().get(META_KEY);
        if (meta != null) {
            try {
                JsonNode n = Json.readTree(Base64.getUrlDecoder().decode(meta));
                if (n.path("byteLength").canConvertToExactIntegral()) {
                    byteLength = n.get("byteLength").asLong();
                }
                if (n.path("mediaType").isTextual()) {
                    mediaType = n.get("mediaType").asText();
                }
                if (n.path("createdAtMs").canConvertToExactIntegral()) {
                    createdAtMs = n.get("createdAtMs").asLong();
                }
            } catch (Exception e) {
                // unreadable metadata: the object's own facts stand
            }
        }
        return new BlobInfo(partition, blobId, byteLength, mediaType, createdAtMs);
    }

    // ------------------------------------------------------------------------------------------- calls

    /**
     * The asynchronous call as a {@link Uni}, started anew for each subscription; its result returns to the
     * subscriber's Vert.x context (when it has one). A failure is the SDK's own exception, not the
     * {@link CompletionException} wrapping it inside the composition — except an outage of S3 (a timeout, a lost
     * connection, a 5xx), which is the storage's transient refusal ({@link S3Outage}: 429
     * {@code storage_unavailable} on the blob routes, §5.9, §10.2).
     */
    private static <T> Uni<T> call(Supplier<CompletableFuture<T>> call) {
        return Uni.createFrom().deferred(() -> {
            Context context = Vertx.currentContext();
            Uni<T> called = S3Call.of(call);
            return context == null ? called : called.emitOn(task -> context.runOnContext(v -> task.run()));
        });
    }

    private static boolean isStatus(Throwable e, int status) {
        return unwrap(e) instanceof S3Exception s && s.statusCode() == status;
    }

    private static Throwable unwrap(Throwable t) {
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static RuntimeException rethrow(Throwable t) {
        Throwable e = unwrap(t);
        return e instanceof RuntimeException re ? re : new CompletionException(e);
    }

    private CompletableFuture<BlobInfo> head(String partition, String blobId) {
        return s3.headObject(b -> b.bucket(bucket).key(key(partition, blobId))).handle((head, failure) -> {
            if (failure == null) {
                return info(partition, blobId, head);
            }
            if (isStatus(failure, 404)) {
                return null;
            }
            throw rethrow(failure);
        });
    }

    @Override
    public Uni<BlobInfo> put(String partition, BlobContent content, String mediaType, long nowMs) {
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(content, "content");
        return call(() -> head(partition, content.blobId()).thenCompose(existing -> {
            if (existing != null) {
                return CompletableFuture.completedFuture(existing);
            }
            long length = content.byteLength();
            PutObjectRequest request = PutObjectRequest.builder()
                    .bucket(bucket)
                    .key(key(partition, content.blobId()))
                    .contentType("application/octet-stream")
                    .contentLength(length)
                    .metadata(Map.of(META_KEY, encodeMeta(length, mediaType, nowMs)))
                    .ifNoneMatch("*")
                    .build();
            // from the array, or read asynchronously from the spooled upload's file: never whole in memory
            AsyncRequestBody body = content.source(AsyncRequestBody::fromBytes, AsyncRequestBody::fromFile);
            return s3.putObject(request, body)
                    .thenApply(r -> new BlobInfo(partition, content.blobId(), length, mediaType, nowMs))
                    .exceptionallyCompose(failure -> {
                        // 412: a concurrent upload of the same bytes won (409 on some stores); its info stands
                        if (isStatus(failure, 412) || isStatus(failure, 409)) {
                            return head(partition, content.blobId()).thenApply(winner -> {
                                if (winner == null) {
                                    throw rethrow(failure);
                                }
                                return winner;
                            });
                        }
                        return CompletableFuture.failedFuture(unwrap(failure));
                    });
        }));
    }

    @Override
    public Uni<BlobInfo> describe(String partition, String blobId) {
        return call(() -> head(partition, blobId));
    }

    /**
     * One GET whose body the client publishes as it arrives, with back-pressure: chunks of at most
     * {@link #READ_CHUNK_BYTES} are read as the subscriber asks, and the request is aborted when the subscriber
     * goes away early.
     */
    @Override
    public Multi<byte[]> read(String partition, String blobId) {
        return call(() -> s3.getObject(
                                b -> b.bucket(bucket).key(key(partition, blobId)),
                                AsyncResponseTransformer.<GetObjectResponse>toPublisher())
                        .handle((body, failure) -> {
                            if (failure == null) {
                                return body;
                            }
                            if (isStatus(failure, 404)) {
                                throw new NoSuchElementException("blob not stored");
                            }
                            throw rethrow(failure);
                        }))
                .onItem()
                .transformToMulti(body -> {
                    Context context = Vertx.currentContext();
                    Multi<byte[]> chunks = Multi.createFrom()
                            .publisher(AdaptersToFlow.publisher(body))
                            .onItem()
                            .transformToIterable(S3BlobStore::chunks);
                    return context == null ? chunks : chunks.emitOn(task -> context.runOnContext(v -> task.run()));
                });
    }

    /** A buffer of the body as arrays of at most {@link #READ_CHUNK_BYTES} bytes (the client's buffers are smaller). */
    private static List<byte[]> chunks(ByteBuffer buffer) {
        List<byte[]> out = new ArrayList<>(1);
        while (buffer.hasRemaining()) {
            byte[] chunk = new byte[Math.min(buffer.remaining(), READ_CHUNK_BYTES)];
            buffer.get(chunk);
            out.add(chunk);
        }
        return out;
    }

    @Override
    public Uni<Boolean> delete(String partition, String blobId) {
        return call(() -> s3.deleteObject(b -> b.bucket(bucket).key(key(partition, blobId)))
                .thenApply(r -> Boolean.TRUE));
    }

    /**
     * The store's only LIST (an admin/GC path): one {@code ListObjectsV2} page over {@code {keyPrefix}blob/};
     * objects last modified before the cutoff are confirmed by a HEAD for their recorded upload time. The
     * cursor is the last key scanned.
     */
    @Override
    public Uni<BlobPage> listCreatedBefore(long cutoffMs, String after, int limit) {
        if (limit <= 0) {
            throw new IllegalArgumentException("limit must be positive");
        }
        return call(() -> {
            ListObjectsV2Request.Builder req = ListObjectsV2Request.builder()
                    .bucket(bucket)
                    .prefix(listPrefix())
                    .maxKeys(Math.min(limit, 1000));
            if (after != null) {
                req.startAfter(after);
            }
            return s3.listObjectsV2(req.build()).thenCompose(page -> {
                List<BlobKey> matching = new ArrayList<>();
                String last = null;
                CompletableFuture<Void> heads = CompletableFuture.completedFuture(null);
                for (S3Object o : page.contents()) {
                    last = o.key();
                    BlobKey k = parseKey(o.key());
                    if (k == null
                            || o.lastModified() == null
                            || o.lastModified().toEpochMilli() >= cutoffMs) {
                        continue;
                    }
                    // one HEAD after the other, the page's order kept
                    heads = heads.thenCompose(v -> head(k.partition(), k.blobId()))
                            .thenAccept(info -> {
                                if (info != null && info.createdAtMs() < cutoffMs) {
                                    matching.add(k);
                                }
                            });
                }
                boolean more = Boolean.TRUE.equals(page.isTruncated()) && last != null;
                String next = more ? last : null;
                return heads.thenApply(v -> new BlobPage(matching, next));
            });
        });
    }

    // ------------------------------------------------------------------------------------------- presign

    @Override
    public boolean canPresign() {
        return presigner != null;
    }

    /**
     * A presigned URL, signed on the worker pool (signing may have to refresh credentials, e.g. a workload
     * identity's token exchange: a blocking call) and returned on the caller's Vert.x context.
     */
    private static <T> Uni<T> signed(Supplier<T> sign) {
        return Uni.createFrom().deferred(() -> {
            Context context = Vertx.currentContext();
            Uni<T> onWorker = Uni.createFrom().item(sign).runSubscriptionOn(Infrastructure.getDefaultWorkerPool());
            return context == null ? onWorker : onWorker.emitOn(task -> context.runOnContext(v -> task.run()));
        });
    }

    /** SigV4 dates have whole seconds: the provider's expiry is the signing second plus the TTL. */
    private static long expiresAtMs(Instant expiration) {
        return expiration.getEpochSecond() * 1000L;
    }

    @Override
    public Uni<PresignedUrl> presignGet(String partition, String blobId, long nowMs) {
        if (presigner == null) {
            return BlobStore.super.presignGet(partition, blobId, nowMs);
        }
        String key = key(partition, blobId);
        return signed(() -> {
            PresignedGetObjectRequest p = presigner.presignGetObject(r -> r.signatureDuration(presignTtl)
                    .getObjectRequest(g -> g.bucket(bucket).key(key)));
            return new PresignedUrl(p.url().toString(), expiresAtMs(p.expiration()));
        });
    }

    /** The signed headers bind {@code Content-Length}: the object store refuses a body of any other size. */
    @Override
    public Uni<PresignedUrl> presignPut(String partition, String blobId, long byteLength, long nowMs) {
        if (presigner == null) {
            return BlobStore.super.presignPut(partition, blobId, byteLength, nowMs);
        }
        String key = key(partition, blobId);
        return signed(() -> {
            PresignedPutObjectRequest p = presigner.presignPutObject(r -> r.signatureDuration(presignTtl)
                    .putObjectRequest(o -> o.bucket(bucket).key(key).contentLength(byteLength)));
            return new PresignedUrl(p.url().toString(), expiresAtMs(p.expiration()));
        });
    }
}
