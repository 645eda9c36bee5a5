package dev.syncular.server.policy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.sync.CandidateReader;
import dev.syncular.server.sync.CommitEvidence;
import dev.syncular.server.sync.CommitValidator;
import dev.syncular.server.sync.OperationEvidence;
import dev.syncular.server.sync.ValidationRejection;
import io.smallrye.mutiny.Uni;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Declarative §6.8 rule {@code requireSiblingWhen}: a commit that upserts a row of {@code table} whose final
 * {@code column} equals {@code equals} must also upsert, in the same commit, the row of {@code table} whose id is
 * that row's id followed by {@code siblingRowIdSuffix}; otherwise the commit is rejected with the host
 * {@code code}, attributed to the triggering operation, with the details {@code fieldPaths [column], reason
 * missing_sibling_operation, requiredAction repair_aggregate}.
 */
record RequireSiblingRule(TableSchema table, String column, JsonNode equals, String siblingRowIdSuffix, String code)
        implements CommitValidator {

    @Override
    public Uni<Void> validate(CommitEvidence commit, CandidateReader read) {
        Set<String> written = new HashSet<>();
        for (OperationEvidence op : commit.operations()) {
            if (op.table().equals(table.name()) && op.row() != null) {
                written.add(op.rowId());
            }
        }
        for (OperationEvidence op : commit.operations()) {
            if (op.table().equals(table.name())
                    && op.row() != null
                    && RuleValues.same(
                            RuleValues.value(table.column(column), op.row().get(column)), equals)
                    && !written.contains(op.rowId() + siblingRowIdSuffix)) {
                return Uni.createFrom()
                        .failure(new ValidationRejection(
                                op.opIndex(),
                                code,
                                "a required sibling row is missing",
                                Map.of(
                                        "fieldPaths",
                                        List.of(column),
                                        "reason",
                                        "missing_sibling_operation",
                                        "requiredAction",
                                        "repair_aggregate")));
            }
        }
        return Uni.createFrom().voidItem();
    }
}
