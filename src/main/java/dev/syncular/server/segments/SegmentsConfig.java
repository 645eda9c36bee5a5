package dev.syncular.server.segments;

import dev.syncular.server.config.DurationRange;
import dev.syncular.server.config.StoreKind;
import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/** Bootstrap segment storage (§5): {@code syncular.segments.store=embedded|s3}. */
@ConfigMapping(prefix = "syncular.segments")
public interface SegmentsConfig {
    @WithDefault("embedded")
    StoreKind store();

    /**
     * §5.3 SQLite images: built for clients advertising {@code accept} bit 2 when a table's snapshot
     * exceeds one rows page. {@code false} serves only stored images and the rows lane.
     */
    @WithDefault("true")
    boolean sqliteImages();

    /**
     * Threads of the pod's own pool for §5.3 image builds (reading a whole table into a SQLite file): builds past
     * it queue, and never take the workers of pushes and page encoding.
     */
    @WithDefault("2")
    int imageBuildThreads();

    /**
     * Image builds of one partition running at once on this pod; a further cold bootstrap of the partition is
     * served on the rows lane (§5.2) instead. {@code 0} = no limit.
     */
    @WithDefault("1")
    int imageBuildsPerPartition();

    /**
     * Time between passes forgetting expired segments (§5.1; scheduler {@code every} and first delay, so more than
     * {@code 0s}, no {@code off}).
     */
    @WithDefault("1h")
    @DurationRange(min = DurationRange.MORE_THAN_ZERO, message = "must be more than 0s")
    Duration sweepInterval();

    /**
     * Memory for the embedded store's cache of recently published or read segment bytes (§5.5 downloads right
     * after their publication are not read back from PostgreSQL). Absent: an eighth of the heap, at most 64 MiB.
     * {@code 0}: off.
     */
    Optional<MemorySize> cache();
}
