package dev.syncular.server.conformance;

import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.boot.Assembly;
import dev.syncular.server.boot.Realtime;
import dev.syncular.server.boot.RealtimeParts;
import dev.syncular.server.boot.SchemaStores;
import dev.syncular.server.boot.SignalListeners;
import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.realtime.RealtimeChannel;
import dev.syncular.server.realtime.RealtimeHub;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentUrlSigner;
import dev.syncular.server.segments.SegmentUrls;
import dev.syncular.server.storage.ServerStorage;
import dev.syncular.server.storage.StorageBackup;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.sync.AuthLeases;
import dev.syncular.server.sync.BlobService;
import dev.syncular.server.sync.CommitValidator;
import dev.syncular.server.sync.CrdtMerger;
import dev.syncular.server.sync.EngineParts;
import dev.syncular.server.sync.RowValidator;
import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.ScopeResolverOutage;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.SyncLimits;
import dev.syncular.server.sync.Tracing;
import dev.syncular.server.sync.WritePolicy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
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
    /** The instance's stores, in a PostgreSQL schema of its own. */
    final SchemaStores.Stores stores;

    final ServerStorage storage;
    final SegmentStore segments;
    /** §5.9 blobs (capability {@code blobs}): the embedded store in this instance's schema, on its clock. */
    final BlobStore blobStore;
    /** Capability {@code blob-presign}: the embedded store behind the host's object-store and CDN roles. */
    final HostObjectStore objects;

    final BlobService blobs;
    private final ScopeResolver resolver;
    private final SyncLimits limits;
    private final byte[] signingKey;
    private final String segmentBaseUrl;
    /** Blob size cap of conformance instances (the server's default, §5.9.3). */
    static final long BLOB_MAX_BYTES = 100L << 20;

    volatile SyncEngine engine;
    private SegmentUrls signer = SegmentUrls.NONE;
    private WritePolicy policy = WritePolicy.NONE;
    /** §8 (the {@code /instances/{id}/realtime} socket): this instance's own hub, started by the first socket. */
    private RealtimeChannel realtime;

    private CompletableFuture<Void> realtimeStarted;
    /** {@code limits.maxDeltaBytes} and {@code limits.maxPresenceBytes} of the create options. */
    final long maxDeltaBytes;

    final long maxPresenceBytes;
    final AtomicLong clock;
    final Map<String, Map<String, List<String>>> allowed = new ConcurrentHashMap<>();
    final AtomicBoolean resolverFailing = new AtomicBoolean();
    /** {@code setResolverOutage}: the resolver signals an outage (§7.3.3), which leases may serve. */
    final AtomicBoolean resolverOutage = new AtomicBoolean();
    /** {@code failNextIdempotencyLookup} (capability {@code idempotency-fault}). */
    final AtomicBoolean failNextIdempotencyLookup = new AtomicBoolean();
    /** §7.3 auth leases (capability {@code leases}), or {@code AuthLeases.OFF} when the create options set none. */
    final AuthLeases leases;
    /** §2.1 backup and restore of this instance's storage (capability {@code backup-restore}). */
    final StorageBackup backup;

    /** The §5.10.2 merger registry the instance's pushes merge {@code crdt} columns with. */
    private final CrdtMerger crdtMerger;

    ConformanceInstance(
            String id,
            String partition,
            CompiledSchema schema,
            SchemaStores.Stores stores,
            SyncLimits limits,
            long nowMs,
            Long signedUrlTtlSeconds,
            String segmentBaseUrl,
            long maxDeltaBytes,
            long maxPresenceBytes,
            CrdtMerger crdtMerger,
            Long leaseTtlMs) {
        this.crdtMerger = crdtMerger;
        this.stores = stores;
        this.backup = stores.backup();
        ServerStorage storage = stores.storage();
        SegmentStore segments = stores.segments();
        BlobStore blobStore = stores.blobs();
        this.maxDeltaBytes = maxDeltaBytes;
        this.maxPresenceBytes = maxPresenceBytes;
        this.id = id;
        this.partition = partition;
        this.schema = schema;
        this.storage = storage;
        this.segments = segments;
        this.clock = new AtomicLong(nowMs);
        this.resolver = (actor, p) -> resolverFailing.get()
                ? Uni.createFrom().failure(new IllegalStateException("resolver failing"))
                // §7.3.3: an outage is a signal, not a throw
                : resolverOutage.get()
                        ? Uni.createFrom().failure(new ScopeResolverOutage())
                        : Uni.createFrom().item(allowed.getOrDefault(actor, Map.of()));
        byte[] leaseKey = new byte[32];
        new SecureRandom().nextBytes(leaseKey);
        this.leases = leaseTtlMs == null
                ? AuthLeases.OFF
                : new AuthLeases(storage.authLeases(leaseKey), leaseTtlMs, clock::get);
        this.limits = limits;
        this.signingKey = new byte[32];
        new SecureRandom().nextBytes(signingKey);
        this.segmentBaseUrl = segmentBaseUrl;
        this.blobStore = blobStore;
        this.objects = new HostObjectStore(blobStore, signingKey, id, clock::get);
        this.blobs = Assembly.blobService(
                objects,
                storage,
                resolver,
                SchemaWindow.single(schema),
                clock::get,
                BLOB_MAX_BYTES,
                Duration.ofHours(24));
        setSignedUrlTtl(signedUrlTtlSeconds);
    }

    /**
     * (Re)builds the engine; signed segment URLs (§5.4) only when a TTL is set (capability {@code signed-urls}). A TTL
     * of zero or less mints URLs born expired ({@code urlExpiresAtMs} at or before the instance clock), which a §5.4
     * client refuses with {@code sync.segment_expired} without fetching.
     */
    void setSignedUrlTtl(Long ttlSeconds) {
        SegmentUrls signer = ttlSeconds == null
                ? SegmentUrls.NONE
                : new SegmentUrlSigner(
                        signingKey,
                        segmentBaseUrl,
                        Math.max(0, Math.min(ttlSeconds, SegmentUrlSigner.MAX_TTL_MS / 1000)) * 1000);
        this.signer = signer;
        rebuildEngine();
    }

    /**
     * Installs the §6.7 row validators ({@code installValidators}; empty clears them) or the §6.8 whole-commit
     * validators ({@code installCommitValidator}) through the same declarative rules the server reads from
     * {@code syncular.policy.file}, and rebuilds the engine with them.
     */
    synchronized void installPolicy(Map<String, List<RowValidator>> rows, List<CommitValidator> commits) {
        policy = new WritePolicy(
                rows == null ? policy.rowValidators() : rows,
                commits == null ? policy.commitValidators() : commits,
                policy.planners());
        rebuildEngine();
    }

    private synchronized void rebuildEngine() {
        // §6.3 idempotency-fault: the engine's storage fails its next idempotency lookup once armed
        SyncStorage faulty = new IdempotencyLookupFault(storage, failNextIdempotencyLookup);
        this.engine = Assembly.engine(EngineParts.builder(SchemaWindow.single(schema), faulty, segments, resolver)
                .limits(limits)
                .clock(clock::get)
                .merger(crdtMerger)
                .urls(signer)
                .blobs(objects)
                .policy(policy)
                .leases(leases)
                .build());
    }

    public String id() {
        return id;
    }

    /**
     * The instance's realtime channel: a hub of its own on the instance's storage (its own LISTEN connection
     * and NOTIFY channels, named after the instance's PostgreSQL schema), with the instance's limits, scope
     * table and engine. Created and started on first use; {@link #realtimeStarted()} completes once it listens.
     */
    synchronized RealtimeChannel realtime(
            Vertx vertx, long maxRequestBytes, BufferBudget budget, SignalListeners listeners) {
        if (realtime == null) {
            String podId = "syncular-conformance-" + id;
            var settings = new RealtimeHub.Settings(
                    podId,
                    maxDeltaBytes,
                    64,
                    true,
                    maxPresenceBytes,
                    Duration.ofSeconds(30),
                    clock::get,
                    1L << 20,
                    Duration.ofSeconds(30),
                    0,
                    1,
                    0,
                    RealtimeHub.NO_SOCKET_BUDGET);
            Realtime built = Assembly.realtime(new RealtimeParts(
                    settings,
                    storage,
                    SchemaWindow.single(schema),
                    vertx,
                    listeners.named(podId),
                    new SimpleMeterRegistry(),
                    resolver,
                    () -> engine,
                    maxRequestBytes,
                    budget,
                    Tracing.OFF));
            realtimeStarted = built.hub().start();
            realtime = built.channel();
        }
        return realtime;
    }

    synchronized CompletableFuture<Void> realtimeStarted() {
        return realtimeStarted;
    }

    /** Closes the instance's sockets (1001) and LISTEN connection, if a socket ever started them. Blocks. */
    synchronized void closeRealtime() {
        if (realtime != null) {
            realtime.hub().drain(Duration.ZERO);
        }
    }
}
