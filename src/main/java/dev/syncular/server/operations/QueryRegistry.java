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

    public QueryRegistry(List<QueryDefinition> queries) {
        Map<String, QueryDefinition> m = new LinkedHashMap<>();
        for (QueryDefinition q : queries) {
            if (m.put(q.id(), q) != null) {
                throw new QueryIrException("operation id " + q.id() + " is registered twice");
            }
        }
        this.byId = Collections.unmodifiableMap(m);
    }

    public Optional<QueryDefinition> find(String operationId) {
        return Optional.ofNullable(byId.get(operationId));
    }

    public Collection<QueryDefinition> all() {
        return byId.values();
    }
}
