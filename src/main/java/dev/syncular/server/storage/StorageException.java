package dev.syncular.server.storage;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A storage failure with a stable code and structured details. The message never names tables or
 * columns (§2.4 "Same-version storage readiness"): those go into {@link #details()}.
 *
 * <p>Codes used by the storage layer:
 *
 * <ul>
 *   <li>{@link #STORED_LAYOUT_MISMATCH} / {@link #PHYSICAL_LAYOUT_MISMATCH} — host readiness failures (§2.4);
 *   <li>{@link #SCHEMA_NOT_READY} — the stored schema version is newer than the running build (§2.4, §10.2);
 *   <li>{@link #UNSUPPORTED_MIGRATION} — a lower stored version whose upgrade is not additive;
 *   <li>{@link #UNKNOWN_PARTITION} — the partition is not in the registry (§2.1);
 *   <li>{@link #LOG_EPOCH_MISMATCH} — a prune whose captured epoch is stale (§4.6);
 *   <li>{@link #DUPLICATE_PUSH_RESULT} — an idempotency key already holds a result (§2.3);
 *   <li>{@link #IDEMPOTENCY_RECORD_UNREADABLE} — the locked idempotency lookup could not read the record (§6.3: the
 *       push answers the retryable {@code sync.idempotency_cache_miss}); the conformance host's fault raises it;
 *   <li>{@link #INVALID_ARGUMENT} — a caller bug (unknown table, wrong arity, missing scopes);
 *   <li>{@link #UNIQUE_VIOLATION} — a row write a declared unique index refused (§10.2
 *       {@code sync.constraint_violation} to the pushing client);
 *   <li>{@link #UNIQUE_INDEX_DUPLICATES} — a start-up that would add a declared unique index to a table whose rows
 *       already collide on its key;
 *   <li>{@link #BUSY} — a transient refusal the same request may retry: the partition's push queue is full, a
 *       lock or statement timeout ended the transaction (rolled back whole), no pooled connection was free
 *       in time, or the database or the object store (S3) is unavailable ({@code storage_unavailable}); {@code details.reason}
 *       says which and {@code details.retryAfterMs} when to try again ({@link #busy}).
 * </ul>
 */
public class StorageException extends RuntimeException {
    public static final String STORED_LAYOUT_MISMATCH = "sync.storage.stored_layout_mismatch";
    public static final String PHYSICAL_LAYOUT_MISMATCH = "sync.storage.physical_layout_mismatch";
    public static final String SCHEMA_NOT_READY = "sync.schema_not_ready";
    public static final String UNSUPPORTED_MIGRATION = "sync.storage.unsupported_migration";
    public static final String UNKNOWN_PARTITION = "sync.storage.unknown_partition";
    public static final String LOG_EPOCH_MISMATCH = "sync.storage.log_epoch_mismatch";
    public static final String DUPLICATE_PUSH_RESULT = "sync.storage.duplicate_push_result";
    /** {@link PushTx#findPushResult} could not read the idempotency record (§6.3 {@code sync.idempotency_cache_miss}). */
    public static final String IDEMPOTENCY_RECORD_UNREADABLE = "sync.storage.idempotency_record_unreadable";

    public static final String MISSING_SCOPES = "sync.missing_scopes";
    public static final String INVALID_ARGUMENT = "sync.storage.invalid_argument";
    /** An append by a writer older than the partition's writer fence (§2.4 "Schema upgrade writer fence"). */
    public static final String WRITER_FENCE_REJECTED = "sync.storage.writer_fence_rejected";

    public static final String CHECKPOINT_NOT_FOUND = "sync.storage.checkpoint_not_found";
    public static final String CHECKPOINT_OWNER_CHANGED = "sync.storage.checkpoint_owner_changed";
    /** An activated checkpoint cannot be abandoned ({@link CheckpointStorage#abandonCheckpoint}). */
    public static final String CHECKPOINT_ACTIVATED = "sync.storage.checkpoint_activated";
    /** A guarded statement failed ({@link PushTx#queryRows}); {@code details.sqlstate} says how. */
    public static final String QUERY_FAILED = "sync.storage.query_failed";
    /**
     * A row write refused by a declared unique index (schema IR {@code indexes} with {@code unique: true}): another
     * row of the same partition holds the key, or the key is larger than the index can hold. {@code details}:
     * {@code table}, {@code rowId} (the row written), {@code reason} ({@code unique_violation} or
     * {@code unique_key_too_large}) and, when the index is one the running schema declares, {@code index} and
     * {@code columns}. The transaction is aborted: the work rolls back (its savepoint, or the whole transaction).
     */
    public static final String UNIQUE_VIOLATION = "sync.storage.unique_violation";
    /**
     * Start-up refused: a declared unique index cannot be created because rows of a partition already share its key.
     * {@code details}: {@code table}, {@code index}, {@code columns}, {@code collisions} (a bounded list of
     * {@code partition}, {@code rowIds} and {@code key}) and {@code more} (whether the list was cut).
     */
    public static final String UNIQUE_INDEX_DUPLICATES = "sync.storage.unique_index_duplicates";
    /** A transient refusal; nothing was written (see the class comment). */
    public static final String BUSY = "sync.storage.busy";
    /** How long a client is told to wait after a {@link #BUSY} refusal. */
    public static final long BUSY_RETRY_AFTER_MS = 1000;

    private final String code;
    private final Map<String, Object> details;

    public StorageException(String code, String message, Map<String, ?> details) {
        this(code, message, details, null);
    }

    public StorageException(String code, String message, Map<String, ?> details, Throwable cause) {
        super(message, cause);
        this.code = code;
        this.details = details == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(details));
    }

    /**
     * A {@link #BUSY} refusal: {@code details.reason} says why (e.g. {@code lock_timeout}, {@code storage_unavailable}),
     * {@code details.retryAfterMs} when to try again ({@link #BUSY_RETRY_AFTER_MS}). The bindings answer it 429
     * {@code sync.rate_limited} with {@code Retry-After} (§10.2 "host adapter errors").
     */
    public static StorageException busy(String reason, Throwable cause) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("reason", reason);
        d.put("retryAfterMs", BUSY_RETRY_AFTER_MS);
        return new StorageException(BUSY, "storage is busy; retry later", d, cause);
    }

    public String code() {
        return code;
    }

    /** Structured details (e.g. {@code table}, {@code column}, {@code reason}, {@code expected}, {@code actual}). */
    public Map<String, Object> details() {
        return details;
    }

    @Override
    public String toString() {
        return "StorageException[" + code + "] " + getMessage() + " " + details;
    }
}
