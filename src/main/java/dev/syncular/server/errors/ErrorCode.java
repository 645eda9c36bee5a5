package dev.syncular.server.errors;

/**
 * The §10.2 error catalogue (wire version 3): code, category, retryability and recommended action are
 * fixed per code; {@code httpStatus} is the status an HTTP-level JSON error answers with (§1.1, §10.1).
 */
public enum ErrorCode {
    AUTH_REQUIRED("sync.auth_required", "auth-required", true, "refreshAuth", 401),
    AUTH_LEASE_REQUIRED("sync.auth_lease_required", "auth-required", true, "refreshAuth", 401),
    AUTH_LEASE_REVOKED("sync.auth_lease_revoked", "auth-required", true, "refreshAuth", 401),
    FORBIDDEN("sync.forbidden", "forbidden", false, "checkPermissions", 403),
    INVALID_REQUEST("sync.invalid_request", "invalid-request", false, "fixRequest", 400),
    INVALID_CLIENT_ID("sync.invalid_client_id", "invalid-request", false, "resetClientId", 400),
    INVALID_SUBSCRIPTION("sync.invalid_subscription", "invalid-request", false, "fixRequest", 400),
    EMPTY_COMMIT("sync.empty_commit", "invalid-request", false, "fixRequest", 400),
    UNKNOWN_TABLE("sync.unknown_table", "schema-mismatch", false, "regenerateClient", 400),
    ROW_MISSING("sync.row_missing", "not-found", false, "forceResync", 404),
    ROW_DELETED("sync.row_deleted", "not-found", false, "fixRequest", 404),
    VERSION_CONFLICT("sync.version_conflict", "conflict", false, "resolveConflict", 409),
    CONSTRAINT_VIOLATION("sync.constraint_violation", "invalid-request", false, "fixRequest", 400),
    REFERENCE_VIOLATION("sync.reference_violation", "invalid-request", false, "fixRequest", 400),
    MISSING_SCOPES("sync.missing_scopes", "internal", false, "inspectServer", 500),
    CRDT_MERGE_FAILED("sync.crdt_merge_failed", "internal", false, "inspectServer", 500),
    IDEMPOTENCY_CACHE_MISS("sync.idempotency_cache_miss", "internal", true, "retryLater", 500),
    INTERNAL_ERROR("sync.internal_error", "internal", true, "retryLater", 500),
    STORAGE_STALE_READ("sync.storage_stale_read", "internal", false, "inspectServer", 500),
    SCHEMA_NOT_READY("sync.schema_not_ready", "internal", true, "retryLater", 503),
    TOO_MANY_OPERATIONS("sync.too_many_operations", "invalid-request", false, "splitBatch", 400),
    NOT_FOUND("sync.not_found", "not-found", false, "forceResync", 404),
    SEGMENT_EXPIRED("sync.segment_expired", "not-found", true, "retryLater", 404),
    CURSOR_EXPIRED("sync.cursor_expired", "reset-required", false, "rebootstrap", 409),
    SCOPE_REVOKED("sync.scope_revoked", "scope-revoked", false, "checkPermissions", 403),
    RATE_LIMITED("sync.rate_limited", "rate-limited", true, "retryLater", 429),
    SCHEMA_MISMATCH("sync.schema_mismatch", "schema-mismatch", false, "regenerateClient", 400),
    CLIENT_SCHEMA_UNSUPPORTED("sync.client_schema_unsupported", "schema-mismatch", false, "upgradeClient", 400),
    WEBSOCKET_CONNECTION_LIMIT("sync.websocket_connection_limit", "rate-limited", true, "retryLater", 429),
    BLOB_NOT_FOUND("blob.not_found", "not-found", false, "fixRequest", 404),
    BLOB_FORBIDDEN("blob.forbidden", "forbidden", false, "checkPermissions", 403),
    BLOB_HASH_MISMATCH("blob.hash_mismatch", "invalid-request", false, "fixRequest", 400),
    BLOB_TOO_LARGE("blob.too_large", "invalid-request", false, "fixRequest", 413);

    public final String code;
    public final String category;
    public final boolean retryable;
    public final String recommendedAction;
    public final int httpStatus;

    ErrorCode(String code, String category, boolean retryable, String recommendedAction, int httpStatus) {
        this.code = code;
        this.category = category;
        this.retryable = retryable;
        this.recommendedAction = recommendedAction;
        this.httpStatus = httpStatus;
    }

    /** The catalogue entry for a wire code, or {@code null}. */
    public static ErrorCode of(String code) {
        for (ErrorCode c : values()) {
            if (c.code.equals(code)) {
                return c;
            }
        }
        return null;
    }
}
