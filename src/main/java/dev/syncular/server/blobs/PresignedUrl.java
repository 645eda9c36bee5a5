package dev.syncular.server.blobs;

/**
 * A provider-presigned URL (§5.4, §5.9.3, §5.9.5): the entire grant — fetched with no host authentication —
 * valid strictly before {@code expiresAtMs} (never later than the provider's own expiry).
 */
public record PresignedUrl(String url, long expiresAtMs) {}
