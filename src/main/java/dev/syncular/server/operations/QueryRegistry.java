package dev.syncular.server.operations;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The deployment's registered queries by operation id (REMOTE.md §1). Immutable after start-up. */
public final class QueryRegistry {
    private final Map<String, QueryDefinition> byId;
    /** Bare query names defined once across the documents (a name two documents define is left out). */
    private final Map<String, QueryDefinition> byName;

    public QueryRegistry(List<QueryDefinition> queries) {
        Map<String, QueryDefinition> m = new LinkedHashMap<>();
        for (QueryDefinition q : queries) {
            if (m.put(q.id(), q) != null) {
                throw new QueryIrException("operation id " + q.id() + " is registered twice");
            }
        }
        this.byId = Collections.unmodifiableMap(m);
        Map<String, QueryDefinition> names = new LinkedHashMap<>();
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (QueryDefinition q : queries) {
            counts.merge(q.name(), 1, Integer::sum);
            names.put(q.name(), q);
        }
        counts.forEach((name, n) -> {
            if (n > 1) {
                names.remove(name);
            }
        });
        this.byName = Collections.unmodifiableMap(names);
    }

    /**
     * The query with operation id {@code operation}, else the one whose bare name it is (for server-side callers,
     * §6.7 {@code queryAuthoritative}; a name defined by two documents needs its id).
     */
    public Optional<QueryDefinition> findByIdOrName(String operation) {
        QueryDefinition q = byId.get(operation);
        return Optional.ofNullable(q != null ? q : byName.get(operation));
    }

    public Optional<QueryDefinition> find(String operationId) {
        return Optional.ofNullable(byId.get(operationId));
    }

    public Collection<QueryDefinition> all() {
        return byId.values();
    }
}
