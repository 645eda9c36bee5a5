package dev.syncular.server.health;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Startup;

/** Kubernetes startup probe: UP once the schema compiled and the storage migration completed. */
@Startup
@ApplicationScoped
public class SchemaMigrationStartupCheck implements HealthCheck {
    @Inject
    StorageReadiness readiness;

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("schema-migration")
                .status(readiness.migrated())
                .build();
    }
}
