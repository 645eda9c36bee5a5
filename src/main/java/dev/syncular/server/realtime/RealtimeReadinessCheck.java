package dev.syncular.server.realtime;

import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Readiness DOWN until the pod's LISTEN connection is up (a socket connected earlier could miss commits), and
 * while the pod drains its realtime sockets on shutdown (the load balancer stops routing here).
 */
@Readiness
@ApplicationScoped
public class RealtimeReadinessCheck implements AsyncHealthCheck {
    @Inject
    PodRealtime realtime;

    @Override
    public Uni<HealthCheckResponse> call() {
        return Uni.createFrom()
                .item(HealthCheckResponse.named("syncular-realtime")
                        .status(realtime.ready())
                        .withData("connections", realtime.hub().openConnections())
                        .build());
    }
}
