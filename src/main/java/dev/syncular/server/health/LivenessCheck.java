package dev.syncular.server.health;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/** Process-level liveness: the JVM and the Quarkus runtime are up. */
@Liveness
@ApplicationScoped
public class LivenessCheck implements HealthCheck {

    static final String NAME = "syncular";

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.up(NAME);
    }
}
