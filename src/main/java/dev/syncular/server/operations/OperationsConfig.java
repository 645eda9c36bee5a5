package dev.syncular.server.operations;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** {@code syncular.operations.*}: the remote operation registry (REMOTE.md, docs/OPERATIONS.md). */
@ConfigMapping(prefix = "syncular.operations")
public interface OperationsConfig {
    Queries queries();

    /**
     * The body cap of {@code POST <mount>/operations} (413 above it), within {@code syncular.max-request-bytes}:
     * an operation request is a few params, never a bulk upload.
     */
    @WithDefault("1M")
    io.quarkus.runtime.configuration.MemorySize maxRequestBytes();

    interface Queries {
        /**
         * The typegen queries IR documents ({@code syncular.queries.ir.json}, {@code queryIrVersion} 4),
         * comma-separated; unset = no registered queries ({@code POST /operations} answers every id
         * {@code operation.unknown}). Env form {@code SYNCULAR_OPERATIONS_QUERIES_PATH}.
         */
        Optional<List<String>> path();

        /** The §2 row cap of every query without its own ({@code max-rows-by-query}), 1..10,000. */
        @WithDefault("1000")
        int maxRows();

        /** Per-query row caps by query name. */
        Map<String, Integer> maxRowsByQuery();

        /**
         * Query names registered {@code privileged} (§2.1): authorized by the {@link QueryAuthorizer} bean
         * instead of the generated coverage. Every other query is {@code scoped}.
         */
        Optional<Set<String>> privileged();

        /**
         * The config-only privileged authorizer (used when the image ships no {@link QueryAuthorizer} bean):
         * the actor ids allowed to run the privileged queries. Unset = none is allowed.
         */
        Optional<Set<String>> privilegedActors();
    }
}
