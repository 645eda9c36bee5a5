package dev.syncular.server.sync;

import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentUrls;
import dev.syncular.server.storage.CheckpointDeclaration;
import dev.syncular.server.storage.ReadReplicas;
import dev.syncular.server.storage.SyncStorage;
import java.util.List;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Everything a {@link SyncEngine} is built from. Every optional part has an explicit "off" value, never
 * {@code null}; {@link #builder} starts from those.
 *
 * @param window      the served schema versions (§9)
 * @param storage     the partition log, client records and gates
 * @param segments    the §5 segment store
 * @param resolver    the host's {@code resolveScopes} (§3.2)
 * @param limits      request and response caps
 * @param clockMs     the engine's clock
 * @param merger      the §5.10.2 CRDT mergers ({@link CrdtMerger#NONE}: no {@code crdt} column merges)
 * @param checkpoints the backfill checkpoints this process declares: it may serve a partition while they are
 *                    pending, every other process refuses (§2.4)
 * @param observer    told of rounds, commits, pulled rows, segment bytes and serve-gate refusals (metrics, the
 *                    admin event tail; {@link SyncObserver#NONE})
 * @param urls        mints §5.4 segment URLs for clients advertising {@code accept} bit 3 ({@link SegmentUrls#NONE}:
 *                    none)
 * @param images      how §5.3 SQLite images are built: whether, on which executor, how many of one partition at once
 * @param blobs       the blob store the §5.9.6 push-time existence check consults ({@link BlobStore#NONE}: every
 *                    upsert referencing a blob is rejected with {@code blob.not_found})
 * @param policy      the host's row and whole-commit validators and reaction planners, §6.7–§6.9
 *                    ({@link WritePolicy#NONE})
 * @param leases      §7.3 auth leases ({@link AuthLeases#OFF}: no {@code LEASE} frame, no lookups)
 * @param admission   the per-actor / per-partition concurrency limits every round is admitted against
 *                    ({@link RoundAdmission#NONE}: none)
 * @param tracing     the spans of rounds, pushes, pulls, segment builds and downloads ({@link Tracing#OFF}: none)
 * @param replicas    the hot standbys pull-only rounds may read from ({@link ReadReplicas#NONE}: the primary only)
 * @param queries     the registered queries §6.7 / §6.8 {@code queryAuthoritative} runs inside the push transaction
 *                    ({@link RegisteredQueries#NONE}: none, every call fails)
 * @param memory      the pod-wide memory planned responses draw from ({@link ResponseMemory#NONE}: no pod-wide
 *                    limit)
 */
public record EngineParts(
        SchemaWindow window,
        SyncStorage storage,
        SegmentStore segments,
        ScopeResolver resolver,
        SyncLimits limits,
        LongSupplier clockMs,
        CrdtMerger merger,
        List<CheckpointDeclaration> checkpoints,
        SyncObserver observer,
        SegmentUrls urls,
        ImageBuilds images,
        BlobStore blobs,
        WritePolicy policy,
        AuthLeases leases,
        RoundAdmission admission,
        Tracing tracing,
        ReadReplicas replicas,
        RegisteredQueries queries,
        ResponseMemory memory) {

    public EngineParts {
        Objects.requireNonNull(window, "window");
        Objects.requireNonNull(storage, "storage");
        Objects.requireNonNull(segments, "segments");
        Objects.requireNonNull(resolver, "resolver");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(clockMs, "clockMs");
        Objects.requireNonNull(merger, "merger");
        checkpoints = List.copyOf(checkpoints);
        Objects.requireNonNull(observer, "observer");
        Objects.requireNonNull(urls, "urls");
        Objects.requireNonNull(blobs, "blobs");
        Objects.requireNonNull(policy, "policy");
        Objects.requireNonNull(leases, "leases");
        Objects.requireNonNull(admission, "admission");
        Objects.requireNonNull(memory, "memory");
        Objects.requireNonNull(tracing, "tracing");
        Objects.requireNonNull(replicas, "replicas");
        Objects.requireNonNull(queries, "queries");
    }

    /**
     * The parts every engine needs; everything else starts off: default limits, the wall clock, no CRDT merges,
     * no checkpoints, no observer, no §5.4 URLs, SQLite images built, no blob store, no write policy, no leases,
     * no fault, no admission limits, no spans, no registered queries.
     */
    public static Builder builder(
            SchemaWindow window, SyncStorage storage, SegmentStore segments, ScopeResolver resolver) {
        return new Builder(window, storage, segments, resolver);
    }

    /** Collects the parts; {@link #build()} checks them. */
    public static final class Builder {
        private final SchemaWindow window;
        private final SyncStorage storage;
        private final SegmentStore segments;
        private final ScopeResolver resolver;
        private SyncLimits limits = SyncLimits.DEFAULTS;
        private LongSupplier clockMs = System::currentTimeMillis;
        private CrdtMerger merger = CrdtMerger.NONE;
        private List<CheckpointDeclaration> checkpoints = List.of();
        private SyncObserver observer = SyncObserver.NONE;
        private SegmentUrls urls = SegmentUrls.NONE;
        private ImageBuilds images = ImageBuilds.DEFAULT;
        private BlobStore blobs = BlobStore.NONE;
        private WritePolicy policy = WritePolicy.NONE;
        private AuthLeases leases = AuthLeases.OFF;
        private RoundAdmission admission = RoundAdmission.NONE;
        private ResponseMemory memory = ResponseMemory.NONE;
        private Tracing tracing = Tracing.OFF;
        private ReadReplicas replicas = ReadReplicas.NONE;
        private RegisteredQueries queries = RegisteredQueries.NONE;

        private Builder(SchemaWindow window, SyncStorage storage, SegmentStore segments, ScopeResolver resolver) {
            this.window = window;
            this.storage = storage;
            this.segments = segments;
            this.resolver = resolver;
        }

        public Builder limits(SyncLimits limits) {
            this.limits = limits;
            return this;
        }

        public Builder clock(LongSupplier clockMs) {
            this.clockMs = clockMs;
            return this;
        }

        public Builder merger(CrdtMerger merger) {
            this.merger = merger;
            return this;
        }

        public Builder checkpoints(List<CheckpointDeclaration> checkpoints) {
            this.checkpoints = checkpoints;
            return this;
        }

        public Builder observer(SyncObserver observer) {
            this.observer = observer;
            return this;
        }

        public Builder urls(SegmentUrls urls) {
            this.urls = urls;
            return this;
        }

        public Builder images(ImageBuilds images) {
            this.images = images;
            return this;
        }

        public Builder blobs(BlobStore blobs) {
            this.blobs = blobs;
            return this;
        }

        public Builder policy(WritePolicy policy) {
            this.policy = policy;
            return this;
        }

        public Builder leases(AuthLeases leases) {
            this.leases = leases;
            return this;
        }

        public Builder memory(ResponseMemory memory) {
            this.memory = memory;
            return this;
        }

        public Builder admission(RoundAdmission admission) {
            this.admission = admission;
            return this;
        }

        public Builder tracing(Tracing tracing) {
            this.tracing = tracing;
            return this;
        }

        public Builder replicas(ReadReplicas replicas) {
            this.replicas = replicas;
            return this;
        }

        public Builder queries(RegisteredQueries queries) {
            this.queries = queries;
            return this;
        }

        public EngineParts build() {
            return new EngineParts(
                    window,
                    storage,
                    segments,
                    resolver,
                    limits,
                    clockMs,
                    merger,
                    checkpoints,
                    observer,
                    urls,
                    images,
                    blobs,
                    policy,
                    leases,
                    admission,
                    tracing,
                    replicas,
                    queries,
                    memory);
        }
    }
}
