/**
 * Blob storage for file attachments (§5.9): content addresses and the verified-content rule (§5.9.1,
 * §5.9.3), the durable, partition-scoped {@link dev.syncular.server.blobs.BlobStore} contract (§5.9.2) with
 * its presigned URLs, and the page type the orphan sweep walks. Bytes move through stores as streams — an
 * upload read from its {@link dev.syncular.server.blobs.BlobContent} (a spooled file) in chunks, a download
 * emitted chunk by chunk — never whole in memory. Store implementations are the subpackages
 * {@code postgres} and {@code s3}. The protocol side of blobs (upload and upload grants, row-derived download
 * authorization, the orphan sweep, the push-time existence check of §5.9.6) is the engine's:
 * {@code sync.BlobService} and {@code sync.BlobPresence}.
 *
 * <p>May depend on {@code wire}, {@code schema}, {@code errors} and {@code storage}; it sits below
 * {@code sync} and must not depend on it or on the Quarkus edge.
 *
 * <p>Configuration (issue 46: each feature maps its own {@code syncular.*} group): {@code BlobsConfig} ({@code syncular.blobs.*}, §5.9).
 */
package dev.syncular.server.blobs;
