package dev.syncular.server.segments.s3;

import java.io.UncheckedIOException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
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

/**
 * The object calls of the {@link S3SegmentStore} on one bucket, each a {@link CompletableFuture} of the
 * asynchronous client: GET, HEAD, PUT (plain and conditional), DELETE and the LIST walk. A missing object reads
 * as {@code null}; a lost conditional write as {@code false}.
 */
final class S3Objects {
    static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private final S3AsyncClient s3;
    private final String bucket;

    S3Objects(S3AsyncClient s3, String bucket) {
        this.s3 = s3;
        this.bucket = bucket;
    }

    /** HEAD of the bucket: fails when it is missing or the credentials are refused. */
    CompletableFuture<Void> headBucket() {
        return s3.headBucket(r -> r.bucket(bucket)).thenApply(r -> null);
    }

    /** PUT of a segment's bytes object ({@code application/octet-stream}, its length declared). */
    CompletableFuture<Void> putBytes(String key, long length, AsyncRequestBody body) {
        return s3.putObject(
                        PutObjectRequest.builder()
                                .bucket(bucket)
                                .key(key)
                                .contentType("application/octet-stream")
                                .contentLength(length)
                                .build(),
                        body)
                .thenApply(r -> null);
    }

    /** Unconditional PUT of a JSON object. */
    CompletableFuture<Void> putJson(String key, byte[] body) {
        return s3.putObject(
                        PutObjectRequest.builder()
                                .bucket(bucket)
                                .key(key)
                                .contentType("application/json")
                                .build(),
                        AsyncRequestBody.fromBytes(body))
                .thenApply(r -> null);
    }

    /** PUT with {@code If-Match: etag} (or {@code If-None-Match: *} when null); {@code false} on 412/409. */
    CompletableFuture<Boolean> conditionalPut(String key, byte[] body, String etag) {
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

    CompletableFuture<ResponseBytes<GetObjectResponse>> getBytes(String key) {
        return orNull(s3.getObject(r -> r.bucket(bucket).key(key), AsyncResponseTransformer.toBytes()));
    }

    CompletableFuture<HeadObjectResponse> head(String key) {
        return orNull(s3.headObject(r -> r.bucket(bucket).key(key)));
    }

    CompletableFuture<Void> delete(String key) {
        return s3.deleteObject(r -> r.bucket(bucket).key(key)).thenApply(r -> null);
    }

    CompletableFuture<Boolean> exists(String key) {
        return head(key).thenApply(Objects::nonNull);
    }

    /**
     * Every object under {@code keyPrefix}, page by page, {@code each} one after the other (a LIST: GC and
     * statistics paths only).
     */
    CompletableFuture<Void> listing(String keyPrefix, String token, Function<S3Object, CompletableFuture<Void>> each) {
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
}
