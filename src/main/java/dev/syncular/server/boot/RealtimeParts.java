package dev.syncular.server.boot;

import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.realtime.RealtimeHub;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.ServerStorage;
import dev.syncular.server.storage.SignalListener;
import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.Tracing;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Vertx;
import java.util.function.Supplier;

/**
 * What {@link Assembly#realtime} builds a hub and its channel from.
 *
 * @param settings        the hub's limits (§8.8) and pod id
 * @param storage         the storage the hub reads notified commits from, whose realtime signals it hears and sends
 *                        presence on, and which classifies its transient failures for the socket rounds
 * @param window          the served schema versions
 * @param vertx           the hub's timers
 * @param listener        the hub's listening connection to the storage's signal channels
 * @param registry        where the hub's metrics go
 * @param resolver        resolves a connection's registrations (§8.1)
 * @param engine          the engine socket rounds (§8.7) run on, asked at each use
 * @param maxRequestBytes the cap of a socket round's request
 * @param budget          the process's buffer budget
 * @param tracing         the fan-out's spans ({@link Tracing#OFF}: none)
 */
public record RealtimeParts(
        RealtimeHub.Settings settings,
        ServerStorage storage,
        SchemaWindow window,
        Vertx vertx,
        SignalListener listener,
        MeterRegistry registry,
        ScopeResolver resolver,
        Supplier<SyncEngine> engine,
        long maxRequestBytes,
        BufferBudget budget,
        Tracing tracing) {}
