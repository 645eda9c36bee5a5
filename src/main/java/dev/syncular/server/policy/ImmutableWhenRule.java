package dev.syncular.server.policy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.sync.OperationEvidence;
import dev.syncular.server.sync.RowValidator;
import dev.syncular.server.sync.ValidationRejection;
import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Map;

/**
 * Declarative §6.7 rule {@code immutableWhen}: an update (a stored row exists) that changes {@code column} while
 * the stored row's {@code guardColumn} equals {@code guardValue} is rejected with the host {@code code} — a
 * transition rule that reads the stored row. Inserts and deletes pass.
 */
record ImmutableWhenRule(TableSchema schema, String column, String guardColumn, JsonNode guardValue, String code)
        implements RowValidator {
    private static final Uni<Void> ACCEPT = Uni.createFrom().voidItem();

    @Override
    public Uni<Void> validate(String actorId, String partition, OperationEvidence op) {
        if (op.row() == null || op.stored() == null) {
            return ACCEPT;
        }
        JsonNode guard =
                RuleValues.value(schema.column(guardColumn), op.stored().get(guardColumn));
        if (!RuleValues.same(guard, guardValue)) {
            return ACCEPT;
        }
        JsonNode before = RuleValues.value(schema.column(column), op.stored().get(column));
        JsonNode after = RuleValues.value(schema.column(column), op.row().get(column));
        if (RuleValues.same(before, after)) {
            return ACCEPT;
        }
        return Uni.createFrom()
                .failure(new ValidationRejection(
                        -1,
                        code,
                        "column is immutable in the row's state",
                        Map.of(
                                "fieldPaths",
                                List.of(column),
                                "reason",
                                "immutable_field",
                                "requiredAction",
                                "edit_fields")));
    }
}
