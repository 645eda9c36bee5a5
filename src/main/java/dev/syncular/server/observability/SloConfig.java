package dev.syncular.server.observability;

import dev.syncular.server.config.ScheduleInterval;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithConverter;
import io.smallrye.config.WithDefault;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import java.time.Duration;

/**
 * {@code syncular.slo.*}: the visibility objective — how long a commit may take to reach each subscribed client that
 * is online ({@code syncular_client_visibility_seconds}, {@link VisibilityLag}) — when a pulling client counts as
 * away rather than stale, and the stalest connected clients each pod names ({@code realtime.StalestClients}).
 */
@ConfigMapping(prefix = "syncular.slo")
public interface SloConfig {
    /**
     * The visibility objective: a bucket boundary of {@code syncular_client_visibility_seconds} (the chart's
     * burn-rate alert counts the samples above it) and the lag past which a connected client counts as stale.
     */
    @WithDefault("1s")
    Duration visibility();

    /**
     * A pulling client whose stored record ({@code sync_clients.updated_at_ms}) is older than this, or that has none,
     * was away: its pull's commits go to {@code syncular_client_visibility_offline_seconds}, not to the objective.
     */
    @WithDefault("10m")
    Duration offlineAfter();

    /** How many connected clients and partitions the stalest lists (gauges, admin API, console) name. */
    @WithDefault("10")
    @Min(value = 1, message = "must be 1 to 1000")
    @Max(value = 1000, message = "must be 1 to 1000")
    int stalest();

    /** Time between two refreshes of the stalest gauges (on a worker thread); {@code off}: no gauges. */
    @WithDefault("10s")
    @WithConverter(ScheduleInterval.class)
    Duration refreshInterval();
}
