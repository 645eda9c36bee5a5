/**
 * What the S3 stores ({@code segments.s3}, {@code blobs.s3}) share: {@link dev.syncular.server.s3.S3Outage}, which
 * failures of an S3 call mean the object store is unavailable — timeouts, lost connections, S3's own 5xx and
 * throttling — answered as the storage's transient refusal ({@code sync.storage.busy}, reason
 * {@code storage_unavailable}), which both bindings answer 429 {@code sync.rate_limited} with {@code Retry-After}
 * (§10.2 "host adapter errors"; the blob routes of §5.9 and the segments of a sync round, §5.1), and
 * {@link dev.syncular.server.s3.S3Call}, one call of the asynchronous client as a {@code Uni} with its failure
 * unwrapped and classified so.
 *
 * <p>May depend on {@code storage} ({@code StorageException}), the AWS SDK and Mutiny; never on the stores, {@code sync} or
 * the Quarkus edge.
 *
 * <p>Configuration (issue 46: each feature maps its own {@code syncular.*} group): {@code S3Config} ({@code syncular.s3.*}): the bucket, its key prefix and the §5.4 presign lifetime (at most 15 minutes, a constraint), with the cross-field check {@code problems} (a store set to {@code s3} needs the bucket).
 */
package dev.syncular.server.s3;
