package dev.syncular.server.jobs;

import dev.syncular.server.config.ScheduleInterval;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithConverter;
import io.smallrye.config.WithDefault;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import java.time.Duration;

/**
 * {@code syncular.tenants.*}: the loudest partitions (tenants) of the last minute — database time, committed
 * bytes, fan-out bytes, refusals — counted per pod, exported as bounded gauges and published to the shared
 * storage for the console's Tenants page.
 */
@ConfigMapping(prefix = "syncular.tenants")
public interface TenantsConfig {
    /**
     * How many partitions each figure names: the gauges {@code syncular_tenant_top_*} carry at most this many
     * series each, and each pod publishes its top this-many in every figure.
     */
    @WithDefault("20")
    @Min(value = 1, message = "must be 1 to 1000")
    @Max(value = 1000, message = "must be 1 to 1000")
    int topN();

    /**
     * Time between two refreshes of the gauges and publications of this pod's top partitions (scheduler
     * {@code every}); {@code off} stops both on this pod. A pod not heard from for three intervals drops out of
     * the merged view.
     */
    @WithDefault("10s")
    @WithConverter(ScheduleInterval.class)
    Duration publishInterval();
}
