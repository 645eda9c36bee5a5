/**
 * Bootstrap segments (§5): the content-addressed segment store contract with its publications and
 * collision rule (§5.1), the SQLite image builder (§5.3), and segment URL issuance for {@code SEGMENT_REF}
 * descriptors — the native HMAC signed-URL scheme, whose tokens are checked again when a segment is
 * downloaded directly (§5.4, §5.5). The SSG2 rows-segment codec itself (§5.2) is in {@code wire}; the
 * store implementations are the subpackages {@code memory}, {@code postgres} and {@code s3}.
 *
 * <p>May depend on {@code wire}, {@code schema} and {@code storage} (rows to image); never on
 * {@code sync}, {@code blobs} or the Quarkus edge.
 *
 * <p>Configuration (issue 46: each feature maps its own {@code syncular.*} group): {@code SegmentsConfig} ({@code syncular.segments.*}) and {@code SignedUrlsConfig} ({@code syncular.signed-urls.*}, §5.4, whose cross-field check {@code problems} holds the 15-minute lifetime and the key length while native URLs are served).
 */
package dev.syncular.server.segments;
