package dev.syncular.server.operations;

import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A registered command (REMOTE.md §3): a CDI bean a team ships in its own image, one per {@link #id()}. The
 * server first asks {@link #authorize} (mandatory; {@code false} is {@code operation.forbidden}), then runs
 * {@link #run} inside the push transaction, after the partition write lock and the idempotency recheck, and
 * pushes the mutations it returns as one commit under the command's reserved identity. That commit meets
 * everything an ordinary push meets: the actor's write scopes (§3.4), validators, references, the commit log,
 * the idempotency record, realtime and reactions. A retry of an applied command answers {@code cached} without
 * calling {@link #run} again; a rejected commit is stored and replays as {@code rejected}.
 *
 * <p>{@link #run} must not have external side effects (it may run again after a failed transaction); external
 * work belongs in a §6.9 reaction. An exception it throws fails the request ({@code operation.execution_failed});
 * no mutations is {@code operation.invalid_request}.
 */
public interface RemoteCommand {
    /** The operation id clients send; stable across deployments. */
    String id();

    /** Whether {@code call} may run at all (custom authorization, before any row is read). */
    Uni<Boolean> authorize(Call call);

    /** The commit's mutations, read from {@code rows} (the actor's readable rows, inside the transaction). */
    Uni<List<Mutation>> run(Call call, Rows rows);

    /** One invocation: who asks, where, and the decoded {@code params} (§4 values as plain Java, see {@link Params}). */
    record Call(
            String operationId, String requestId, String actorId, String partition, String clientId, Object params) {}

    /** Rows as stored, column name to value; empty when absent or outside the actor's scopes. */
    interface Rows {
        Uni<Optional<Map<String, Object>>> getRow(String table, String rowId);
    }

    /**
     * A full-row upsert ({@code row} holds every column, the primary key among them) or a delete ({@code row}
     * empty: {@link #delete}).
     */
    record Mutation(String table, String rowId, Optional<Map<String, Object>> row) {
        public static Mutation upsert(String table, String rowId, Map<String, Object> row) {
            return new Mutation(table, rowId, Optional.of(row));
        }

        public static Mutation delete(String table, String rowId) {
            return new Mutation(table, rowId, Optional.empty());
        }
    }
}
