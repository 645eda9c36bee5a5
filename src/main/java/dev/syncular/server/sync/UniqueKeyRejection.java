package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.sync.PushOperations.Rejection;
import dev.syncular.server.sync.PushOperations.Staged;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.RecoveryDetails;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;

/**
 * A declared unique index refusing a commit's row (schema IR {@code indexes} with {@code unique: true}): the
 * storage's {@link StorageException#UNIQUE_VIOLATION} becomes the commit's terminating {@code error} record,
 * {@code sync.constraint_violation} (§10.2: "Server-side data constraint (unique/FK/not-null) rejected the write"),
 * not retryable, attributed to the operation that staged the refused row (the last one to write it), with a fixed
 * message and §6.3.1 details: {@code reason} ({@code unique_violation}, or {@code unique_key_too_large} for a key
 * larger than the index holds), {@code fieldPaths} (the index's columns) and {@code references.index} /
 * {@code references.table}. The whole commit rolls back (§6.4) and the rejection is persisted as its idempotency
 * outcome (§2.3), so a replay answers it unchanged.
 *
 * <p>No competing row is named: the row holding the key may lie outside the pusher's scopes (§3.4), and §7.2 has
 * the client take the winner's evidence ({@code uniqueConflicts}: competing row id, row and version) from its own
 * authorized server rows, which the winning commit reaches through pulls like any other.
 */
final class UniqueKeyRejection {
    static final String MESSAGE = "a declared unique index refused the write";

    private UniqueKeyRejection() {}

    /** {@code t} (or what it wraps) as a unique index's refusal, or {@code null}. */
    static StorageException violation(Throwable t) {
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t instanceof StorageException se && StorageException.UNIQUE_VIOLATION.equals(se.code()) ? se : null;
    }

    /** The terminating record of {@code v}, attributed through the commit's {@code staged} rows (may be empty). */
    static Rejection of(StorageException v, Map<String, Staged> staged) {
        Map<String, Object> d = v.details();
        String table = String.valueOf(d.get("table"));
        Staged s = staged.get(table + '\u0000' + d.get("rowId"));
        int opIndex = s == null ? 0 : s.opIndex();
        String reason = String.valueOf(d.get("reason"));
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("reason", reason);
        Map<String, String> references = new LinkedHashMap<>();
        if (d.get("index") != null) {
            details.put("fieldPaths", d.get("columns"));
            references.put("index", String.valueOf(d.get("index")));
        }
        references.put("table", table);
        details.put("references", references);
        String json = CanonicalJson.write(details);
        if (!RecoveryDetails.isValid(json)) {
            json = CanonicalJson.write(Map.of("reason", reason));
        }
        return new Rejection(
                new OpResult.Error(
                        opIndex,
                        ErrorCode.CONSTRAINT_VIOLATION.code,
                        MESSAGE,
                        ErrorCode.CONSTRAINT_VIOLATION.retryable),
                json);
    }
}
