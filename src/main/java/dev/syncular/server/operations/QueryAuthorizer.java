package dev.syncular.server.operations;

import io.smallrye.mutiny.Uni;
import java.util.Map;

/**
 * The §2.1 {@code authorize} callback of {@code privileged} queries. A team ships its own as a CDI bean in its
 * image ({@code @ApplicationScoped class MyAuthorizer implements QueryAuthorizer}); the built-in one
 * ({@link ConfiguredQueryAuthorizer}, {@code syncular.operations.queries.privileged-actors}) then steps aside.
 * A {@code false} item is {@code operation.forbidden}; a failed {@code Uni} is {@code operation.execution_failed}.
 * The grant is within the authenticated partition: the query still runs partition-rewritten. Do not block.
 */
public interface QueryAuthorizer {
    /** What one privileged query invocation asks for. */
    record Request(
            String queryName,
            String operationId,
            String actorId,
            String partition,
            String clientId,
            Map<String, OperationValue> params) {}

    Uni<Boolean> authorize(Request request);
}
