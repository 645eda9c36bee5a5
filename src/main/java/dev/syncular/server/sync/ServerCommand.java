package dev.syncular.server.sync;

import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.wire.PushOperation;
import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Optional;

/**
 * A server-authoritative write (REMOTE.md §3): run inside the push transaction, after the partition write lock
 * and the serialized idempotency recheck, it reads rows through {@link Rows} and returns the commit's full-row
 * upserts and deletes, which then meet everything an ordinary commit meets (§3.4 scope authorization, the
 * §6.7/§6.8 validators, §6.11 references, the commit log, the idempotency record, realtime, §6.9 reactions).
 * A retry of an applied command is answered from its idempotency record without running it again.
 */
@FunctionalInterface
public interface ServerCommand {
    /** No command: an ordinary round. */
    ServerCommand NONE = rows -> Uni.createFrom().failure(new IllegalStateException("not a command round"));

    /** The commit's operations; none fails the round ({@code operation.invalid_request} at the binding). */
    Uni<List<PushOperation>> run(Rows rows);

    /** The rows a command may read: inside its push transaction, only rows the actor's resolved scopes grant. */
    interface Rows {
        /** The row as stored (current schema), or empty when absent or outside the actor's scopes. */
        Uni<Optional<StoredRow>> getRow(String table, String rowId);
    }

    /** A command that returned no operation. */
    final class NoMutations extends RuntimeException {
        public NoMutations() {
            super("the command returned no mutations", null, false, false);
        }
    }
}
