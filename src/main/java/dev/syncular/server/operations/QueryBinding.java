package dev.syncular.server.operations;

import io.vertx.mutiny.core.buffer.Buffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The request's params applied to a registered query, as the generated client does: the params object names
 * declared inputs only; a required input must be present; a non-nullable one is not null. Bit {@code i} of the
 * activation mask is set when every control of condition {@code i} is present; the statement with that mask
 * runs, its binds read the inputs in placeholder order, each converted to its declared type.
 *
 * @param values the bind values in placeholder order (Java values for the PostgreSQL client; {@code null} is SQL NULL)
 */
public record QueryBinding(
        QueryDefinition.Statement statement, List<Object> values, Map<String, OperationValue> params) {

    public static QueryBinding of(QueryDefinition query, OperationValue rawParams) {
        Map<String, OperationValue> params;
        if (rawParams instanceof OperationValue.Obj o) {
            params = o.fields();
        } else if (rawParams instanceof OperationValue.Null) {
            params = Map.of();
        } else {
            throw OperationException.invalid("params must be an object");
        }
        for (String key : params.keySet()) {
            if (query.inputs().stream().noneMatch(i -> i.name().equals(key))) {
                throw OperationException.invalid("params names an unknown input");
            }
        }
        for (QueryDefinition.Input in : query.inputs()) {
            OperationValue v = params.get(in.name());
            if (v == null && in.required()) {
                throw OperationException.invalid("params misses a required input");
            }
            if (v instanceof OperationValue.Null && !in.nullable()) {
                throw OperationException.invalid("params has null for a non-nullable input");
            }
        }
        int mask = 0;
        for (int i = 0; i < query.conditions().size(); i++) {
            if (params.keySet().containsAll(query.conditions().get(i))) {
                mask |= 1 << i;
            }
        }
        QueryDefinition.Statement chosen = null;
        for (QueryDefinition.Statement s : query.statements()) {
            if (s.activationMask() == mask) {
                chosen = s;
            }
        }
        if (chosen == null) {
            throw OperationException.invalid("no registered statement for this combination of inputs");
        }
        List<Object> values = new ArrayList<>(chosen.binds().size());
        for (QueryDefinition.Bind b : chosen.binds()) {
            OperationValue v = params.get(b.input());
            values.add(v == null ? null : convert(v, b.type()));
        }
        return new QueryBinding(chosen, Collections.unmodifiableList(values), params);
    }

    static Object convert(OperationValue v, String type) {
        if (v instanceof OperationValue.Null) {
            return null;
        }
        switch (type) {
            case "string", "json", "blob_ref" -> {
                if (v instanceof OperationValue.Text t) {
                    return t.value();
                }
            }
            case "integer" -> {
                if (v instanceof OperationValue.Integer i) {
                    return i.value();
                }
                if (v instanceof OperationValue.Number n
                        && n.value() == Math.rint(n.value())
                        && Math.abs(n.value()) <= 9.007199254740991E15) {
                    return (long) n.value();
                }
            }
            case "float" -> {
                if (v instanceof OperationValue.Number n) {
                    return n.value();
                }
                if (v instanceof OperationValue.Integer i) {
                    return (double) i.value();
                }
            }
            case "boolean" -> {
                if (v instanceof OperationValue.Bool b) {
                    return b.value();
                }
            }
            case "bytes", "crdt" -> {
                if (v instanceof OperationValue.Bytes b) {
                    return Buffer.buffer(b.value());
                }
            }
            default -> {}
        }
        throw OperationException.invalid("a param value does not have its input's declared type");
    }
}
