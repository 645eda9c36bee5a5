package dev.syncular.server.health;

import dev.syncular.server.observability.ServeGateMetrics;
import dev.syncular.server.storage.CheckpointStorage;
import dev.syncular.server.storage.StoredCheckpoint;
import dev.syncular.server.sync.SyncEngine;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;
import org.jboss.logging.Logger;

/**
 * Readiness bound to the serve gate (§2.4): DOWN until the schema is migrated, while the stored schema is
 * newer than this build, or while any partition has a pending checkpoint this process did not declare —
 * exactly when {@code POST /sync} would answer {@code sync.schema_not_ready} — so Kubernetes takes the pod
 * out of rotation on its own. The pending checkpoints are listed in the check's data. A storage failure is
 * DOWN {@code storage_unavailable}, logged with its cause every time (the stack trace once per outage).
 */
@Readiness
@ApplicationScoped
public class ServeGateReadinessCheck implements AsyncHealthCheck {
    private static final Logger LOG = Logger.getLogger(ServeGateReadinessCheck.class);
    private final AtomicBoolean failing = new AtomicBoolean();

    @Inject
    CheckpointStorage storage;

    @Inject
    SyncEngine engine;

    @Inject
    StorageReadiness readiness;

    @Inject
    ServeGateMetrics metrics;

    @Override
    public Uni<HealthCheckResponse> call() {
        HealthCheckResponseBuilder b = HealthCheckResponse.named("serve-gate");
        int running = engine.gates().runningSchemaVersion();
        b.withData("runningSchemaVersion", running);
        if (!readiness.migrated()) {
            return Uni.createFrom()
                    .item(b.down().withData("reason", "schema_not_migrated").build());
        }
        return storage.readStoredSchemaVersion()
                .flatMap(stored -> storage.readPendingCheckpoints(running).map(pending -> {
                    metrics.pending(pending.size());
                    b.withData("storedSchemaVersion", stored);
                    List<String> refusing = new ArrayList<>();
                    List<String> all = new ArrayList<>();
                    for (StoredCheckpoint c : pending) {
                        String label = c.partition() + "/" + c.name() + " (" + c.state().dbName + ")";
                        all.add(label);
                        if (!engine.gates().declaredHere(c.partition(), c.name())) {
                            refusing.add(label);
                        }
                    }
                    if (!all.isEmpty()) {
                        b.withData("pendingCheckpoints", String.join(", ", all));
                    }
                    if (stored > running) {
                        return b.down().withData("reason", "schema_newer").build();
                    }
                    if (!refusing.isEmpty()) {
                        return b.down().withData("reason", "checkpoint_pending").build();
                    }
                    return b.up().build();
                }))
                .invoke(r -> {
                    if (failing.compareAndSet(true, false)) {
                        LOG.info("readiness: storage reachable again");
                    }
                })
                .onFailure()
                .recoverWithItem(e -> {
                    // every failure is logged with its cause; the stack trace once per outage
                    if (failing.compareAndSet(false, true)) {
                        LOG.warn("readiness DOWN (storage_unavailable): the serve gate could not be read", e);
                    } else {
                        LOG.warnf("readiness DOWN (storage_unavailable): %s", e);
                    }
                    return b.down().withData("reason", "storage_unavailable").build();
                });
    }
}
