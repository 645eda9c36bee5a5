package dev.syncular.server.operations;

import io.smallrye.mutiny.Uni;
import java.util.Set;

/**
 * The config-only {@link QueryAuthorizer}: a privileged query is allowed to the actors listed in
 * {@code syncular.operations.queries.privileged-actors}, denied to everyone else (an empty list denies all).
 */
public final class ConfiguredQueryAuthorizer implements QueryAuthorizer {
    private final Set<String> actors;

    public ConfiguredQueryAuthorizer(Set<String> actors) {
        this.actors = Set.copyOf(actors);
    }

    @Override
    public Uni<Boolean> authorize(Request request) {
        return Uni.createFrom().item(actors.contains(request.actorId()));
    }
}
