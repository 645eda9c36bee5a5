package dev.syncular.server.operations;

import dev.syncular.server.schema.TableSchema;
import io.smallrye.mutiny.Uni;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A command declared in configuration (docs/OPERATIONS.md, "Declared commands"), for an image without Java code
 * of its own: one row of one table, named by a param, is updated (it must exist), upserted, or deleted; the
 * written columns take constants or params. Its authorization is a list of actors ({@code *}: every authenticated
 * actor); the commit still meets the actor's write scopes like any push. It cannot read other rows, compute values
 * or write more than one row: that takes a {@link RemoteCommand} bean.
 */
final class DeclaredCommand implements RemoteCommand {
    enum Kind {
        UPDATE,
        UPSERT,
        DELETE
    }

    /** A written column's value: a constant, or the param {@code param}. */
    record Value(String param, Object constant) {}

    private final String id;
    private final TableSchema table;
    private final Kind kind;
    private final String rowParam;
    private final Map<String, Value> set;
    private final Set<String> actors;

    DeclaredCommand(
            String id, TableSchema table, Kind kind, String rowParam, Map<String, Value> set, Set<String> actors) {
        this.id = id;
        this.table = table;
        this.kind = kind;
        this.rowParam = rowParam;
        this.set = Map.copyOf(set);
        this.actors = Set.copyOf(actors);
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public Uni<Boolean> authorize(Call call) {
        return Uni.createFrom().item(actors.contains("*") || actors.contains(call.actorId()));
    }

    @Override
    public Uni<List<Mutation>> run(Call call, Rows rows) {
        if (!(call.params() instanceof Map<?, ?> params)
                || !(params.get(rowParam) instanceof String rowId)
                || rowId.isEmpty()) {
            throw OperationException.invalid("params must be an object with the row id as the string " + rowParam);
        }
        for (Value v : set.values()) {
            if (v.param() != null && !params.containsKey(v.param())) {
                throw OperationException.invalid("params lack " + v.param());
            }
        }
        if (kind == Kind.DELETE) {
            return Uni.createFrom().item(List.of(Mutation.delete(table.name(), rowId)));
        }
        return rows.getRow(table.name(), rowId).map(found -> {
            if (found.isEmpty() && kind == Kind.UPDATE) {
                throw OperationException.invalid("no such row to update");
            }
            Map<String, Object> row = new LinkedHashMap<>(found.orElseGet(Map::of));
            row.put(table.primaryKey(), rowId);
            set.forEach((column, v) -> row.put(column, v.param() == null ? v.constant() : params.get(v.param())));
            return List.of(Mutation.upsert(table.name(), rowId, row));
        });
    }
}
