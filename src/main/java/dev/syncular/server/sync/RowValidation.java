package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.sync.PushOperations.Rejection;
import dev.syncular.server.wire.OpResult;
import io.smallrye.mutiny.Uni;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Running host validators and turning their outcome into a §6.3 rejection (§6.7, §6.8): a
 * {@link ValidationRejection} keeps its host code, message and §6.3.1 details; any other failure becomes
 * {@code sync.constraint_violation} with a fixed public message, so no exception text reaches the wire or the
 * persisted result.
 */
final class RowValidation {
    static final String ROW_VALIDATOR_FAILED = "write validator failed";
    static final String COMMIT_VALIDATOR_FAILED = "whole-commit validator failed";

    private RowValidation() {}

    /** Runs {@code validators} one after the other; the first failure ends the run. */
    static Uni<Void> run(
            List<RowValidator> validators,
            String actorId,
            String partition,
            OperationEvidence op,
            CandidateReader read) {
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (RowValidator v : validators) {
            chain = chain.flatMap(x -> invoke(() -> v.validate(actorId, partition, op, read)));
        }
        return chain;
    }

    /** Calls host code: a synchronous throw becomes a failed {@code Uni}, a null result an acceptance. */
    static Uni<Void> invoke(Supplier<Uni<Void>> call) {
        try {
            Uni<Void> u = call.get();
            return u == null ? Uni.createFrom().voidItem() : u;
        } catch (RuntimeException e) {
            return Uni.createFrom().failure(e);
        }
    }

    /** The terminating record for a validator failure at {@code opIndex} (its own index wins for a host rejection). */
    static Rejection rejection(int opIndex, Throwable failure, String unexpectedMessage) {
        if (failure instanceof ValidationRejection r) {
            int index = r.opIndex() >= 0 ? r.opIndex() : opIndex;
            return new Rejection(new OpResult.Error(index, r.code(), r.getMessage(), false), r.detailsJson());
        }
        return new Rejection(
                new OpResult.Error(
                        opIndex,
                        ErrorCode.CONSTRAINT_VIOLATION.code,
                        unexpectedMessage,
                        ErrorCode.CONSTRAINT_VIOLATION.retryable),
                null);
    }

    /** A full row keyed by column name, in column order (read-only). */
    static Map<String, Object> byName(TableSchema table, Object[] values) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i < values.length && i < table.columnCount(); i++) {
            out.put(table.column(i).name(), values[i]);
        }
        return Collections.unmodifiableMap(out);
    }
}
