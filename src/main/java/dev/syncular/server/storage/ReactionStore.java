package dev.syncular.server.storage;

import io.smallrye.mutiny.Uni;
import java.util.List;

/**
 * The delivery side of durable reactions (§6.9); the rows are appended by the push transaction
 * ({@link PushTx#appendReactions}). Every transition that follows a claim compares the lease owner, so a worker
 * whose lease expired and was taken over cannot acknowledge or alter the row.
 */
public interface ReactionStore {
    /**
     * Atomically claims up to {@code limit} due rows (pending and due, or leased with an expired lease) for
     * {@code owner} until {@code nowMs + leaseMs}, counting one more attempt on each; concurrent claimers get
     * disjoint rows.
     */
    default Uni<List<Reaction>> claim(String owner, long nowMs, long leaseMs, int limit) {
        return claim(owner, nowMs, leaseMs, limit, null);
    }

    /** {@link #claim(String, long, long, int)} of rows whose type is one of {@code types} ({@code null}: any type). */
    Uni<List<Reaction>> claim(String owner, long nowMs, long leaseMs, int limit, List<String> types);

    /** Extends the lease of a row {@code owner} still holds; false when it lost it. */
    Uni<Boolean> renew(long id, String owner, long leaseExpiresAtMs);

    /** Marks a row {@code owner} holds completed; false when it lost it. */
    Uni<Boolean> complete(long id, String owner, long nowMs);

    /**
     * Records a failed attempt of a row {@code owner} holds: back to pending, due at {@code retryAtMs}, or
     * dead-lettered when {@code retryAtMs} is null. False when it lost the lease.
     */
    Uni<Boolean> fail(long id, String owner, String code, String detailsJson, long nowMs, Long retryAtMs);

    /** How many rows are still to deliver: pending or leased (a count over the claim index). */
    Uni<Long> countUndelivered();

    /** Rows by id after {@code afterId}, of one partition and status when given (null: any). */
    Uni<List<Reaction>> list(String partition, String status, long afterId, int limit);

    /** One row, or a null item. */
    Uni<Reaction> find(long id);

    /** Resets a dead-lettered row: attempts and failure cleared, due now. False when it is not dead-lettered. */
    Uni<Boolean> retryDeadLetter(long id, long nowMs);

    /** Removal counts of one retention pass and whether more rows may remain. */
    record PruneResult(long completed, long deadLettered, boolean mayHaveMore) {}

    /**
     * Deletes at most {@code limit} terminal rows: completed before {@code completedBefore}, dead-lettered before
     * {@code deadLetterBefore} (strictly older). Never pending or leased rows.
     */
    Uni<PruneResult> prune(long completedBefore, long deadLetterBefore, int limit);
}
