package dev.syncular.server.sync;

import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.util.concurrent.Executor;

/**
 * How this pod builds §5.3 SQLite images: whether it builds them at all (stored images are served either way), the
 * executor the builds run on (issue 44: a pod's own bounded pool, so image builds — reading a whole table and
 * writing a SQLite file — never take the workers of pushes and page encoding), and how many builds of one partition
 * may run at once (issue 45: past it, a partition's further cold bootstraps are served on the rows lane (§5.2) instead
 * of queueing behind its builds and ahead of the other tenants'). {@code perPartition} {@code 0}: no limit.
 */
public record ImageBuilds(boolean enabled, Executor executor, int perPartition) {
    /** Built on Quarkus's worker pool, no per-partition limit (the engine's default outside the application). */
    public static final ImageBuilds DEFAULT =
            new ImageBuilds(true, task -> Infrastructure.getDefaultWorkerPool().execute(task), 0);

    public ImageBuilds {
        if (perPartition < 0) {
            throw new IllegalArgumentException("image builds per partition are 0 (no limit) or positive");
        }
    }
}
