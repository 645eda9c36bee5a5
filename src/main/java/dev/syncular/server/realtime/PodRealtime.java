package dev.syncular.server.realtime;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.util.Map;

/**
 * The pod's realtime: its {@link RealtimeHub} on the application's storage, the {@link RealtimeChannel} the
 * {@code <mount>/realtime} socket serves (both built by the composition root, {@code boot}), the per-pod limits
 * (§8.8) and the lifecycle — the hub starts with the application and drains at the start of its shutdown.
 */
@ApplicationScoped
public class PodRealtime {
    /** What a socket-budget refusal suggests to wait before the next upgrade ({@code Retry-After: 5}). */
    static final long SOCKET_RETRY_AFTER_MS = 5_000;

    private final RealtimeConfig config;
    private final RealtimeHub hub;
    private final RealtimeChannel channel;

    /** {@code hub} and {@code channel} are the pod's, built once by the composition root ({@code boot}). */
    @Inject
    public PodRealtime(RealtimeConfig config, RealtimeHub hub, RealtimeChannel channel) {
        this.config = config;
        this.hub = hub;
        this.channel = channel;
    }

    /** Opens the hub's LISTEN connection and starts its heartbeats (the last step of {@code boot.StartupSequence}). */
    public void start() {
        if (config.enabled()) {
            hub.start();
        }
    }

    /**
     * Drain at the start of Quarkus' shutdown (the {@code ShutdownDelayInitiatedEvent} of
     * {@code quarkus.shutdown.delay-enabled}), while the HTTP server still serves: readiness goes DOWN, upgrades
     * are refused, in-flight socket rounds get {@code syncular.realtime.shutdown-grace}, and the remaining
     * sockets close with 1001 (going away) rather than a plain close when the server stops. {@code ShutdownEvent}
     * drains too when the delay phase did not run; a second drain does nothing.
     */
    void drainBeforeHttpCloses(@Observes ShutdownDelayInitiatedEvent event) {
        hub.drain(config.shutdownGrace());
    }

    void stop(@Observes @Priority(1) ShutdownEvent event) {
        hub.drain(config.shutdownGrace());
    }

    public RealtimeHub hub() {
        return hub;
    }

    RealtimeChannel channel() {
        return channel;
    }

    boolean enabled() {
        return config.enabled();
    }

    /** Readiness: listening for commits (when enabled) and not draining. */
    boolean ready() {
        return !hub.draining() && (!config.enabled() || hub.listening());
    }

    boolean atCapacity() {
        return hub.openConnections() >= config.maxConnections();
    }

    /** Whether the pod's socket memory has room for one more socket ({@code syncular.realtime.socket-budget}). */
    boolean admitsSocket() {
        return hub.socketBudget().admitsSocket();
    }

    /** The refusal of an upgrade the pod's socket memory has no room for: retry later, perhaps on another pod. */
    static SyncError socketBudgetSpent() {
        return new SyncError(
                ErrorCode.WEBSOCKET_CONNECTION_LIMIT,
                "the pod's socket memory budget is spent",
                Map.of("reason", "socket_budget", "retryAfterMs", SOCKET_RETRY_AFTER_MS));
    }
}
