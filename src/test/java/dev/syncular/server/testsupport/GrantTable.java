package dev.syncular.server.testsupport;

import dev.syncular.server.sync.ScopeResolver;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Allowed scopes per (partition, actor) set by the test (§3.2, the seam the spec names); an actor without a grant
 * fails resolution. Selected only by the profiles that enable it ({@link ScenarioAppProfile} and others), never for
 * the other tests' app.
 */
@Alternative
@ApplicationScoped
public class GrantTable implements ScopeResolver {
    private final Map<String, Map<String, List<String>>> grants = new ConcurrentHashMap<>();

    /** A method, not a field write: the injected reference is a client proxy. */
    public void grant(String partition, String actorId, Map<String, List<String>> allowed) {
        grants.put(partition + "/" + actorId, allowed);
    }

    @Override
    public Uni<Map<String, List<String>>> resolveScopes(String actorId, String partition) {
        Map<String, List<String>> g = grants.get(partition + "/" + actorId);
        return g == null
                ? Uni.createFrom().failure(new IllegalStateException("no grant"))
                : Uni.createFrom().item(g);
    }
}
