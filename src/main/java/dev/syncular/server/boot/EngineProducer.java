package dev.syncular.server.boot;

import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.blobs.BlobsConfig;
import dev.syncular.server.blobs.postgres.PostgresBlobStore;
import dev.syncular.server.blobs.s3.S3BlobStore;
import dev.syncular.server.config.LimitsConfig;
import dev.syncular.server.config.StoreKind;
import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.crdt.yjs.YjsDocMerger;
import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.observability.FairnessMetrics;
import dev.syncular.server.observability.OperationalEvents;
import dev.syncular.server.observability.ReactionMetrics;
import dev.syncular.server.observability.ScopeResolverFailures;
import dev.syncular.server.observability.ServeGateMetrics;
import dev.syncular.server.observability.SyncMetrics;
import dev.syncular.server.observability.TenantLoad;
import dev.syncular.server.observability.VisibilityLag;
import dev.syncular.server.realtime.RealtimeChannel;
import dev.syncular.server.realtime.RealtimeConfig;
import dev.syncular.server.realtime.RealtimeHub;
import dev.syncular.server.s3.S3Config;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaException;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentsConfig;
import dev.syncular.server.segments.SignedUrlsConfig;
import dev.syncular.server.segments.postgres.PostgresSegmentStore;
import dev.syncular.server.segments.s3.S3SegmentStore;
import dev.syncular.server.storage.ReadReplicas;
import dev.syncular.server.storage.ServerStorage;
import dev.syncular.server.storage.StorageConfig;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.sync.BlobService;
import dev.syncular.server.sync.CrdtMergerRegistry;
import dev.syncular.server.sync.CrdtTypeMerger;
import dev.syncular.server.sync.EngineParts;
import dev.syncular.server.sync.FairnessConfig;
import dev.syncular.server.sync.LeasesConfig;
import dev.syncular.server.sync.PushRate;
import dev.syncular.server.sync.RegisteredQueries;
import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.SyncObserver;
import dev.syncular.server.sync.Tracing;
import dev.syncular.server.sync.WritePolicy;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.quarkus.runtime.configuration.MemorySize;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jboss.logging.Logger;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;

/**
 * The pod's beans from configuration: the running schema ({@code syncular.schema.path} or the bundled
 * quickstart schema), the segment and blob stores on Quarkus's reactive {@link Pool} (in
 * {@code syncular.storage.pg-schema}) or S3, and — assembled by the composition root ({@link Assembly}) over the
 * storage bean ({@code boot.StorageProducer}) and the host's {@link ScopeResolver} bean — the engine, the realtime
 * hub and channel, and the blob service.
 *
 * <p>Producers only: the tables, buckets and the hub are started by {@link StartupSequence}.
 */
@ApplicationScoped
public class EngineProducer {
    private static final Logger LOG = Logger.getLogger(EngineProducer.class);

    /**
     * The §5.10.2 merger registry: the built-in {@code yjs-doc} merger plus every CDI bean implementing
     * {@link CrdtTypeMerger} (how a team building its own image adds a {@code crdtType}).
     */
    @Produces
    @Singleton
    CrdtMergerRegistry crdtMergers(Instance<CrdtTypeMerger> hostMergers) {
        CrdtMergerRegistry registry = CrdtMergerRegistry.of(
                List.of(new YjsDocMerger()), hostMergers.stream().toList());
        LOG.infof("CRDT mergers (crdtType): %s", new TreeSet<>(registry.crdtTypes()));
        return registry;
    }

    /** The served schema, compiled against the registry's types: an unknown {@code crdtType} stops start-up (§5.10.1). */
    @Produces
    @Singleton
    SchemaWindow schemaWindow(SchemaConfig config, CrdtMergerRegistry mergers) {
        CompiledSchema current;
        try {
            current = loadSchema(config, mergers.crdtTypes());
        } catch (SchemaException e) {
            throw StartupErrors.invalidSchema(e, schemaSource(config));
        }
        SchemaWindow window = window(current, config.window().orElse(List.of()), mergers.crdtTypes());
        if (window.schemas().size() > 1) {
            LOG.infof(
                    "Schema window (§9): serving schema versions %s, current %d", window.versions(), current.version());
        }
        return window;
    }

    /**
     * The §9 window from {@code syncular.schema.window}: each older document compiled and checked against the current
     * schema on its own (so a failure names its file), then the whole window, newest first. Every failure stops the
     * start with one {@link ConfigurationException} naming the property, the file and the rule.
     */
    static SchemaWindow window(CompiledSchema current, List<String> paths, Set<String> crdtTypes) {
        List<CompiledSchema> older = new ArrayList<>();
        Map<Integer, String> fileOfVersion = new HashMap<>();
        for (String raw : paths) {
            if (raw == null || raw.isBlank()) {
                continue;
            }
            Path path = Path.of(raw.trim());
            String file = path.toAbsolutePath().toString();
            if (!Files.isRegularFile(path)) {
                throw new ConfigurationException("syncular.schema.window: no schema IR file at " + file);
            }
            CompiledSchema schema;
            try {
                schema = SchemaLoader.load(path, crdtTypes);
            } catch (SchemaException e) {
                throw StartupErrors.invalidWindow(e, file);
            }
            String other = fileOfVersion.putIfAbsent(schema.version(), file);
            if (other != null) {
                throw StartupErrors.invalidWindow(
                        file,
                        "schema version " + schema.version() + " is also the version of " + other
                                + "; each served version needs exactly one document");
            }
            try {
                SchemaWindow.checkOlder(current, schema);
            } catch (SchemaException e) {
                throw StartupErrors.invalidWindow(e, file);
            }
            older.add(schema);
        }
        older.sort(Comparator.comparingInt(CompiledSchema::version).reversed());
        List<CompiledSchema> newestFirst = new ArrayList<>(older.size() + 1);
        newestFirst.add(current);
        newestFirst.addAll(older);
        try {
            return SchemaWindow.of(current, newestFirst);
        } catch (SchemaException e) {
            throw StartupErrors.invalidWindow(e, String.valueOf(fileOfVersion.values()));
        }
    }

    /** Where the running schema comes from, for start-up messages. */
    static String schemaSource(SchemaConfig config) {
        return config.path()
                .filter(p -> !p.isBlank())
                .map(p -> Path.of(p.trim()).toAbsolutePath().toString())
                .orElse("bundled " + SchemaConfig.BUNDLED_SCHEMA_RESOURCE + " (syncular.schema.path unset)");
    }

    /**
     * {@code syncular.segments.store}: {@code embedded} keeps segments in PostgreSQL (zero setup); {@code s3}
     * puts them in {@code syncular.s3.bucket} through the Quarkus S3 extension's asynchronous client (on the Netty
     * HTTP client), which is only looked up then.
     */
    @Produces
    @Singleton
    SegmentStore segmentStore(
            Pool pool,
            SegmentsConfig config,
            S3Config bucket,
            StorageConfig storage,
            Instance<S3AsyncClient> s3,
            Instance<S3Presigner> presigner) {
        if (config.store() == StoreKind.S3) {
            // the bucket is checked at start-up (S3Config.problems)
            return new S3SegmentStore(
                    s3.get(),
                    presigner.get(),
                    bucket.bucket().get(),
                    bucket.keyPrefix().orElse(""));
        }
        long cacheBytes =
                config.cache().map(MemorySize::asLongValue).orElseGet(PostgresSegmentStore::defaultCacheBytes);
        return new PostgresSegmentStore(pool, storage.pgSchema(), cacheBytes);
    }

    /** The pod's push rates (issue 45), shared with the tenant-load job that divides them among the live pods. */
    @Produces
    @Singleton
    PushRate pushRate(FairnessConfig config) {
        return Assembly.pushRate(config);
    }

    @Produces
    @Singleton
    SyncEngine engine(
            SchemaWindow window,
            ServerStorage storage,
            SegmentStore segments,
            ScopeResolver resolver,
            SyncularConfig config,
            LimitsConfig limits,
            SegmentsConfig segmentsConfig,
            FairnessConfig fairness,
            SignedUrlsConfig signedUrls,
            S3Config s3,
            StorageConfig storageConfig,
            LeasesConfig leases,
            ServeGateMetrics gateMetrics,
            SyncMetrics syncMetrics,
            OperationalEvents events,
            BlobStore blobs,
            ScopeResolverFailures failures,
            CrdtMergerRegistry mergers,
            WritePolicy policy,
            ReactionMetrics reactionMetrics,
            FairnessMetrics fairnessMetrics,
            Tracing tracing,
            ReadReplicas replicas,
            RegisteredQueries queries,
            BufferBudget budget,
            BlockingPools pools,
            TenantLoad tenantLoad,
            VisibilityLag visibility,
            PushRate pushRate,
            Vertx vertx) {
        return Assembly.engine(Assembly.configured(
                        EngineParts.builder(window, storage, segments, failures.observe(resolver)),
                        limits,
                        Assembly.checkpoints(config),
                        segmentsConfig,
                        fairness,
                        fairnessMetrics,
                        pools.images(),
                        pushRate,
                        vertx)
                .merger(mergers)
                .observer(SyncObserver.of(syncMetrics, gateMetrics, events, reactionMetrics, tenantLoad, visibility))
                .urls(ConfiguredParts.urls(signedUrls, s3, storageConfig, config, segments))
                .blobs(blobs)
                .policy(policy)
                .leases(ConfiguredParts.leases(leases, storageConfig, storage))
                .tracing(tracing)
                .replicas(replicas)
                .queries(queries)
                .memory(Assembly.responseMemory(budget))
                .build());
    }

    /**
     * The pod's realtime hub and channel (§8) from {@code syncular.realtime.*}, on the application's storage and
     * engine; {@code realtime.PodRealtime} starts and drains the hub.
     */
    @Produces
    @Singleton
    Realtime realtime(
            SyncularConfig config,
            RealtimeConfig realtimeConfig,
            ServerStorage storage,
            SchemaWindow window,
            Vertx vertx,
            MeterRegistry registry,
            Pool pool,
            ScopeResolver resolver,
            SyncEngine engine,
            ScopeResolverFailures failures,
            BufferBudget budget,
            SignalListeners listeners,
            Tracing tracing,
            ReadReplicas replicas,
            TenantLoad tenantLoad,
            VisibilityLag visibility) {
        String podId = RealtimeHub.podId(System.getenv("HOSTNAME"));
        Realtime built = Assembly.realtime(new RealtimeParts(
                Assembly.realtimeSettings(realtimeConfig, podId),
                storage,
                window,
                vertx,
                listeners.named(podId),
                registry,
                failures.observe(resolver),
                () -> engine,
                config.maxRequestBytes().asLongValue(),
                budget,
                tracing));
        // the read replicas' freshness rule: the commits this pod heard announced (docs/SCALING.md)
        built.hub().addCommitListener(Assembly.announcements(replicas));
        // the loudest tenants: each partition's delta bytes and held presence publishes on this pod
        built.hub().partitionTraffic(new RealtimeHub.PartitionTraffic() {
            @Override
            public void deltaSent(String partition, long bytes) {
                tenantLoad.fanout(partition, bytes);
            }

            @Override
            public void presenceCoalesced(String partition) {
                tenantLoad.presenceCoalesced(partition);
            }

            @Override
            public void deltaVisible(long createdAtMs) {
                visibility.delta(createdAtMs);
            }
        });
        return built;
    }

    @Produces
    @Singleton
    RealtimeHub realtimeHub(Realtime realtime) {
        return realtime.hub();
    }

    @Produces
    @Singleton
    RealtimeChannel realtimeChannel(Realtime realtime) {
        return realtime.channel();
    }

    /**
     * The §5.9 blob store from {@code syncular.blobs.store}: {@code embedded} keeps blobs in PostgreSQL (schema
     * {@code syncular.storage.pg-schema}); {@code s3} uses the S3 extension's asynchronous client and presigner (looked up
     * only then, so other configurations never need S3 credentials) and {@code syncular.s3.bucket}.
     */
    @Produces
    @Singleton
    BlobStore blobStore(
            Pool pool,
            BlobsConfig config,
            S3Config c,
            StorageConfig storage,
            Instance<S3AsyncClient> s3,
            Instance<S3Presigner> presigner) {
        if (config.store() != StoreKind.S3) {
            return new PostgresBlobStore(pool, storage.pgSchema());
        }
        // the bucket (S3Config.problems at start-up) and the §5.4 presign ttl (its constraints) are checked
        return new S3BlobStore(
                s3.get(), presigner.get(), c.bucket().get(), c.keyPrefix().orElse(""), c.presignTtl());
    }

    @Produces
    @Singleton
    BlobService blobService(
            BlobStore store,
            SyncStorage storage,
            ScopeResolver resolver,
            SchemaWindow window,
            BlobsConfig config,
            ScopeResolverFailures failures) {
        return Assembly.blobService(config, store, storage, failures.observe(resolver), window);
    }

    static CompiledSchema loadSchema(SchemaConfig config, Set<String> crdtTypes) {
        if (config.path().isPresent() && !config.path().get().isBlank()) {
            Path path = Path.of(config.path().get().trim());
            if (!Files.isRegularFile(path)) {
                throw new ConfigurationException("syncular.schema.path: no schema IR file at " + path.toAbsolutePath());
            }
            return SchemaLoader.load(path, crdtTypes);
        }
        try (InputStream in = Thread.currentThread()
                .getContextClassLoader()
                .getResourceAsStream(SchemaConfig.BUNDLED_SCHEMA_RESOURCE)) {
            if (in == null) {
                throw new ConfigurationException("bundled schema " + SchemaConfig.BUNDLED_SCHEMA_RESOURCE
                        + " is missing from the classpath; set syncular.schema.path");
            }
            return SchemaLoader.load(in, crdtTypes);
        } catch (IOException e) {
            throw new ConfigurationException("cannot read bundled schema " + SchemaConfig.BUNDLED_SCHEMA_RESOURCE, e);
        }
    }
}
