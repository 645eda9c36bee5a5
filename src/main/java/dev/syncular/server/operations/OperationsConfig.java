package dev.syncular.server.operations;

import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** {@code syncular.operations.*}: the remote operation registry (REMOTE.md, docs/OPERATIONS.md). */
@ConfigMapping(prefix = "syncular.operations")
public interface OperationsConfig {
    Queries queries();

    /** The REMOTE.md §6 watch socket at {@code <mount>/operations/realtime}. */
    Watch watch();

    /** Commands declared in a document (docs/OPERATIONS.md, "Declared commands"), beside the image's own beans. */
    Commands commands();

    interface Commands {
        /**
         * The declared-commands document (JSON); unset = none. Env form {@code SYNCULAR_OPERATIONS_COMMANDS_PATH}.
         * A document naming an unknown table or column, or an id twice, stops the start-up.
         */
        Optional<String> path();
    }

    /**
     * The body cap of {@code POST <mount>/operations} (413 above it), within {@code syncular.max-request-bytes}:
     * an operation request is a few params, never a bulk upload.
     */
    @WithDefault("1M")
    MemorySize maxRequestBytes();

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

    interface Watch {
        /**
         * Open watch sockets of the pod; one more upgrade is refused with 429
         * {@code sync.websocket_connection_limit} (the sync sockets have {@code syncular.realtime.max-connections}).
         */
        @WithDefault("10000")
        int maxConnections();

        /** Active watches one socket may hold; one more is answered {@code sync.rate_limited} (retryable). */
        @WithDefault("100")
        int maxPerConnection();

        /** Active watches of the pod's sockets together; one more is answered {@code sync.rate_limited}. */
        @WithDefault("10000")
        int maxPerPod();

        /**
         * Active watches of one partition's sockets on the pod; one more is answered {@code sync.rate_limited}, so one
         * tenant cannot take the pod's watches from the others.
         */
        @WithDefault("1000")
        int maxPerPartition();

        /**
         * The shortest time between the starts of two runs of one watch; commits inside it coalesce into one
         * rerun at its end. {@code 0} = rerun as soon as the previous run ended.
         */
        @WithDefault("100ms")
        Duration minRerunInterval();

        /** Watch runs executing at once on the pod (each holds one pooled connection); the rest wait in order. */
        @WithDefault("8")
        int maxConcurrentRuns();

        /**
         * Watch runs of one partition executing at once on the pod; the partitions' waiting runs start in turn, so a
         * tenant whose commits rerun many watches waits behind its own runs, not the others ahead of theirs.
         */
        @WithDefault("2")
        int maxConcurrentRunsPerPartition();

        /** The largest client message of the socket; a larger one is {@code operation.invalid_request}. */
        @WithDefault("64K")
        MemorySize maxMessageBytes();
    }
}
