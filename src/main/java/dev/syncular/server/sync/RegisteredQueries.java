package dev.syncular.server.sync;

import dev.syncular.server.storage.QueryRows;
import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Map;

/**
 * The deployment's registered queries (REMOTE.md §2) as the push path runs them for its host callbacks: SPEC §6.7
 * and §6.8 {@code queryAuthoritative}, a generated registered query run on the push transaction's own connection,
 * every relation rewritten to the commit's partition, over the commit's candidate state. The engine does not know
 * the registry; {@code operations} installs it ({@link EngineParts}), {@link #NONE} when none is.
 */
public interface RegisteredQueries {
    /** No registry: every call fails (the §7 {@code operation.unknown} of the operations binding). */
    RegisteredQueries NONE = (operation, params, statements) ->
            Uni.createFrom().failure(new IllegalStateException("no registered queries are installed"));

    /** How the registry runs its rewritten statement inside the push transaction. */
    @FunctionalInterface
    interface Statements {
        /**
         * Runs {@code sql} as {@code PushTx.queryRows} does (its arguments the text array {@code $1}: the
         * commit's partition, then {@code binds}; a failing statement fails the {@code Uni} without aborting the
         * transaction), after laying the commit's staged rows of {@code tables} (the application tables it reads) into the
         * transaction, under a savepoint rolled back afterwards: nothing the read needed persists, and a failing
         * statement leaves the push transaction usable.
         */
        Uni<QueryRows> run(List<String> tables, String sql, List<String> binds);
    }

    /**
     * The rows of the registered query {@code operation} (its operation id {@code sha256:<hex>/<name>} or its bare
     * name) with {@code params} (its declared inputs as plain Java values: {@code String}, {@code Long},
     * {@code Double}, {@code Boolean}, {@code byte[]} or {@code null}), each row keyed by the result column's
     * {@code langName}, normalized to the declared types (integers as {@code Long}, floats as {@code Double},
     * bytes as {@code byte[]}, json as its text). Fails as the operations binding answers (REMOTE.md §7):
     * unknown query, invalid params, a result above {@code maxRows}, a failing statement or a value of another
     * type.
     */
    Uni<List<Map<String, Object>>> query(String operation, Map<String, Object> params, Statements statements);
}
