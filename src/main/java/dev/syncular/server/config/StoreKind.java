package dev.syncular.server.config;

/** Which store backs bytes: {@code embedded} (PostgreSQL, the zero-setup default) or {@code s3}. */
public enum StoreKind {
    EMBEDDED,
    S3
}
