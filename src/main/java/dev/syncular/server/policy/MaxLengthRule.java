package dev.syncular.server.policy;

import dev.syncular.server.sync.OperationEvidence;
import dev.syncular.server.sync.RowValidator;
import dev.syncular.server.sync.ValidationRejection;
import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Map;

/**
 * Declarative §6.7 rule {@code maxLength}: an upsert whose {@code column} holds a string longer than {@code max}
 * characters (UTF-16 units, as a JavaScript client counts them) is rejected with the host {@code code} and the
 * §6.3.1 details {@code fieldPaths [column], reason max_length_exceeded, requiredAction edit_fields}.
 */
record MaxLengthRule(String column, int max, String code) implements RowValidator {
    private static final Uni<Void> ACCEPT = Uni.createFrom().voidItem();

    @Override
    public Uni<Void> validate(String actorId, String partition, OperationEvidence op) {
        if (op.row() != null && op.row().get(column) instanceof String s && s.length() > max) {
            return Uni.createFrom()
                    .failure(new ValidationRejection(
                            -1,
                            code,
                            "value exceeds the maximum length",
                            Map.of(
                                    "fieldPaths",
                                    List.of(column),
                                    "reason",
                                    "max_length_exceeded",
                                    "requiredAction",
                                    "edit_fields")));
        }
        return ACCEPT;
    }
}
