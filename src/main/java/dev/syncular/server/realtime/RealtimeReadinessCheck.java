package dev.syncular.server.realtime;

import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** Readiness DOWN while the pod drains its realtime sockets on shutdown (the load balancer stops routing here). */
@Readiness
@ApplicationScoped
public class RealtimeReadinessCheck implements AsyncHealthCheck {
    @Inject
    RealtimeHub hub;

    @Override
    public Uni<HealthCheckResponse> call() {
        return Uni.createFrom().item(HealthCheckResponse.named("syncular-realtime").status(!hub.draining())
                .withData("connections", hub.openConnections()).build());
    }
}
