/**
 * The {@link dev.syncular.server.blobs.BlobStore} on an S3-compatible object store: one verbatim object
 * per (partition, content address) (§5.9.2) and provider-presigned upload and download URLs (§5.9.3,
 * §5.9.5). Every S3 call goes through the asynchronous client ({@code S3AsyncClient} on the Netty HTTP client):
 * no thread is held while S3 is slow, unreachable or retrying; downloads stream the client's publisher with
 * back-pressure.
 *
 * <p>May depend on {@code blobs}, plus the AWS SDK; never on {@code storage}, {@code sync} or the
 * Quarkus edge.
 */
package dev.syncular.server.blobs.s3;
