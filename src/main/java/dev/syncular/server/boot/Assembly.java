package dev.syncular.server.boot;

import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.blobs.BlobsConfig;
import dev.syncular.server.config.LimitsConfig;
import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.realtime.RealtimeChannel;
import dev.syncular.server.realtime.RealtimeConfig;
import dev.syncular.server.realtime.RealtimeHub;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.segments.SegmentsConfig;
import dev.syncular.server.storage.CheckpointDeclaration;
import dev.syncular.server.storage.ReadReplicas;
import dev.syncular.server.storage.ServerStorage;
import dev.syncular.server.storage.SignalListener;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.storage.postgres.PostgresSignalListener;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.sync.BlobService;
import dev.syncular.server.sync.EngineParts;
import dev.syncular.server.sync.FairnessConfig;
import dev.syncular.server.sync.ImageBuilds;
import dev.syncular.server.sync.PushRate;
import dev.syncular.server.sync.ResponseMemory;
import dev.syncular.server.sync.RoundAdmission;
import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.SyncLimits;
import io.quarkus.runtime.configuration.MemorySize;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.pgclient.PgConnectOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;

/**
 * Builds the engine, the realtime hub and channel, and the blob service, for the production pod and the
 * conformance host alike; see the package description.
 */
public final class Assembly {
    private Assembly() {}

    /** PostgreSQL storage in {@code pgSchema} on {@code pool}, with the default settings (a conformance instance's). */
    public static ServerStorage storage(Pool pool, String pgSchema) {
        return new PostgresSyncStorage(pool, pgSchema, PostgresSyncStorage.Settings.DEFAULTS);
    }

    /** The engine over {@code parts}: the one constructor call of {@link SyncEngine} above {@code sync}. */
    public static SyncEngine engine(EngineParts parts) {
        return new SyncEngine(parts);
    }

    /**
     * {@code parts} with what {@code syncular.*} says of the engine: the limits, the §2.4 checkpoints this build
     * declares, how §5.3 SQLite images are built (on {@code imageBuilds}), and the round admission limits ({@code syncular.fairness.*},
     * with the pod's {@code pushRate}) reported to {@code fairness}.
     */
    public static EngineParts.Builder configured(
            EngineParts.Builder parts,
            LimitsConfig limits,
            List<CheckpointDeclaration> checkpoints,
            SegmentsConfig segments,
            FairnessConfig f,
            RoundAdmission.Listener fairness,
            Executor imageBuilds,
            PushRate pushRate,
            Vertx vertx) {
        return parts.limits(limits(limits))
                .checkpoints(checkpoints)
                .images(new ImageBuilds(segments.sqliteImages(), imageBuilds, segments.imageBuildsPerPartition()))
                .admission(new RoundAdmission(
                        new RoundAdmission.Limits(
                                f.maxRoundsPerActor(),
                                f.maxRoundsPerPartition(),
                                f.maxPushOperationsPerActor(),
                                f.maxRounds(),
                                f.maxBootstrapsPerPartition(),
                                f.maxBootstraps(),
                                f.retryAfter()),
                        pushRate,
                        fairness,
                        new TimerPacing(vertx, f.refusalHold().toMillis())));
    }

    /** The push rates {@code syncular.fairness.push-*} set (issue 45), whole until {@link PushRate#share}d. */
    public static PushRate pushRate(FairnessConfig f) {
        return new PushRate(
                new PushRate.Limits(
                        f.pushOperationsPerSecondPerPartition(),
                        f.pushBytesPerSecondPerPartition().asLongValue(),
                        f.pushOperationsPerSecondPerActor(),
                        f.pushBytesPerSecondPerActor().asLongValue(),
                        f.pushBurst()),
                System::nanoTime);
    }

    /**
     * The pod's buffer budget as the memory planned responses draw from: request bodies, socket rounds and planned
     * responses count against one pod-wide limit ({@code syncular.limits.buffer-budget}).
     */
    public static ResponseMemory responseMemory(BufferBudget budget) {
        return new ResponseMemory() {
            @Override
            public boolean take(long bytes) {
                return budget.take(bytes);
            }

            @Override
            public void give(long bytes) {
                budget.give(bytes);
            }
        };
    }

    /** {@code syncular.limits.*} as the engine's limits. */
    public static SyncLimits limits(LimitsConfig l) {
        return new SyncLimits(
                l.maxOperationsPerRequest(),
                (int) l.inlineSegmentMaxBytes().asLongValue(),
                l.segmentTtl().toMillis(),
                l.maxSubscriptionsPerRequest(),
                l.maxResponseBytes().asLongValue(),
                l.maxRowBytes().asLongValue(),
                l.maxValueBytes().asLongValue());
    }

    /** The backfill checkpoints this build declares (§2.4), from {@code syncular.checkpoints}. */
    public static List<CheckpointDeclaration> checkpoints(SyncularConfig config) {
        List<CheckpointDeclaration> out = new ArrayList<>();
        for (SyncularConfig.Checkpoint c : config.checkpoints().orElse(List.of())) {
            out.add(new CheckpointDeclaration(c.partition(), c.name(), c.schemaVersion()));
        }
        return out;
    }

    /** The §5.9 blob service over {@code store}. */
    public static BlobService blobService(
            BlobStore store,
            SyncStorage storage,
            ScopeResolver resolver,
            SchemaWindow window,
            LongSupplier clockMs,
            long maxBytes,
            Duration orphanGrace) {
        return new BlobService(store, storage, resolver, window, clockMs, maxBytes, orphanGrace);
    }

    /** The §5.9 blob service with {@code syncular.blobs.*}'s size cap and orphan grace, on the wall clock. */
    public static BlobService blobService(
            BlobsConfig config, BlobStore store, SyncStorage storage, ScopeResolver resolver, SchemaWindow window) {
        return blobService(
                store,
                storage,
                resolver,
                window,
                System::currentTimeMillis,
                config.maxBytes().asLongValue(),
                config.orphanGrace());
    }

    /** A pod's hub settings from {@code syncular.realtime.*} (§8.8), on the wall clock. */
    public static RealtimeHub.Settings realtimeSettings(RealtimeConfig c, String podId) {
        return new RealtimeHub.Settings(
                podId,
                c.maxDeltaBytes().asLongValue(),
                c.maxUnackedDeltas(),
                c.presenceEnabled(),
                c.maxPresenceBytes().asLongValue(),
                c.heartbeatInterval(),
                System::currentTimeMillis,
                c.outboundBufferBytes().asLongValue(),
                c.outboundStuckTimeout(),
                c.presenceRate(),
                c.presenceBurst(),
                c.fanoutBytesPerSecondPerPartition().asLongValue(),
                c.socketBudget()
                        .map(MemorySize::asLongValue)
                        .orElse(RealtimeHub.defaultSocketBudget(
                                Runtime.getRuntime().maxMemory())));
    }

    /**
     * A hub's listening connection to the PostgreSQL storage's signal channels: {@code hosts} are the connection
     * options of each database host in the datasource's order (the pool's, {@code BoundedPgPool#listenOptions}); it
     * listens on the only one or, when there are more, on the one that accepts writes.
     */
    public static SignalListener signalListener(Vertx vertx, List<PgConnectOptions> hosts) {
        return new PostgresSignalListener(vertx, hosts);
    }

    /**
     * A hub's commit listener that tells {@code replicas} the commits the primary announced and when announcements
     * were lost (their freshness rule, docs/SCALING.md "Reads from replicas").
     */
    public static RealtimeHub.CommitListener announcements(ReadReplicas replicas) {
        return new RealtimeHub.CommitListener() {
            @Override
            public void committed(String partition, long seq) {
                replicas.announced(partition, seq);
            }

            @Override
            public void partitionReset(String partition) {}

            @Override
            public void notificationsLost() {
                replicas.announcementsLost();
            }
        };
    }

    /**
     * A hub and the channel its sockets are served by. The hub asks the engine {@code parts.engine()} supplies at
     * that moment whether it serves a partition (§2.4), so an engine rebuilt later (the conformance host's) is
     * the one asked.
     */
    public static Realtime realtime(RealtimeParts parts) {
        RealtimeHub hub = new RealtimeHub(
                parts.settings(),
                parts.storage(),
                parts.storage(),
                parts.window(),
                parts.vertx(),
                parts.listener(),
                parts.registry(),
                partition -> parts.engine().get().serves(partition),
                parts.tracing());
        RealtimeChannel channel = new RealtimeChannel(
                hub,
                parts.storage(),
                parts.resolver(),
                parts.window(),
                parts.engine(),
                parts.maxRequestBytes(),
                parts.storage(),
                parts.budget());
        return new Realtime(hub, channel);
    }
}
