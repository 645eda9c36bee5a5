/**
 * File attachments (§5.9): content addresses and the verified-content rule (§5.9.1, §5.9.3), the durable
 * partition-scoped blob store contract (§5.9.2), and {@link dev.syncular.server.blobs.BlobService} — upload
 * and upload grants (§5.9.3), the row-derived download authorization over the reference index (§5.9.4,
 * §5.9.5) and the orphan sweep (§5.9.2). The push-time existence check (§5.9.6) is the engine's. Errors
 * are §10 catalogue errors. Store implementations are the subpackages {@code postgres} and {@code s3}.
 *
 * <p>May depend on {@code wire}, {@code schema}, the error catalogue and {@code storage}; it sits below
 * {@code sync} and must not depend on it or on the Quarkus edge.
 */
package dev.syncular.server.blobs;
