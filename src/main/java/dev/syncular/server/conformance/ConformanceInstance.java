package dev.syncular.server.conformance;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.segments.postgres.PostgresSegmentStore;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.SyncLimits;
import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One conformance-host server instance: a real engine over real PostgreSQL storage and segment store, in a
 * PostgreSQL schema of its own, with its own schema, partition, limits and the three host-controlled parts
 * (the contract's only test doubles): the allowed-scope table, a failing-resolver switch and a virtual clock.
 */
public final class ConformanceInstance {
    final String id;
    final String partition;
    final CompiledSchema schema;
    final PostgresSyncStorage storage;
    final PostgresSegmentStore segments;
    final SyncEngine engine;
    final AtomicLong clock;
    final Map<String, Map<String, List<String>>> allowed = new ConcurrentHashMap<>();
    final AtomicBoolean resolverFailing = new AtomicBoolean();

    ConformanceInstance(String id, String partition, CompiledSchema schema, PostgresSyncStorage storage,
            PostgresSegmentStore segments, SyncLimits limits, long nowMs) {
        this.id = id;
        this.partition = partition;
        this.schema = schema;
        this.storage = storage;
        this.segments = segments;
        this.clock = new AtomicLong(nowMs);
        ScopeResolver resolver = (actor, p) -> resolverFailing.get()
                ? Uni.createFrom().failure(new IllegalStateException("resolver failing"))
                : Uni.createFrom().item(allowed.getOrDefault(actor, Map.of()));
        this.engine = new SyncEngine(SchemaWindow.single(schema), storage, segments, resolver, limits, clock::get);
    }

    public String id() {
        return id;
    }
}
