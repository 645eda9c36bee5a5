package dev.syncular.server.sync;

import io.smallrye.mutiny.Uni;

/**
 * A per-table write validator (§6.7). It runs for each operation on its table after the sparse-row decode and
 * the §3.4 scope authorization, inside the commit transaction, immediately before the row's write (decode →
 * scope authorization → validation → write). A delete of an absent row runs none.
 *
 * <p>It accepts by completing and rejects by failing with a {@link ValidationRejection}: the commit is rejected
 * with that host code and rolled back (§6.4). Any other failure rejects the commit with
 * {@code sync.constraint_violation} and the fixed message {@code write validator failed}. It must not block the
 * calling thread (return a {@code Uni} that completes later instead) and must not mutate the row.
 */
@FunctionalInterface
public interface RowValidator {
    Uni<Void> validate(String actorId, String partition, OperationEvidence operation);

    /**
     * The form the engine calls: {@code read} is the push transaction's reader, over the rows as stored with the
     * operations staged before this one laid over them — {@link CandidateReader#getRow}, and §6.7
     * {@link CandidateReader#queryAuthoritative} for a decision from other rows (a membership, a role, a grant).
     * The default calls the three-argument form; a validator that reads the transaction overrides this one (the
     * engine then never calls its three-argument form).
     */
    default Uni<Void> validate(String actorId, String partition, OperationEvidence operation, CandidateReader read) {
        return validate(actorId, partition, operation);
    }

    /** The table it validates, for validators installed as CDI beans; {@code null} = every table. */
    default String table() {
        return null;
    }
}
