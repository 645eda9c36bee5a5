/**
 * The {@link dev.syncular.server.blobs.BlobStore} on an S3-compatible object store: one verbatim object
 * per (partition, content address) (§5.9.2) and provider-presigned upload and download URLs (§5.9.3,
 * §5.9.5). Every S3 call goes through the asynchronous client ({@code S3AsyncClient} on the Netty HTTP client):
 * no thread is held while S3 is slow, unreachable or retrying; downloads stream the client's publisher with
 * back-pressure. An outage of S3 (a timeout, a lost connection, a 5xx) fails a call as the storage's transient
 * refusal ({@code s3.S3Outage}: 429 {@code storage_unavailable} on the blob routes, §5.9, §10.2).
 *
 * <p>May depend on {@code blobs} and {@code s3}, plus the AWS SDK; never on {@code storage} itself, {@code sync} or
 * the Quarkus edge.
 */
package dev.syncular.server.blobs.s3;
