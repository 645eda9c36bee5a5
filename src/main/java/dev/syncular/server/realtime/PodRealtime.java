package dev.syncular.server.realtime;

import dev.syncular.server.config.BoundedPgPool;
import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.ops.ScopeResolverFailures;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.SyncEngine;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

/**
 * The pod's realtime: its {@link RealtimeHub} on the application's storage, the {@link RealtimeChannel} the
 * {@code <mount>/realtime} socket serves, the per-pod limits (§8.8) and the lifecycle — the hub starts with the
 * application and drains at the start of its shutdown.
 */
@ApplicationScoped
public class PodRealtime {
    private final SyncularConfig.Realtime config;
    private final RealtimeHub hub;
    private final RealtimeChannel channel;

    @Inject
    public PodRealtime(SyncularConfig config, PostgresSyncStorage storage, SchemaWindow window, Vertx vertx,
            MeterRegistry registry, Pool pool, ScopeResolver resolver, SyncEngine engine, ScopeResolverFailures failures,
            BufferBudget budget, BoundedPgPool datasource) {
        this.config = config.realtime();
        String podId = RealtimeHub.podId(System.getenv("HOSTNAME"));
        this.hub = new RealtimeHub(new RealtimeHub.Settings(podId, datasource.listenOptions(podId),
                this.config.maxDeltaBytes().asLongValue(), this.config.maxUnackedDeltas(),
                this.config.presenceEnabled(), this.config.maxPresenceBytes().asLongValue(),
                this.config.heartbeatInterval(), System::currentTimeMillis,
                this.config.outboundBufferBytes().asLongValue(), this.config.outboundStuckTimeout()), storage, window, vertx, pool, registry,
                engine::serves);
        this.channel = new RealtimeChannel(hub, storage, failures.observe(resolver), window, () -> engine,
                config.maxRequestBytes().asLongValue(), budget);
    }

    void start(@Observes StartupEvent event) {
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
}
