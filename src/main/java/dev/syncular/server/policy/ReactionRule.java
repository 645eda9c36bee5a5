package dev.syncular.server.policy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.PlannedReaction;
import dev.syncular.server.sync.CandidateReader;
import dev.syncular.server.sync.CommitEvidence;
import dev.syncular.server.sync.OperationEvidence;
import dev.syncular.server.sync.ReactionPlanner;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Declarative §6.9 planner: for each operation of a new commit on {@code table} with the given {@code op}
 * ({@code upsert}, {@code delete} or {@code any}) — and, with a {@code when} condition, whose final row's
 * {@code whenColumn} equals {@code whenEquals} while the stored row's did not (a transition; every such write when
 * {@code everyWrite}) — plans one reaction of {@code type} / {@code version}, keyed {@code type:table:rowId}
 * (once per row and commit), whose payload carries the table, row id, operation, actor and final row.
 */
record ReactionRule(
        TableSchema table,
        String op,
        String whenColumn,
        JsonNode whenEquals,
        boolean everyWrite,
        String type,
        int version,
        int maxAttempts)
        implements ReactionPlanner {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    @Override
    public Uni<List<PlannedReaction>> plan(CommitEvidence commit, CandidateReader read) {
        List<PlannedReaction> out = new ArrayList<>();
        Set<String> keys = new HashSet<>();
        for (OperationEvidence e : commit.operations()) {
            if (!e.table().equals(table.name())
                    || !("any".equals(op) || op.equals(e.op()))
                    || (e.isDelete() && e.stored() == null)
                    || !fires(e)) {
                continue;
            }
            String key = type + ":" + table.name() + ":" + e.rowId();
            if (!keys.add(key)) {
                continue;
            }
            ObjectNode payload = F.objectNode()
                    .put("table", table.name())
                    .put("rowId", e.rowId())
                    .put("op", e.op())
                    .put("actorId", commit.actorId());
            payload.set("row", RuleValues.row(table, e.row()));
            out.add(new PlannedReaction(key, type, version, payload.toString(), maxAttempts));
        }
        return Uni.createFrom().item(out);
    }

    private boolean fires(OperationEvidence e) {
        if (whenColumn == null) {
            return true;
        }
        if (e.row() == null
                || !RuleValues.same(
                        RuleValues.value(table.column(whenColumn), e.row().get(whenColumn)), whenEquals)) {
            return false;
        }
        return everyWrite
                || e.stored() == null
                || !RuleValues.same(
                        RuleValues.value(table.column(whenColumn), e.stored().get(whenColumn)), whenEquals);
    }
}
