package dev.syncular.server.operations;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * REMOTE.md §2.1 {@code scoped} authorization from the generated coverage, before any SQL runs. The coverage
 * must hold exactly one record per table the query reads, each covering every scope variable the table declares
 * (its base variable plus its fixed scopes, no variable twice) with at least one unit; anything else — empty,
 * duplicate, extra or incomplete coverage — fails closed with {@code operation.invalid_request}. Every covered
 * value (the values of the inputs a record names) must then be allowed for its variable by the actor's resolved
 * scopes, else {@code operation.forbidden}. {@code "*"} allows every value of its variable; it does not make a
 * query privileged.
 */
public final class ScopeCoverage {
    public static final String WILDCARD = "*";

    private ScopeCoverage() {}

    public static void check(
            QueryDefinition query,
            CompiledSchema schema,
            Map<String, OperationValue> params,
            Map<String, List<String>> allowed) {
        Set<String> covered = new HashSet<>();
        for (QueryDefinition.Coverage c : query.coverage()) {
            if (!query.tables().contains(c.table()) || !covered.add(c.table())) {
                throw OperationException.invalid("scoped query has invalid generated scope coverage");
            }
        }
        if (!covered.containsAll(query.tables())) {
            throw OperationException.invalid("scoped query lacks complete generated scope coverage");
        }
        for (QueryDefinition.Coverage c : query.coverage()) {
            TableSchema table = schema.table(c.table());
            Set<String> variables = new HashSet<>();
            variables.add(c.variable());
            for (QueryDefinition.FixedScope f : c.fixedScopes()) {
                if (!variables.add(f.variable())) {
                    throw OperationException.invalid("scoped query lacks complete generated scope coverage");
                }
            }
            if (table == null || !variables.equals(new HashSet<>(table.scopeVariables()))) {
                throw OperationException.invalid("scoped query lacks complete generated scope coverage");
            }
            if (c.units().isEmpty()) {
                throw OperationException.invalid("scoped query has an empty scope unit");
            }
            requireAllowed(c.variable(), values(c.units(), params), allowed);
            for (QueryDefinition.FixedScope f : c.fixedScopes()) {
                if (f.params().isEmpty()) {
                    throw OperationException.invalid("scoped query has an empty scope unit");
                }
                requireAllowed(f.variable(), values(f.params(), params), allowed);
            }
        }
    }

    private static List<String> values(List<String> inputs, Map<String, OperationValue> params) {
        List<String> out = new ArrayList<>();
        for (String input : inputs) {
            OperationValue v = params.get(input);
            if (v instanceof OperationValue.Text t) {
                out.add(t.value());
            } else if (v instanceof OperationValue.Array a && !a.items().isEmpty()) {
                for (OperationValue item : a.items()) {
                    if (!(item instanceof OperationValue.Text t)) {
                        throw OperationException.invalid("a scope value must be a string");
                    }
                    out.add(t.value());
                }
            } else {
                throw OperationException.invalid("a covered scope input is missing or not a string");
            }
        }
        return out;
    }

    private static void requireAllowed(String variable, List<String> values, Map<String, List<String>> allowed) {
        List<String> granted = allowed.get(variable);
        for (String value : values) {
            if (granted == null || !(granted.contains(WILDCARD) || granted.contains(value))) {
                throw new OperationException(OperationErrorCode.FORBIDDEN, "scope authorization denies this query");
            }
        }
    }
}
