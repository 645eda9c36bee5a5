package dev.syncular.server.blobs;

import dev.syncular.server.config.ScheduleInterval;
import dev.syncular.server.config.StoreKind;
import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithConverter;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** File attachments (§5.9): {@code syncular.blobs.*}. */
@ConfigMapping(prefix = "syncular.blobs")
public interface BlobsConfig {
    @WithDefault("embedded")
    StoreKind store();

    /** §5.9.3 size cap; larger uploads and grants get 413 {@code blob.too_large}. */
    @WithDefault("100M")
    MemorySize maxBytes();

    /** §5.9.2 orphan sweep: blobs unreferenced for longer than this after upload are deleted. */
    @WithDefault("24h")
    Duration orphanGrace();

    /** Time between orphan sweeps (scheduler {@code every}); {@code off} disables the job. */
    @WithDefault("1h")
    @WithConverter(ScheduleInterval.class)
    Duration sweepInterval();
}
