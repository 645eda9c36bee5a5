package dev.syncular.server.sync;

import dev.syncular.server.errors.SyncError;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.segments.SegmentPublication;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.StoredSegment;
import dev.syncular.server.storage.ChangeToWrite;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.CommitQuery;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.PushOutcome;
import dev.syncular.server.storage.PushReadHint;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.StoredChange;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.Change;
import dev.syncular.server.wire.ColumnDef;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.MediaType;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.MessageEncoder;
import dev.syncular.server.wire.Op;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.PushResultDetails;
import dev.syncular.server.wire.ReqHeader;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.RowCodec;
import dev.syncular.server.wire.RowLayout;
import dev.syncular.server.wire.RowsSegmentWriter;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRef;
import dev.syncular.server.wire.SparseRow;
import dev.syncular.server.wire.SparseRowCodec;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionFrame;
import dev.syncular.server.wire.SubscriptionStatus;
import dev.syncular.server.wire.WireException;
import dev.syncular.server.wire.WireWriter;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongSupplier;

/**
 * The protocol engine behind {@code POST <mount>/sync} and socket rounds (§1.1 "two bindings, one
 * handler"): takes a decoded request message and plans the whole response as frames, which the binding
 * then streams. A request-level failure fails the {@code Uni} with a {@link SyncError}.
 */
public final class SyncEngine {
    /** §1.5: the reserved server-command namespace of {@code clientId}. */
    static final String REMOTE_COMMAND_PREFIX = "[\"remote-command\",";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final SchemaWindow window;
    private final SyncStorage storage;
    private final SegmentStore segments;
    private final ScopeResolver resolver;
    private final SyncLimits limits;
    private final LongSupplier clock;
    private final CrdtMerger merger;
    private final ServeGates gates;
    /** §5.4 descriptor URLs (native HMAC or provider presigned); null = descriptors carry no URL. */
    private final dev.syncular.server.segments.SegmentUrls urls;
    /** The native scheme's verifier, when {@link #urls} is the native signer (signed download route). */
    private final dev.syncular.server.segments.SegmentUrlSigner signer;
    private final java.util.function.Consumer<String> refusals;
    /** §5.3: build SQLite images for clients advertising {@code accept} bit 2 (stored images are served either way). */
    private final boolean buildImages;
    /** Cold image builds in flight, by reuse key: concurrent bootstraps of one key share one build (§5.3). */
    private final java.util.concurrent.ConcurrentHashMap<SegmentStore.ReuseKey,
            java.util.concurrent.CompletableFuture<SegmentStore.Match>> imageBuilds = new java.util.concurrent.ConcurrentHashMap<>();
    private final dev.syncular.server.blobs.BlobStore blobs;

    public SyncEngine(SchemaWindow window, SyncStorage storage, SegmentStore segments, ScopeResolver resolver,
            SyncLimits limits, LongSupplier clockMs) {
        this(window, storage, segments, resolver, limits, clockMs, CrdtMerger.NONE, List.of(), reason -> { });
    }

    /**
     * @param checkpoints the backfill checkpoints this process declares: it may serve a partition while they
     *                    are pending, every other process refuses (§2.4)
     * @param refusals    told the reason of every serve-gate refusal (metrics)
     */
    public SyncEngine(SchemaWindow window, SyncStorage storage, SegmentStore segments, ScopeResolver resolver,
            SyncLimits limits, LongSupplier clockMs, CrdtMerger merger,
            List<dev.syncular.server.storage.CheckpointDeclaration> checkpoints,
            java.util.function.Consumer<String> refusals) {
        this(window, storage, segments, resolver, limits, clockMs, merger, checkpoints, refusals, null);
    }

    /** @param urls mints §5.4 segment URLs for clients advertising {@code accept} bit 3; may be null */
    public SyncEngine(SchemaWindow window, SyncStorage storage, SegmentStore segments, ScopeResolver resolver,
            SyncLimits limits, LongSupplier clockMs, CrdtMerger merger,
            List<dev.syncular.server.storage.CheckpointDeclaration> checkpoints,
            java.util.function.Consumer<String> refusals, dev.syncular.server.segments.SegmentUrls urls) {
        this(window, storage, segments, resolver, limits, clockMs, merger, checkpoints, refusals, urls, true, null);
    }

    /**
     * @param buildImages whether to build §5.3 SQLite images (stored ones are served either way)
     * @param blobs       the blob store the §5.9.6 push-time existence check consults; {@code null} = no blob
     *                    store, so every upsert referencing a blob is rejected with {@code blob.not_found}
     */
    public SyncEngine(SchemaWindow window, SyncStorage storage, SegmentStore segments, ScopeResolver resolver,
            SyncLimits limits, LongSupplier clockMs, CrdtMerger merger,
            List<dev.syncular.server.storage.CheckpointDeclaration> checkpoints,
            java.util.function.Consumer<String> refusals, dev.syncular.server.segments.SegmentUrls urls,
            boolean buildImages, dev.syncular.server.blobs.BlobStore blobs) {
        this.urls = urls;
        this.signer = urls instanceof dev.syncular.server.segments.SegmentUrlSigner native_ ? native_ : null;
        this.buildImages = buildImages;
        this.blobs = blobs;
        this.window = window;
        this.storage = storage;
        this.segments = segments;
        this.resolver = resolver;
        this.limits = limits;
        this.clock = clockMs;
        this.merger = merger;
        this.gates = new ServeGates(window.current().version(), checkpoints);
        this.refusals = refusals;
    }

    public ServeGates gates() {
        return gates;
    }

    private <T> Uni<T> refuse(SyncError refusal) {
        refusals.accept(String.valueOf(refusal.details().get("reason")));
        return Uni.createFrom().failure(refusal);
    }

    /** The serve gate on entry (§2.4): the gate read this request is verified against before release. */
    private Uni<dev.syncular.server.storage.ServeGate> admit(String partition) {
        return storage.readServeGate(partition, gates.runningSchemaVersion()).flatMap(gate -> {
            SyncError refusal = gates.refusal(partition, gate);
            return refusal != null ? refuse(refusal) : Uni.createFrom().item(gate);
        });
    }

    /**
     * Read-verify-refuse: the whole response is planned, then the gate is read again; a refusing gate or a
     * changed token (stored schema version, log epoch) answers {@code sync.schema_not_ready} and nothing of
     * the planned response escapes. Writes already committed stay durable and replay idempotently (§2.3).
     */
    private <T> Uni<T> verified(String partition, dev.syncular.server.storage.ServeGate before, Uni<T> planned) {
        return planned
                .onFailure(e -> e instanceof dev.syncular.server.storage.StorageException se
                        && dev.syncular.server.storage.StorageException.WRITER_FENCE_REJECTED.equals(se.code()))
                .recoverWithUni(e -> refuse(gates.writerFenced(partition)))
                .flatMap(result -> storage.readServeGate(partition, gates.runningSchemaVersion()).flatMap(after -> {
                    SyncError refusal = gates.verify(partition, before, after);
                    return refusal != null ? refuse(refusal) : Uni.createFrom().item(result);
                }));
    }

    public SchemaWindow window() {
        return window;
    }

    /** The bytes of an authorized segment download (§5.5). */
    public record SegmentDownload(String segmentId, byte[] bytes) {
    }

    /** Per-request state: the memoized scope resolution of §3.2 rule 3 and the client's schema. */
    private final class Round {
        final SyncRequestContext ctx;
        final ReqHeader header;
        final CompiledSchema clientSchema;
        final Uni<Optional<Map<String, List<String>>>> allowed;
        /** The highest commit sequence this request's pushes applied or replayed. */
        long lastCommitSeq;
        /** §5.9.6: the blob existence check of the commit being applied. */
        BlobPresence blobs = BlobPresence.NONE;

        Round(SyncRequestContext ctx, ReqHeader header, CompiledSchema clientSchema) {
            this.ctx = ctx;
            this.header = header;
            this.clientSchema = clientSchema;
            this.allowed = resolveOnce(ctx);
        }
    }

    /**
     * §3.2 rule 3: called at most once per request and memoized. A resolver failure is an empty result
     * (pulls revoke, writes are forbidden); a resolved key no table declares fails the whole request.
     */
    private Uni<Optional<Map<String, List<String>>>> resolveOnce(SyncRequestContext ctx) {
        return Uni.createFrom().deferred(() -> resolver.resolveScopes(ctx.actorId(), ctx.partition()))
                .map(Optional::ofNullable)
                .onFailure().recoverWithItem(Optional.empty())
                .invoke(o -> o.ifPresent(m -> EffectiveScopes.validateAllowed(window.current(), m)))
                .memoize().indefinitely();
    }

    public Uni<List<Frame>> handle(SyncRequestContext ctx, Message request) {
        ReqHeader header = (ReqHeader) request.frames().get(0);
        List<PushCommit> pushes = new ArrayList<>();
        List<SubscriptionFrame> subscriptions = new ArrayList<>();
        PullHeader pull = null;
        for (Frame f : request.frames()) {
            if (f instanceof PushCommit c) {
                pushes.add(c);
            } else if (f instanceof PullHeader p) {
                pull = p;
            } else if (f instanceof SubscriptionFrame s) {
                subscriptions.add(s);
            }
        }
        PullHeader pullHeader = pull;
        long now = clock.getAsLong();
        String partition = ctx.partition();
        // One entry read (partition touch + serve gate + client record), one exit round trip (client record
        // upsert when due + the verify read, which also rechecks the horizon of incremental pulls).
        return storage.enterRequest(partition, header.clientId(), gates.runningSchemaVersion(), now).flatMap(entry -> {
            SyncError refusal = gates.refusal(partition, entry.gate());
            if (refusal != null) {
                return refuse(refusal);
            }
            return plan(ctx, header, pushes, pullHeader, subscriptions, entry)
                    .onFailure(e -> e instanceof dev.syncular.server.storage.StorageException se
                            && dev.syncular.server.storage.StorageException.WRITER_FENCE_REJECTED.equals(se.code()))
                    .recoverWithUni(e -> refuse(gates.writerFenced(partition)))
                    .flatMap(planned -> finish(partition, entry.gate(), planned, entry.client(), now));
        });
    }

    /**
     * A planned response: the header and push results, then one section per pulled subscription. Sections
     * stay separate until release so the exit read's horizon can still turn an incremental one into a
     * {@code reset} (§4.6), and the client record is derived from the final sections.
     */
    private final class Planned {
        final Round round;
        final List<Frame> head = new ArrayList<>();
        final List<SubscriptionFrame> subs;
        final boolean pulled;
        final ClientRecord existing;
        final List<List<Frame>> sections = new ArrayList<>();
        /** Per section: an active incremental section, still subject to the horizon recheck. */
        final List<Boolean> incremental = new ArrayList<>();
        /** The registered subscriptions document (§8.1), built once. */
        private String registered;

        /** An early answer (schema floor, epoch reset): no round, no client record. */
        Planned(Frame only) {
            this.round = null;
            this.subs = List.of();
            this.pulled = false;
            this.existing = null;
            head.add(only);
        }

        Planned(Round round, List<SubscriptionFrame> subs, boolean pulled, ClientRecord existing) {
            this.round = round;
            this.subs = subs;
            this.pulled = pulled;
            this.existing = existing;
        }

        /** §4.6: every active incremental section whose request cursor is behind {@code horizonSeq} resets. */
        boolean expire(long horizonSeq) {
            boolean any = false;
            for (int i = 0; i < sections.size(); i++) {
                if (incremental.get(i) && horizonSeq > subs.get(i).cursor()) {
                    sections.set(i, cursorExpired(subs.get(i)));
                    incremental.set(i, false);
                    any = true;
                }
            }
            return any;
        }

        List<Frame> frames() {
            if (sections.isEmpty()) {
                return head;
            }
            List<Frame> out = new ArrayList<>(head);
            for (List<Frame> section : sections) {
                out.addAll(section);
            }
            return out;
        }

        /**
         * §4.5: the record this round leaves — the minimum {@code nextCursor} over the active subscriptions
         * (else the stored cursor) and the registered subscriptions (§8.1); {@code null} for early answers.
         */
        ClientRecord clientRecord(long now) {
            if (round == null) {
                return null;
            }
            long minCursor = Long.MAX_VALUE;
            for (List<Frame> frames : sections) {
                if (((SubStart) frames.get(0)).status() == SubscriptionStatus.ACTIVE) {
                    minCursor = Math.min(minCursor, ((SubEnd) frames.get(frames.size() - 1)).nextCursor());
                }
            }
            long cursor = minCursor != Long.MAX_VALUE ? minCursor : existing != null ? existing.cursor() : -1;
            String subscriptions = existing != null ? existing.subscriptionsJson() : null;
            if (pulled) {
                if (registered == null) {
                    registered = registeredSubscriptions(round, subs);
                }
                subscriptions = registered;
            }
            return new ClientRecord(round.ctx.partition(), round.header.clientId(), round.ctx.actorId(), cursor, now,
                    subscriptions, 3);
        }
    }

    private Uni<Planned> plan(SyncRequestContext ctx, ReqHeader header, List<PushCommit> pushes, PullHeader pullHeader,
            List<SubscriptionFrame> subscriptions, dev.syncular.server.storage.RequestEntry entry) {
        PartitionState state = entry.partition();
        return Uni.createFrom().deferred(() -> {
            // §2.1: the epoch is compared before any other request work.
            boolean resetRequired = header.logEpoch() == null || !header.logEpoch().equals(state.logEpoch());
            CompiledSchema clientSchema = window.forVersion(header.schemaVersion());
            if (clientSchema == null) {
                // §1.6 schema-floor response: nothing else is processed.
                return Uni.createFrom().item(new Planned(new RespHeader(window.oldest().version(),
                        window.current().version(), state.logEpoch(), resetRequired)));
            }
            if (resetRequired) {
                return Uni.createFrom().item(new Planned(new RespHeader(null, null, state.logEpoch(), true)));
            }
            validateRequest(header, pushes, pullHeader, subscriptions, clientSchema);
            Round round = new Round(ctx, header, clientSchema);
            ClientRecord client = entry.client();
            if (client != null && !client.actorId().equals(ctx.actorId())) {
                return Uni.createFrom().failure(new SyncError(ErrorCode.INVALID_CLIENT_ID,
                        "clientId is bound to another actor"));
            }
            Planned planned = new Planned(round, subscriptions, pullHeader != null, client);
            planned.head.add(new RespHeader(null, null, state.logEpoch(), false));
            return pushAll(round, pushes, 0, planned.head)
                    .flatMap(v -> pullHeader == null ? Uni.createFrom().voidItem()
                            : pullAll(round, pullHeader, subscriptions, planned, state))
                    .replaceWith(planned);
        });
    }

    /**
     * The exit of a round: the client record upsert (only when due, see {@link #mustSave}) and then the
     * verify read, in one round trip. That read's horizon is the §4.6 recheck of the incremental sections
     * (each was read before it); a section that fell behind turns into {@code reset}, and if that changes the
     * client record the exit runs again (save, re-read) — so the last gate read always follows every write
     * and every window read. Read-verify-refuse: the gate must still admit and carry the entry gate's token.
     */
    private Uni<List<Frame>> finish(String partition, dev.syncular.server.storage.ServeGate before, Planned planned,
            ClientRecord stored, long now) {
        ClientRecord record = planned.clientRecord(now);
        ClientRecord save = record != null && mustSave(stored, record, now) ? record : null;
        return storage.finishRequest(partition, gates.runningSchemaVersion(), save).flatMap(check -> {
            if (planned.expire(check.horizonSeq())) {
                return finish(partition, before, planned, save != null ? save : stored, now);
            }
            SyncError refusal = gates.verify(partition, before, check.gate());
            return refusal != null ? refuse(refusal) : Uni.createFrom().item(planned.frames());
        });
    }

    /**
     * How stale a client record's {@code updated_at_ms} may get before an otherwise unchanged round rewrites
     * it. A round that changes nothing the record stores (actor, cursor, subscriptions, wire version) skips
     * the upsert unless the stored time is at least this old. Trade-off: the time feeds the retention active
     * window (§4.6, {@code ops.RetentionPolicy}, 14 days by default), so an idle-but-polling client can look
     * up to this much older than it is and leave the window that much earlier — negligible against days —
     * while an unchanged poll costs no write (no WAL flush).
     */
    static final long CLIENT_RECORD_REFRESH_MS = 5 * 60_000L;

    /**
     * How long a stored cursor may trail the client's real one. A round whose only change is a cursor moving
     * forward (from a stored cursor {@code >= 0}) skips the upsert while the record is younger than this: an
     * active client's poll then costs no write and no WAL flush. Safe for §4.6 retention, which prunes only up
     * to the lowest stored cursor of the active clients — a trailing cursor retains more, never less. A cursor
     * moving back (a reset, a re-bootstrap), new subscriptions, a new actor or wire version are written at once.
     */
    static final long CLIENT_CURSOR_REFRESH_MS = 10_000L;

    /**
     * Whether {@code record} must be written over {@code stored} (see {@link #CLIENT_RECORD_REFRESH_MS} and
     * {@link #CLIENT_CURSOR_REFRESH_MS}).
     */
    static boolean mustSave(ClientRecord stored, ClientRecord record, long now) {
        if (stored == null
                || !stored.actorId().equals(record.actorId())
                || !java.util.Objects.equals(stored.wireVersion(), record.wireVersion())
                || !sameJson(stored.subscriptionsJson(), record.subscriptionsJson())) {
            return true;
        }
        long age = now - stored.updatedAtMs();
        if (stored.cursor() == record.cursor()) {
            return age >= CLIENT_RECORD_REFRESH_MS;
        }
        boolean forward = stored.cursor() >= 0 && record.cursor() > stored.cursor();
        return !forward || age >= CLIENT_CURSOR_REFRESH_MS;
    }

    /** JSON equality regardless of formatting and key order (the stored document comes back as jsonb text). */
    static boolean sameJson(String a, String b) {
        if (a == null || b == null || a.equals(b)) {
            return java.util.Objects.equals(a, b);
        }
        try {
            return JSON.readTree(a).equals(JSON.readTree(b));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            return false;
        }
    }

    /** Request-level validation of §1.7 (after a successful decode). */
    private void validateRequest(ReqHeader header, List<PushCommit> pushes, PullHeader pull,
            List<SubscriptionFrame> subs, CompiledSchema clientSchema) {
        if (header.clientId().startsWith(REMOTE_COMMAND_PREFIX)) {
            throw new SyncError(ErrorCode.INVALID_CLIENT_ID, "clientId uses the reserved server-command namespace");
        }
        int ops = 0;
        for (PushCommit c : pushes) {
            ops += c.operations().size();
        }
        if (ops > limits.maxOperationsPerRequest()) {
            throw new SyncError(ErrorCode.TOO_MANY_OPERATIONS, "push exceeds the operation cap",
                    Map.of("operations", ops, "limit", limits.maxOperationsPerRequest()));
        }
        if (pull != null && !pull.accepts(PullHeader.ACCEPT_INLINE_ROWS) && !pull.accepts(PullHeader.ACCEPT_EXTERNAL_ROWS)) {
            throw new SyncError(ErrorCode.INVALID_REQUEST, "pull accepts no rows segment delivery");
        }
        Set<String> ids = new HashSet<>();
        for (SubscriptionFrame s : subs) {
            if (!ids.add(s.id())) {
                throw new SyncError(ErrorCode.INVALID_SUBSCRIPTION, "duplicate subscription id",
                        Map.of("subscriptionId", s.id()));
            }
            TableSchema table = clientSchema.table(s.table());
            if (table == null) {
                throw new SyncError(ErrorCode.UNKNOWN_TABLE, "subscription names an unknown table",
                        Map.of("table", s.table()));
            }
            EffectiveScopes.validateRequested(table, s.scopes());
        }
    }

    // ------------------------------------------------------------------------------------------- push

    private Uni<Void> pushAll(Round round, List<PushCommit> pushes, int index, List<Frame> out) {
        if (index == pushes.size()) {
            return Uni.createFrom().voidItem();
        }
        return push(round, pushes.get(index)).flatMap(frames -> {
            out.addAll(frames);
            return pushAll(round, pushes, index + 1, out);
        });
    }

    /** §2.3, §6.3, §6.4: optimistic idempotency lookup, then one serialized transaction per commit. */
    private Uni<List<Frame>> push(Round round, PushCommit commit) {
        String partition = round.ctx.partition();
        String clientId = round.header.clientId();
        // §6.3: every push is serialized by partition and its idempotency key checked under that boundary;
        // host scope resolution runs before the lock is taken (never call host code under it), and the
        // push transaction re-evaluates the serve gate under the lock (§2.4).
        // §5.9.6: blob lookups before the lock, re-checked against the orphan sweep under it.
        // The transaction's first reads — the locked idempotency lookup and the row prefetch — are announced as
        // a read hint, so the storage may read them ahead with other queued pushes' reads (still under the lock).
        return round.allowed.flatMap(allowed -> BlobPresence.precheck(blobs, storage, partition, window.current(),
                round.clientSchema, commit).flatMap(blobCheck -> {
                    Map<String, List<String>> prefetchIds = prefetchIds(commit);
                    PushReadHint hint = new PushReadHint(clientId, commit.clientCommitId(), prefetchIds);
                    return storage.inPartitionTransaction(partition, hint, tx -> tx
                .readServeGate(gates.runningSchemaVersion())
                .flatMap(gate -> {
                    SyncError refusal = gates.refusal(partition, gate);
                    if (refusal != null) {
                        return this.<io.smallrye.mutiny.tuples.Tuple2<Optional<PushOutcome>,
                                Map<String, Optional<StoredRow>>>>refuse(refusal);
                    }
                    // The idempotency lookup and the row prefetch go out together (one round trip under the
                    // lock); the prefetched rows are used only when the commit is new.
                    return Uni.combine().all().unis(tx.findPushResult(clientId, commit.clientCommitId()).map(Optional::ofNullable),
                            prefetch(tx, prefetchIds)).asTuple();
                })
                .flatMap(found -> found.getItem1().isPresent()
                        ? Uni.createFrom().item(replay(found.getItem1().get(), commit))
                        : blobCheck.recheck(tx).flatMap(checked -> {
                            round.blobs = checked;
                            return apply(round, tx, commit, allowed, found.getItem2());
                        })));
                }))
                .invoke(frames -> {
                    if (frames.get(0) instanceof PushResult r && r.commitSeq() != null) {
                        round.lastCommitSeq = Math.max(round.lastCommitSeq, r.commitSeq());
                    }
                });
    }

    /** A retained result replays byte-equivalent: applied as {@code cached}, rejected unchanged (§2.3). */
    private static List<Frame> replay(PushOutcome outcome, PushCommit commit) {
        try {
            List<Frame> frames = new ArrayList<>(MessageDecoder.decodeResponseFrames(outcome.result()));
            PushResult original = (PushResult) frames.get(0);
            if (original.status() == CommitStatus.APPLIED) {
                frames.set(0, new PushResult(original.clientCommitId(), CommitStatus.CACHED, original.commitSeq(),
                        original.results()));
            }
            return frames;
        } catch (RuntimeException e) {
            // §6.3: an unreadable retained result answers sync.idempotency_cache_miss and is not persisted.
            return List.of(new PushResult(commit.clientCommitId(), CommitStatus.REJECTED, null,
                    List.of(new OpResult.Error(0, ErrorCode.IDEMPOTENCY_CACHE_MISS.code, "cached push result unreadable",
                            true))));
        }
    }

    /**
     * A staged row state inside one commit: the row, or {@code null} for a staged delete; the client
     * operation it came from (§6.11 attributes appended operations to it) and its present columns.
     */
    private record Staged(String table, String rowId, StoredRow row, int opIndex, boolean[] present) {
    }

    /** A terminating error record and its optional §6.3.1 details. */
    private record Rejection(OpResult result, String detailsJson) {
    }

    private Uni<List<Frame>> apply(Round round, PushTx tx, PushCommit commit,
            Optional<Map<String, List<String>>> allowed, Map<String, Optional<StoredRow>> fetched) {
        Map<String, Staged> staged = new LinkedHashMap<>();
        List<ChangeToWrite> changes = new ArrayList<>();
        List<OpResult> results = new ArrayList<>();
        return applyOps(round, tx, commit, allowed, 0, staged, fetched, changes, results)
                .flatMap(r -> r != null ? Uni.createFrom().item(new Rejection(r, null))
                        : References.enforce(window.current(), tx, staged, changes))
                .flatMap(rejection -> {
            long now = clock.getAsLong();
            if (rejection != null) {
                PushResult rejected = new PushResult(commit.clientCommitId(), CommitStatus.REJECTED, null,
                        List.of(rejection.result()));
                List<Frame> frames = new ArrayList<>(List.of(rejected));
                WireWriter persisted = new WireWriter();
                persisted.raw(MessageEncoder.encodeFrame(rejected));
                if (rejection.detailsJson() != null) {
                    PushResultDetails details = new PushResultDetails(commit.clientCommitId(),
                            List.of(new PushResultDetails.Entry(rejection.result().opIndex(), rejection.detailsJson())));
                    frames.add(details);
                    persisted.raw(MessageEncoder.encodeFrame(details));
                }
                return tx.savePushResult(round.header.clientId(), commit.clientCommitId(),
                        new PushOutcome(CommitStatus.REJECTED, null, persisted.toByteArray(), now))
                        .map(v -> frames);
            }
            return tx.appendCommit(round.ctx.actorId(), round.header.clientId(), commit.clientCommitId(), now, changes)
                    .flatMap(seq -> writeRows(tx, new ArrayList<>(staged.values()), seq, fetched).flatMap(v -> {
                        PushResult applied = new PushResult(commit.clientCommitId(), CommitStatus.APPLIED, seq, results);
                        return tx.savePushResult(round.header.clientId(), commit.clientCommitId(),
                                new PushOutcome(CommitStatus.APPLIED, seq, MessageEncoder.encodeFrame(applied), now))
                                .map(x -> List.<Frame>of(applied));
                    }));
        });
    }

    /**
     * Writes the staged rows in order — iterative, so a large commit never grows the stack. An upsert of a row
     * the commit's prefetch found stored (read under the lock; a commit writes each row once, at its end)
     * passes that row, so the storage can skip index maintenance it already satisfies.
     */
    private static Uni<Void> writeRows(PushTx tx, List<Staged> rows, long commitSeq,
            Map<String, Optional<StoredRow>> fetched) {
        return io.smallrye.mutiny.Multi.createFrom().iterable(rows)
                .onItem().transformToUniAndConcatenate(s -> {
                    if (s.row() == null) {
                        return tx.deleteRow(s.table(), s.rowId(), commitSeq);
                    }
                    Optional<StoredRow> stored = fetched.get(s.table() + '\u0000' + s.rowId());
                    return stored != null && stored.isPresent() ? tx.upsertRow(s.table(), s.row(), stored.get())
                            : tx.upsertRow(s.table(), s.row());
                })
                .collect().last().replaceWithVoid();
    }

    /** Runs the operations in order; yields the terminating result record, or {@code null} when all applied. */
    private Uni<OpResult> applyOps(Round round, PushTx tx, PushCommit commit,
            Optional<Map<String, List<String>>> allowed, int index, Map<String, Staged> staged,
            Map<String, Optional<StoredRow>> fetched,
            List<ChangeToWrite> changes, List<OpResult> results) {
        // Iterative (not recursive) so a 500-operation commit never grows the stack; stops at the first
        // terminating result (§6.3: operations after it are never attempted).
        boolean[] stopped = new boolean[1];
        return io.smallrye.mutiny.Multi.createFrom().range(index, commit.operations().size())
                .onItem().transformToUniAndConcatenate(i -> stopped[0] ? Uni.createFrom().<OpResult>nullItem()
                        : applyOne(round, tx, commit, allowed, i, staged, fetched, changes, results)
                                .invoke(r -> stopped[0] = r != null))
                .collect().first();
    }

    private Uni<OpResult> applyOne(Round round, PushTx tx, PushCommit commit,
            Optional<Map<String, List<String>>> allowed, int index, Map<String, Staged> staged,
            Map<String, Optional<StoredRow>> fetched,
            List<ChangeToWrite> changes, List<OpResult> results) {
        PushOperation op = commit.operations().get(index);
        CompiledSchema current = window.current();
        TableSchema table = current.table(op.table());
        TableSchema clientTable = round.clientSchema.table(op.table());
        if (table == null || clientTable == null) {
            return error(index, ErrorCode.UNKNOWN_TABLE, "push operation names an unknown table");
        }
        SparseRow incoming = null;
        if (op.op() == Op.UPSERT) {
            try {
                incoming = widen(new SparseRowCodec(clientTable.rowLayout()).decode(op.payload()), table.columnCount());
            } catch (WireException e) {
                return error(index, ErrorCode.INVALID_REQUEST, "payload fails the row codec");
            }
            Object pk = incoming.value(table.primaryKeyIndex());
            if (pk == null || !ConflictRules.rowIdOf(table.primaryKeyColumn().type(), pk).equals(op.rowId())) {
                return error(index, ErrorCode.INVALID_REQUEST, "payload primary key differs from rowId");
            }
        }
        SparseRow row = incoming;
        String key = op.table() + '\u0000' + op.rowId();
        return current(tx, staged, fetched, table.name(), op.rowId(), key).flatMap(stored -> {
            Map<String, List<String>> grant = allowed.orElse(null);
            java.util.function.Predicate<Object[]> authorized = values -> grant != null
                    && EffectiveScopes.authorizesRow(table, values, grant);
            if (op.op() == Op.DELETE) {
                WriteOutcome outcome = ConflictRules.delete(stored.row == null ? null : state(stored.row), authorized);
                return onOutcome(round, tx, commit, allowed, index, staged, fetched, changes, results, table, op, key, outcome, stored,
                        null);
            }
            Uni<Boolean> tombstoned = stored.row != null ? Uni.createFrom().item(false)
                    : stored.stagedDelete ? Uni.createFrom().item(true)
                    : tx.readTombstone(table.name(), op.rowId()).map(t -> t != null);
            return tombstoned.flatMap(tomb -> {
                WriteOutcome outcome = ConflictRules.upsert(table, row, op.baseVersion(),
                        stored.row == null ? null : state(stored.row), tomb, authorized, merger);
                if (outcome instanceof WriteOutcome.Apply && round.blobs.missingAny(table, row)) {
                    // §5.9.6 / §6.6: after the §3.4 check on the same authorization row
                    return error(index, ErrorCode.BLOB_NOT_FOUND, "referenced blob is not in the blob store");
                }
                return onOutcome(round, tx, commit, allowed, index, staged, fetched, changes, results, table, op, key, outcome,
                        stored, row.present());
            });
        });
    }

    private Uni<OpResult> onOutcome(Round round, PushTx tx, PushCommit commit,
            Optional<Map<String, List<String>>> allowed, int index, Map<String, Staged> staged,
            Map<String, Optional<StoredRow>> fetched,
            List<ChangeToWrite> changes, List<OpResult> results, TableSchema table, PushOperation op, String key,
            WriteOutcome outcome, Current stored, boolean[] presence) {
        if (outcome instanceof WriteOutcome.Reject r) {
            return error(index, r.code(), r.message());
        }
        if (outcome instanceof WriteOutcome.Conflict c) {
            TableSchema clientTable = round.clientSchema.table(table.name());
            byte[] serverRow = new RowCodec(clientTable.rowLayout()).encode(narrow(c.serverRow(), clientTable.columnCount()));
            return Uni.createFrom().item(new OpResult.Conflict(index, ErrorCode.VERSION_CONFLICT.code,
                    "present columns moved past baseVersion", c.serverVersion(), serverRow,
                    narrowBitmap(c.conflictColumns(), clientTable.columnCount())));
        }
        if (outcome instanceof WriteOutcome.Apply a) {
            Map<String, String> scopes = EffectiveScopes.storedScopes(table, a.values());
            if (scopes.size() != table.scopePatterns().size()) {
                return error(index, ErrorCode.MISSING_SCOPES, "change without stored scopes");
            }
            staged.put(key, new Staged(table.name(), op.rowId(),
                    new StoredRow(op.rowId(), a.serverVersion(), a.values(), a.columnVersions(), scopes), index,
                    presence));
            changes.add(ChangeToWrite.upsert(table.name(), op.rowId(), a.serverVersion(), scopes, a.values()));
        } else if (outcome instanceof WriteOutcome.Delete d) {
            staged.put(key, new Staged(table.name(), op.rowId(), null, index, null));
            changes.add(ChangeToWrite.delete(table.name(), op.rowId(), EffectiveScopes.storedScopes(table, d.storedValues())));
        }
        results.add(new OpResult.Applied(index));
        return Uni.createFrom().nullItem();
    }

    private static Uni<OpResult> error(int index, ErrorCode code, String message) {
        return Uni.createFrom().item(new OpResult.Error(index, code.code, message, code.retryable));
    }

    /** The row a push operation sees: staged earlier in the commit, else as stored. */
    private record Current(StoredRow row, boolean stagedDelete) {
    }

    private static Uni<Current> current(PushTx tx, Map<String, Staged> staged, Map<String, Optional<StoredRow>> fetched,
            String table, String rowId, String key) {
        Staged s = staged.get(key);
        if (s != null) {
            return Uni.createFrom().item(new Current(s.row(), s.row() == null));
        }
        Optional<StoredRow> f = fetched.get(key);
        if (f != null) {
            return Uni.createFrom().item(new Current(f.orElse(null), false));
        }
        return tx.readRows(table, List.of(rowId)).map(rows -> new Current(rows.get(rowId), false));
    }

    /** The distinct row ids the commit's operations target, by (known) table, in operation order. */
    private Map<String, List<String>> prefetchIds(PushCommit commit) {
        Map<String, java.util.LinkedHashSet<String>> byTable = new LinkedHashMap<>();
        for (PushOperation op : commit.operations()) {
            if (window.current().table(op.table()) != null) {
                byTable.computeIfAbsent(op.table(), t -> new java.util.LinkedHashSet<>()).add(op.rowId());
            }
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        byTable.forEach((t, ids) -> out.put(t, List.copyOf(ids)));
        return out;
    }

    /** Reads every row of {@code byTable} (see {@link #prefetchIds}) with one statement per table (under the lock). */
    private static Uni<Map<String, Optional<StoredRow>>> prefetch(PushTx tx, Map<String, List<String>> byTable) {
        Map<String, Optional<StoredRow>> out = new java.util.HashMap<>();
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (Map.Entry<String, List<String>> e : byTable.entrySet()) {
            chain = chain.flatMap(v -> tx.readRows(e.getKey(), e.getValue())
                    .invoke(rows -> {
                        for (String id : e.getValue()) {
                            out.put(e.getKey() + '\u0000' + id, Optional.ofNullable(rows.get(id)));
                        }
                    }).replaceWithVoid());
        }
        return chain.map(v -> out);
    }

    private static StoredRowState state(StoredRow row) {
        return new StoredRowState(row.values(), row.serverVersion(), row.columnVersions());
    }

    /** §9: an older client's sparse row over the current schema — appended columns are absent. */
    private static SparseRow widen(SparseRow row, int columns) {
        if (row.present().length == columns) {
            return row;
        }
        boolean[] present = java.util.Arrays.copyOf(row.present(), columns);
        Object[] values = java.util.Arrays.copyOf(row.values(), columns);
        return new SparseRow(present, values);
    }

    /** §9: a current row in an older client's codec — the appended columns are dropped. */
    private static Object[] narrow(Object[] values, int columns) {
        return values.length == columns ? values : java.util.Arrays.copyOf(values, columns);
    }

    private static byte[] narrowBitmap(byte[] bitmap, int columns) {
        byte[] out = java.util.Arrays.copyOf(bitmap, RowLayout.bitmapBytes(columns));
        if ((columns & 7) != 0 && out.length > 0) {
            out[out.length - 1] &= (byte) ((1 << (columns & 7)) - 1);
        }
        return out;
    }

    /**
     * §6.11 declared references, enforced once per commit over the candidate state (staged over stored):
     * upserts need their parent, and parent deletes restrict, cascade or set children to NULL — appended
     * operations emit ordinary changes and attribute a rejection to the originating client delete.
     */
    private static final class References {
        static final int CASCADE_CAP = 1000;

        static Uni<Rejection> enforce(CompiledSchema schema, PushTx tx, Map<String, Staged> staged,
                List<ChangeToWrite> changes) {
            List<Staged> initial = new ArrayList<>(staged.values());
            // iterative (a large commit never grows the stack); the first rejection stops the walk
            return io.smallrye.mutiny.Multi.createFrom().iterable(initial)
                    .onItem().transformToUniAndConcatenate(s -> parent(schema, tx, staged, s))
                    .toUni()
                    .flatMap(r -> r != null ? Uni.createFrom().item(r)
                            : deletes(schema, tx, staged, changes, new ArrayList<>(initial), 0, new int[] {0}));
        }

        /**
         * A staged upsert whose present, non-null reference column names a parent must find it: the rejection,
         * or a {@code null} item when every parent exists.
         */
        private static Uni<Rejection> parent(CompiledSchema schema, PushTx tx, Map<String, Staged> staged, Staged s) {
            TableSchema table = schema.table(s.table());
            if (s.row() == null || s.present() == null || table.references().isEmpty()) {
                return Uni.createFrom().nullItem();
            }
            List<Uni<Rejection>> checks = new ArrayList<>();
            for (dev.syncular.server.schema.ReferenceDef ref : table.references()) {
                int col = table.columnIndex(ref.column());
                Object value = s.row().values()[col];
                if (!s.present()[col] || value == null) {
                    continue;
                }
                TableSchema parent = schema.table(ref.parentTable());
                String parentId = ConflictRules.rowIdOf(parent.primaryKeyColumn().type(), value);
                Staged inCommit = staged.get(parent.name() + '\u0000' + parentId);
                Uni<Boolean> exists = inCommit != null ? Uni.createFrom().item(inCommit.row() != null)
                        : tx.readRows(parent.name(), List.of(parentId)).map(m -> !m.isEmpty());
                checks.add(exists.map(ok -> ok ? null : rejection(s.opIndex(), "missing_parent",
                        List.of(ref.column()), Map.of("parent", parent.name(), "row", parentId))));
            }
            if (checks.isEmpty()) {
                return Uni.createFrom().nullItem();
            }
            return Uni.join().all(checks).andFailFast().map(rs -> {
                for (Rejection r : rs) {
                    if (r != null) {
                        return r;
                    }
                }
                return null;
            });
        }

        /** Walks staged deletes (the queue grows with cascaded ones) and applies each child reference's rule. */
        private static Uni<Rejection> deletes(CompiledSchema schema, PushTx tx, Map<String, Staged> staged,
                List<ChangeToWrite> changes, List<Staged> queue, int from, int[] appended) {
            int skip = from;
            while (skip < queue.size() && queue.get(skip).row() != null) {
                skip++; // upserts: nothing to cascade (a loop, not a call per row)
            }
            int i = skip;
            if (i == queue.size()) {
                return Uni.createFrom().nullItem();
            }
            Staged parentDelete = queue.get(i);
            TableSchema parent = schema.table(parentDelete.table());
            List<Object[]> work = new ArrayList<>();
            for (TableSchema child : schema.tables()) {
                for (dev.syncular.server.schema.ReferenceDef ref : child.references()) {
                    if (ref.parentTable().equals(parent.name())) {
                        work.add(new Object[] {child, ref});
                    }
                }
            }
            return children(schema, tx, staged, changes, queue, parentDelete, parent, work, 0, appended)
                    .flatMap(r -> r != null ? Uni.createFrom().item(r)
                            : deletes(schema, tx, staged, changes, queue, i + 1, appended));
        }

        private static Uni<Rejection> children(CompiledSchema schema, PushTx tx, Map<String, Staged> staged,
                List<ChangeToWrite> changes, List<Staged> queue, Staged parentDelete, TableSchema parent,
                List<Object[]> work, int w, int[] appended) {
            if (w == work.size()) {
                return Uni.createFrom().nullItem();
            }
            TableSchema child = (TableSchema) work.get(w)[0];
            dev.syncular.server.schema.ReferenceDef ref = (dev.syncular.server.schema.ReferenceDef) work.get(w)[1];
            int col = child.columnIndex(ref.column());
            Object parentKey = parentKeyValue(parent, parentDelete.rowId());
            return tx.readRowsWhere(child.name(), ref.column(), parentKey, CASCADE_CAP + 1).flatMap(stored -> {
                List<StoredRow> live = new ArrayList<>();
                for (StoredRow r : stored) {
                    Staged s = staged.get(child.name() + '\u0000' + r.rowId());
                    if (s == null) {
                        live.add(r);
                    } else if (s.row() != null && java.util.Objects.equals(s.row().values()[col], r.values()[col])) {
                        live.add(s.row());
                    }
                }
                if (live.isEmpty()) {
                    return children(schema, tx, staged, changes, queue, parentDelete, parent, work, w + 1, appended);
                }
                switch (ref.onDelete()) {
                    case RESTRICT:
                        return Uni.createFrom().item(rejection(parentDelete.opIndex(), "restricted_delete", null,
                                Map.of("child", child.name())));
                    case CASCADE:
                        for (StoredRow r : live) {
                            if (++appended[0] > CASCADE_CAP) {
                                return Uni.createFrom().item(rejection(parentDelete.opIndex(), "cascade_limit", null, null));
                            }
                            Staged del = new Staged(child.name(), r.rowId(), null, parentDelete.opIndex(), null);
                            staged.put(child.name() + '\u0000' + r.rowId(), del);
                            changes.add(ChangeToWrite.delete(child.name(), r.rowId(), r.scopes()));
                            queue.add(del);
                        }
                        break;
                    default: // SET NULL: a sparse upsert presenting only the reference column (§6.2).
                        for (StoredRow r : live) {
                            if (++appended[0] > CASCADE_CAP) {
                                return Uni.createFrom().item(rejection(parentDelete.opIndex(), "cascade_limit", null, null));
                            }
                            long next = r.serverVersion() + 1;
                            Object[] values = r.values().clone();
                            values[col] = null;
                            long[] versions = r.columnVersions().clone();
                            versions[col] = next;
                            StoredRow updated = new StoredRow(r.rowId(), next, values, versions, r.scopes());
                            staged.put(child.name() + '\u0000' + r.rowId(),
                                    new Staged(child.name(), r.rowId(), updated, parentDelete.opIndex(), null));
                            changes.add(ChangeToWrite.upsert(child.name(), r.rowId(), next, r.scopes(), values));
                        }
                        break;
                }
                return children(schema, tx, staged, changes, queue, parentDelete, parent, work, w + 1, appended);
            });
        }

        private static Object parentKeyValue(TableSchema parent, String rowId) {
            return switch (parent.primaryKeyColumn().type()) {
                case INTEGER -> Long.parseLong(rowId);
                case BOOLEAN -> Boolean.parseBoolean(rowId);
                default -> rowId;
            };
        }

        /** A {@code sync.reference_violation} with its bounded §6.3.1 details (dropped members that do not fit). */
        private static Rejection rejection(int opIndex, String reason, List<String> fieldPaths, Map<String, String> refs) {
            Map<String, Object> details = new LinkedHashMap<>();
            details.put("reason", reason);
            if (fieldPaths != null) {
                details.put("fieldPaths", fieldPaths);
            }
            if (refs != null) {
                details.put("references", refs);
            }
            String json = CanonicalJson.write(details);
            if (!dev.syncular.server.wire.RecoveryDetails.isValid(json)) {
                json = CanonicalJson.write(Map.of("reason", reason));
            }
            return new Rejection(new OpResult.Error(opIndex, ErrorCode.REFERENCE_VIOLATION.code,
                    "declared reference violated", false), json);
        }
    }

    // ------------------------------------------------------------------------------------------- pull

    private Uni<Void> pullAll(Round round, PullHeader pull, List<SubscriptionFrame> subs, Planned planned,
            PartitionState entry) {
        // Read-after-write without another read: commits are serialized per partition, so every sequence up
        // to this request's own last commit is durable; the window ends at the later of that and the entry read.
        PartitionState state = round.lastCommitSeq <= entry.maxCommitSeq() ? entry
                : new PartitionState(entry.partition(), entry.logEpoch(), round.lastCommitSeq, entry.horizonSeq(),
                        entry.createdAtMs(), entry.lastSeenAtMs());
        return pullEach(round, pull, subs, 0, state, planned);
    }

    private Uni<Void> pullEach(Round round, PullHeader pull, List<SubscriptionFrame> subs, int index,
            PartitionState state, Planned planned) {
        if (index == subs.size()) {
            return Uni.createFrom().voidItem();
        }
        SubscriptionFrame sub = subs.get(index);
        return round.allowed.flatMap(allowed -> {
            TableSchema table = round.clientSchema.table(sub.table());
            Map<String, List<String>> effective = allowed.map(a -> EffectiveScopes.effective(sub.scopes(), a)).orElse(null);
            Uni<List<Frame>> section;
            boolean incremental = false;
            if (effective == null) {
                // §3.3: revoked — no data, empty effective scopes, the request cursor echoed.
                section = Uni.createFrom().item(List.of(
                        new SubStart(sub.id(), SubscriptionStatus.REVOKED, ErrorCode.SCOPE_REVOKED.code, Map.of(), false),
                        new SubEnd(sub.cursor(), null)));
            } else if (sub.bootstrapState() == null && sub.cursor() >= 0 && sub.cursor() < state.horizonSeq()) {
                section = Uni.createFrom().item(cursorExpired(sub));
            } else if (sub.bootstrapState() != null || sub.cursor() < 0 || sub.cursor() > state.maxCommitSeq()) {
                section = bootstrap(round, pull, sub, table, effective, state);
            } else {
                section = incremental(round, pull, sub, table, effective, state);
                incremental = true;
            }
            boolean recheck = incremental;
            return section.flatMap(frames -> {
                planned.sections.add(frames);
                planned.incremental.add(recheck);
                return pullEach(round, pull, subs, index + 1, state, planned);
            });
        });
    }

    /** §4.6: a cursor behind the pruning horizon answers {@code reset} and echoes the request cursor. */
    private static List<Frame> cursorExpired(SubscriptionFrame sub) {
        return List.of(new SubStart(sub.id(), SubscriptionStatus.RESET, ErrorCode.CURSOR_EXPIRED.code, Map.of(), false),
                new SubEnd(sub.cursor(), null));
    }

    private static Map<String, Set<String>> asSets(Map<String, List<String>> scopes) {
        Map<String, Set<String>> out = new LinkedHashMap<>();
        scopes.forEach((k, v) -> out.put(k, new TreeSet<>(v)));
        return out;
    }

    private static int clamp(int value, int min, int max, int dflt) {
        return value == 0 ? dflt : Math.max(min, Math.min(max, value));
    }

    /**
     * §4.5: the log window {@code cursor < commitSeq ≤ maxCommitSeq}, scope-filtered, cut at {@code limitCommits}
     * changes. The §4.6 horizon recheck after the read is the request's exit read ({@link #finish}).
     */
    private Uni<List<Frame>> incremental(Round round, PullHeader pull, SubscriptionFrame sub, TableSchema table,
            Map<String, List<String>> effective, PartitionState state) {
        int limit = clamp(pull.limitCommits(), 1, 1000, 1000);
        CommitQuery query = new CommitQuery(table.name(), asSets(effective), sub.cursor(), state.maxCommitSeq(), limit);
        RowCodec codec = new RowCodec(table.rowLayout());
        return storage.readCommits(round.ctx.partition(), query).map(window -> {
                    List<Frame> frames = new ArrayList<>();
                    frames.add(new SubStart(sub.id(), SubscriptionStatus.ACTIVE, "", effective, false));
                    for (StoredCommit c : window.commits()) {
                        List<Change> changes = new ArrayList<>(c.changes().size());
                        for (StoredChange ch : c.changes()) {
                            byte[] row = ch.op() == Op.UPSERT
                                    ? codec.encode(narrow(ch.row(), table.columnCount())) : null;
                            changes.add(new Change(0, ch.rowId(), ch.op(), ch.rowVersion(), ch.scopes(), row));
                        }
                        if (!changes.isEmpty()) {
                            frames.add(new CommitFrame(c.commitSeq(), c.createdAtMs(), c.actorId(), List.of(table.name()),
                                    changes));
                        }
                    }
                    frames.add(new SubEnd(Math.max(sub.cursor(), window.scannedThroughSeq()), null));
                    return frames;
                });
    }

    /** A parsed §4.7 resume token. */
    private record Resume(long asOfCommitSeq, String rowCursor) {
    }

    /** §4.7: a token that does not parse, names other tables, or was pinned below the horizon restarts fresh. */
    private static Resume parseResume(String token, TableSchema table, PartitionState state) {
        if (token == null) {
            return null;
        }
        try {
            JsonNode n = JSON.readTree(token);
            JsonNode tables = n.get("tables");
            JsonNode asOf = n.get("asOfCommitSeq");
            JsonNode index = n.get("tableIndex");
            JsonNode cursor = n.get("rowCursor");
            if (tables == null || !tables.isArray() || tables.size() != 1 || !table.name().equals(tables.get(0).asText())
                    || asOf == null || !asOf.canConvertToExactIntegral() || index == null || index.asInt(-1) != 0
                    || cursor == null || !(cursor.isNull() || cursor.isTextual())) {
                return null;
            }
            long pin = asOf.asLong();
            if (pin < state.horizonSeq() || pin > state.maxCommitSeq()) {
                return null;
            }
            return new Resume(pin, cursor.isNull() ? null : cursor.asText());
        } catch (Exception e) {
            return null;
        }
    }

    private static String resumeToken(long asOf, String table, String rowCursor) {
        Map<String, Object> token = new LinkedHashMap<>();
        token.put("asOfCommitSeq", asOf);
        token.put("tables", List.of(table));
        token.put("tableIndex", 0);
        token.put("rowCursor", rowCursor);
        return CanonicalJson.write(token);
    }

    /** §4.7 bootstrap: pinned, paged, resumable; pages become rows segments inline (§5.7) or by reference (§5.4). */
    private Uni<List<Frame>> bootstrap(Round round, PullHeader pull, SubscriptionFrame sub, TableSchema table,
            Map<String, List<String>> effective, PartitionState state) {
        Resume resume = parseResume(sub.bootstrapState(), table, state);
        long asOf = resume != null ? resume.asOfCommitSeq() : state.maxCommitSeq();
        String start = resume != null ? resume.rowCursor() : null;
        int pageRows = clamp(pull.limitSnapshotRows(), 1, 50_000, 1000);
        int maxPages = clamp(pull.maxSnapshotPages(), 1, 50, 4);
        List<Frame> frames = new ArrayList<>();
        frames.add(new SubStart(sub.id(), SubscriptionStatus.ACTIVE, "", effective, true));
        String digest = CanonicalJson.scopeDigest(effective);
        if (resume == null && pull.accepts(PullHeader.ACCEPT_SQLITE)
                && table.columns().stream().noneMatch(dev.syncular.server.schema.ColumnSchema::encrypted)) {
            // §5.3: the image lane is chosen only at the start of a table; a resumed bootstrap (always mid-table
            // here: an image completes its table) stays on the rows lane at its pin.
            return imageLane(round, pull, table, effective, digest, state, pageRows, maxPages, frames);
        }
        return rowsLane(round, pull, table, effective, digest, asOf, state, start, pageRows, maxPages, frames, null);
    }

    private Uni<List<Frame>> rowsLane(Round round, PullHeader pull, TableSchema table, Map<String, List<String>> effective,
            String digest, long asOf, PartitionState state, String start, int pageRows, int maxPages, List<Frame> frames,
            List<StoredRow> firstRows) {
        return pages(round, pull, table, effective, digest, asOf, state, start, pageRows, maxPages, frames, firstRows)
                .map(nextCursor -> {
                    frames.add(new SubEnd(asOf, nextCursor == null ? null : resumeToken(asOf, table.name(), nextCursor)));
                    return frames;
                });
    }

    /**
     * A bootstrap eligible for the image lane pins at its scope pin (§4.7) so a stored image's reuse key stays
     * stable across commits outside the scope. A snapshot of more than one rows page is served as one whole-table
     * SQLite image by reference (§5.3): a stored, unexpired image of the same reuse key when there is one, else a
     * freshly built one; smaller snapshots stay on the rows lane at the same pin.
     */
    private Uni<List<Frame>> imageLane(Round round, PullHeader pull, TableSchema table, Map<String, List<String>> effective,
            String digest, PartitionState state, int pageRows, int maxPages, List<Frame> frames) {
        return scopePin(round, table, effective, state).flatMap(asOf -> {
            SegmentStore.ReuseKey key = new SegmentStore.ReuseKey(round.ctx.partition(), state.logEpoch(), table.name(),
                    round.clientSchema.version(), MediaType.SQLITE, digest, asOf);
            return segments.find(key, clock.getAsLong()).flatMap(stored -> {
                if (stored != null) {
                    return Uni.createFrom().item(imageFrames(round, pull, table, asOf, digest, stored, frames));
                }
                Uni<List<StoredRow>> first = readPage(round, table, effective, null, pageRows);
                return first.flatMap(rows -> {
                    if (rows.size() <= pageRows || !buildImages || oversized(key)) {
                        return rowsLane(round, pull, table, effective, digest, asOf, state, null, pageRows, maxPages,
                                frames, rows);
                    }
                    return buildImage(round, table, effective, key).flatMap(built -> built != null
                            ? Uni.createFrom().item(imageFrames(round, pull, table, asOf, digest, built, frames))
                            : rowsLane(round, pull, table, effective, digest, asOf, state, null, pageRows, maxPages,
                                    frames, rows));
                });
            });
        });
    }

    /** §4.7 scope pin: raised to the horizon, capped at {@code maxCommitSeq}. */
    private Uni<Long> scopePin(Round round, TableSchema table, Map<String, List<String>> effective, PartitionState state) {
        if (effective.isEmpty()) {
            return Uni.createFrom().item(state.maxCommitSeq());
        }
        String first = new TreeSet<>(effective.keySet()).first();
        return storage.readScopePin(round.ctx.partition(), table.name(), first, new TreeSet<>(effective.get(first)),
                        state.maxCommitSeq())
                .map(pin -> Math.min(state.maxCommitSeq(), Math.max(pin, state.horizonSeq())));
    }

    private List<Frame> imageFrames(Round round, PullHeader pull, TableSchema table, long asOf, String digest,
            SegmentStore.Match image, List<Frame> frames) {
        dev.syncular.server.segments.SegmentUrlSigner.SignedUrl url = url(pull, image.segmentId(), digest, round,
                clock.getAsLong());
        // §5.3: whole-table — both cursors absent; never inlined
        frames.add(new SegmentRef(image.segmentId(), MediaType.SQLITE, table.name(), image.byteLength(),
                image.publication().rowCount(), asOf, digest, null, null, url == null ? null : url.url(),
                url == null ? null : url.expiresAtMs()));
        frames.add(new SubEnd(asOf, null));
        return frames;
    }

    /**
     * Builds, hashes and publishes the image of {@code key} on a worker thread (never on the event loop),
     * streaming keyset pages into the SQLite file: the table is never held in memory. Concurrent requests for
     * one key in this process join one build; a request that goes away does not cancel it for the others.
     * A {@code null} item: the image exceeds the store's {@link SegmentStore#maxSegmentBytes()}.
     */
    private Uni<SegmentStore.Match> buildImage(Round round, TableSchema table, Map<String, List<String>> effective,
            SegmentStore.ReuseKey key) {
        java.util.concurrent.CompletableFuture<SegmentStore.Match> mine = new java.util.concurrent.CompletableFuture<>();
        java.util.concurrent.CompletableFuture<SegmentStore.Match> running = imageBuilds.putIfAbsent(key, mine);
        if (running != null) {
            return Uni.createFrom().completionStage(running);
        }
        Map<String, Set<String>> scopes = asSets(effective);
        String partition = round.ctx.partition();
        Uni.createFrom().item(() -> {
            java.nio.file.Path file = null;
            long started = System.nanoTime();
            try {
                file = java.nio.file.Files.createTempFile("syncular-image-", ".sqlite");
                // the next keyset batch is read while this one is written (one batch ahead, never more)
                java.util.function.Function<String, java.util.concurrent.CompletableFuture<List<StoredRow>>> read =
                        after -> storage.readSnapshotPage(partition, table.name(), scopes, after, IMAGE_BATCH_ROWS)
                                .subscribeAsCompletionStage();
                List<java.util.concurrent.CompletableFuture<List<StoredRow>>> ahead = new ArrayList<>(List.of(read.apply(null)));
                dev.syncular.server.segments.SqliteImageBuilder.Result result = dev.syncular.server.segments.SqliteImageBuilder
                        .build(file, table, key.schemaVersion(), key.asOfCommitSeq(), key.scopeDigest(), () -> {
                            List<StoredRow> page = ahead.get(0).get(5, java.util.concurrent.TimeUnit.MINUTES);
                            ahead.set(0, page.size() < IMAGE_BATCH_ROWS ? java.util.concurrent.CompletableFuture
                                    .completedFuture(List.of()) : read.apply(page.get(page.size() - 1).rowId()));
                            return page;
                        });
                long built = System.nanoTime();
                BuiltImage image = new BuiltImage(file, "sha256:" + sha256Hex(file), result.rowCount(),
                        result.byteLength(), (built - started) / 1_000_000, (System.nanoTime() - built) / 1_000_000);
                return image;
            } catch (java.io.IOException e) {
                deleteQuietly(file);
                throw new java.io.UncheckedIOException(e);
            } catch (RuntimeException e) {
                deleteQuietly(file);
                throw e;
            }
        }).runSubscriptionOn(io.smallrye.mutiny.infrastructure.Infrastructure.getDefaultWorkerPool())
                .flatMap(built -> {
                    long now = clock.getAsLong();
                    if (built.byteLength() > segments.maxSegmentBytes()) {
                        // too large for this store: remembered for a TTL, served on the rows lane meanwhile
                        deleteQuietly(built.file());
                        oversizedImages.put(key, now + limits.segmentTtlMs());
                        return Uni.createFrom().<SegmentStore.Match>nullItem();
                    }
                    SegmentPublication publication = new SegmentPublication(key.partition(), key.logEpoch(), key.table(),
                            key.schemaVersion(), MediaType.SQLITE, key.scopeDigest(), key.asOfCommitSeq(), null, null,
                            built.rowCount(), now, now + limits.segmentTtlMs());
                    long publishing = System.nanoTime();
                    return segments.publishFile(built.segmentId(), built.file(), publication)
                            .invoke(v -> LOG.infof("SQLite image built: %d rows, %d bytes; read+write %d ms, hash %d ms,"
                                    + " publish %d ms", built.rowCount(), built.byteLength(), built.buildMs(),
                                    built.hashMs(), (System.nanoTime() - publishing) / 1_000_000))
                            .map(v -> new SegmentStore.Match(built.segmentId(), built.byteLength(), publication))
                            .eventually(() -> deleteQuietly(built.file()));
                })
                .subscribe().with(match -> {
                    imageBuilds.remove(key, mine);
                    mine.complete(match);
                }, failure -> {
                    imageBuilds.remove(key, mine);
                    mine.completeExceptionally(failure);
                });
        return Uni.createFrom().completionStage(mine);
    }

    /** Reuse keys whose image exceeded the store's segment size cap, until when (clock ms). */
    private final java.util.concurrent.ConcurrentHashMap<SegmentStore.ReuseKey, Long> oversizedImages =
            new java.util.concurrent.ConcurrentHashMap<>();

    private boolean oversized(SegmentStore.ReuseKey key) {
        Long until = oversizedImages.get(key);
        if (until == null) {
            return false;
        }
        if (until <= clock.getAsLong()) {
            oversizedImages.remove(key, until);
            return false;
        }
        return true;
    }

    /** Keyset batch size of image builds. */
    private static final int IMAGE_BATCH_ROWS = 10_000;

    private record BuiltImage(java.nio.file.Path file, String segmentId, long rowCount, long byteLength, long buildMs,
            long hashMs) {
    }

    private static final org.jboss.logging.Logger LOG = org.jboss.logging.Logger.getLogger(SyncEngine.class);

    private static String sha256Hex(java.nio.file.Path file) throws java.io.IOException {
        try (java.io.InputStream in = java.nio.file.Files.newInputStream(file)) {
            java.security.MessageDigest md = java.security.MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
            return java.util.HexFormat.of().formatHex(md.digest());
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void deleteQuietly(java.nio.file.Path file) {
        if (file != null) {
            try {
                java.nio.file.Files.deleteIfExists(file);
            } catch (java.io.IOException ignored) {
                // a temp file left behind is harmless
            }
        }
    }

    /** §5.4: a URL only for clients advertising bit 3, minted inside this pull right after scope resolution. */
    private dev.syncular.server.segments.SegmentUrlSigner.SignedUrl url(PullHeader pull, String segmentId, String digest,
            Round round, long now) {
        return urls != null && pull.accepts(PullHeader.ACCEPT_SIGNED_URLS)
                ? urls.issue(segmentId, digest, round.ctx.partition(), now) : null;
    }

    /**
     * Emits pages from {@code after} (the first from {@code firstRows} when they were already read, else read
     * like the others); yields the row cursor to resume from, or {@code null} when the table is complete. A page
     * is read in keyset batches and encoded as they arrive ({@link #encodePage}); the next page is produced while
     * this one is published, so PostgreSQL reads, encoding and the segment store overlap. A loop of fresh
     * subscriptions, not a chain of nested operators: a nested chain keeps every earlier page reachable until
     * the whole request completes.
     */
    private Uni<String> pages(Round round, PullHeader pull, TableSchema table, Map<String, List<String>> effective,
            String digest, long asOf, PartitionState state, String after, int pageRows, int maxPages, List<Frame> frames,
            List<StoredRow> firstRows) {
        Map<String, Set<String>> scopes = asSets(effective);
        int schemaVersion = round.clientSchema.version();
        return Uni.createFrom().emitter(em -> new Object() {
            void page(int index, String from, java.util.concurrent.CompletableFuture<EncodedPage> produced) {
                produced.whenComplete((p, failure) -> {
                    if (failure != null) {
                        em.fail(failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                                ? failure.getCause() : failure);
                        return;
                    }
                    try {
                        boolean continues = p.next() != null && index + 1 < maxPages;
                        java.util.concurrent.CompletableFuture<EncodedPage> ahead = continues
                                ? encodePage(round.ctx.partition(), table, schemaVersion, scopes, p.next(), pageRows, null)
                                        .subscribeAsCompletionStage()
                                : null;
                        emitSegment(round, pull, table, digest, asOf, state, from, p.next(), p.count(), p.segment())
                                .subscribe().with(frame -> {
                                    frames.add(frame);
                                    if (continues) {
                                        page(index + 1, p.next(), ahead);
                                    } else {
                                        em.complete(p.next());
                                    }
                                }, em::fail);
                    } catch (RuntimeException e) {
                        em.fail(e); // a callback that throws would otherwise leave the request hanging
                    }
                });
            }
        }.page(0, after, encodePage(round.ctx.partition(), table, schemaVersion, scopes, after, pageRows, firstRows)
                .subscribeAsCompletionStage()));
    }

    /** The snapshot page after {@code after} ({@code pageRows + 1} rows: one more tells whether more follow). */
    private Uni<List<StoredRow>> readPage(Round round, TableSchema table, Map<String, List<String>> effective, String after,
            int pageRows) {
        return storage.readSnapshotPage(round.ctx.partition(), table.name(), asSets(effective), after, pageRows + 1);
    }

    /** Keyset batch size of rows pages: a page of up to 50,000 rows is read and encoded 10,000 rows at a time. */
    private static final int PAGE_BATCH_ROWS = 10_000;

    /** A page as SSG2 bytes with its content address (§5.1), its row count and the row cursor after it. */
    private record EncodedPage(EncodedSegment segment, int count, String next) {
    }

    /** A rows segment's bytes and content address (§5.1). */
    private record EncodedSegment(byte[] bytes, String segmentId) {
    }

    /**
     * One rows page (§5.2) of at most {@code pageRows} rows after {@code after}, encoded on a worker thread
     * (never on the event loop): keyset batches of {@link #PAGE_BATCH_ROWS}, the next one read while this one
     * is encoded, so only about two batches of row objects are alive at a time (not the page's 50,000) and
     * the reads overlap the encoding. One row past the page is probed to tell whether more follow.
     * {@code preRead}, when given, is the page's rows read already ({@code pageRows + 1} at most).
     */
    private Uni<EncodedPage> encodePage(String partition, TableSchema table, int schemaVersion,
            Map<String, Set<String>> scopes, String after, int pageRows, List<StoredRow> preRead) {
        if (pageRows < WORKER_ENCODE_ROWS) {
            // a small page: one read, encoded right on the event loop
            Uni<List<StoredRow>> rows = preRead != null ? Uni.createFrom().item(preRead)
                    : storage.readSnapshotPage(partition, table.name(), scopes, after, pageRows + 1);
            return rows.map(r -> {
                PageEncoder e = new PageEncoder(table, schemaVersion);
                boolean more = r.size() > pageRows;
                e.addAll(more ? r.subList(0, pageRows) : r);
                return e.finish(more);
            });
        }
        java.util.concurrent.atomic.AtomicReference<List<StoredRow>> handOver = new java.util.concurrent.atomic.AtomicReference<>(preRead);
        return Uni.createFrom().item(() -> {
            PageEncoder e = new PageEncoder(table, schemaVersion);
            List<StoredRow> given = handOver.getAndSet(null);
            if (given != null) {
                boolean more = given.size() > pageRows;
                e.addAll(more ? given.subList(0, pageRows) : given);
                return e.finish(more);
            }
            int requested = Math.min(PAGE_BATCH_ROWS, pageRows + 1);
            java.util.concurrent.CompletableFuture<List<StoredRow>> ahead =
                    storage.readSnapshotPage(partition, table.name(), scopes, after, requested).subscribeAsCompletionStage();
            while (true) {
                List<StoredRow> batch = await(ahead);
                boolean exhausted = batch.size() < requested;
                int room = pageRows - e.count;
                boolean more = batch.size() > room;
                if (!more && !exhausted) {
                    // the next batch (at most the rest of the page plus the probe row) is read while this one
                    // is encoded
                    requested = Math.min(PAGE_BATCH_ROWS, room - batch.size() + 1);
                    ahead = storage.readSnapshotPage(partition, table.name(), scopes, batch.get(batch.size() - 1).rowId(),
                            requested).subscribeAsCompletionStage();
                }
                e.addAll(more ? batch.subList(0, room) : batch);
                if (more || exhausted) {
                    return e.finish(more);
                }
            }
        }).runSubscriptionOn(io.smallrye.mutiny.infrastructure.Infrastructure.getDefaultWorkerPool());
    }

    /** Pages of at least this many rows are read in batches and encoded on a worker thread, never on the event loop. */
    private static final int WORKER_ENCODE_ROWS = 1000;

    /** Encodes one rows segment (§5.2) row by row. */
    private static final class PageEncoder {
        private final List<ColumnDef> columns;
        private final WireWriter out = new WireWriter(16 * 1024);
        private final RowsSegmentWriter writer;
        int count;
        private String last;

        PageEncoder(TableSchema table, int schemaVersion) {
            columns = table.rowLayout().columns();
            writer = new RowsSegmentWriter(table.name(), schemaVersion, RowLayout.of(columns), out::raw);
        }

        void addAll(List<StoredRow> rows) {
            for (StoredRow r : rows) {
                writer.addRow(r.serverVersion(), narrow(r.values(), columns.size()));
                last = r.rowId();
                count++;
            }
        }

        /** @param more whether rows follow this page (its last row id becomes the resume cursor) */
        EncodedPage finish(boolean more) {
            writer.finish();
            byte[] bytes = out.toByteArray();
            return new EncodedPage(new EncodedSegment(bytes, "sha256:" + CanonicalJson.sha256Hex(bytes)), count,
                    more ? last : null);
        }
    }

    /** Waits on a worker thread for a read the event loop completes. */
    private static <T> T await(java.util.concurrent.CompletableFuture<T> read) {
        try {
            return read.get(5, java.util.concurrent.TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading a snapshot batch", e);
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause();
            throw cause instanceof RuntimeException r ? r : new IllegalStateException(cause);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("a snapshot batch read timed out", e);
        }
    }

    /** §4.2 accept bits and §5.7 size guidance decide inline versus reference delivery. */
    private Uni<Frame> emitSegment(Round round, PullHeader pull, TableSchema table, String digest, long asOf,
            PartitionState state, String rowCursor, String nextRowCursor, int rowCount, EncodedSegment encoded) {
        byte[] segment = encoded.bytes();
        boolean inline = pull.accepts(PullHeader.ACCEPT_INLINE_ROWS)
                && (!pull.accepts(PullHeader.ACCEPT_EXTERNAL_ROWS) || segment.length < limits.inlineSegmentMaxBytes());
        if (inline) {
            return Uni.createFrom().item(new SegmentInline(segment));
        }
        String segmentId = encoded.segmentId();
        long now = clock.getAsLong();
        SegmentPublication publication = new SegmentPublication(round.ctx.partition(), state.logEpoch(), table.name(),
                round.clientSchema.version(), MediaType.ROWS, digest, asOf, rowCursor, nextRowCursor, rowCount, now,
                now + limits.segmentTtlMs());
        // §5.4: a short-lived native signed URL only for clients advertising bit 3 (minted right after scope
        // resolution, inside this pull).
        dev.syncular.server.segments.SegmentUrlSigner.SignedUrl url = url(pull, segmentId, digest, round, now);
        return segments.publish(segmentId, segment, publication).map(v -> new SegmentRef(segmentId, MediaType.ROWS,
                table.name(), segment.length, rowCount, asOf, digest, rowCursor, nextRowCursor,
                url == null ? null : url.url(), url == null ? null : url.expiresAtMs()));
    }

    // ------------------------------------------------------------------------------------------- client record

    /** §8.1: the registered subscriptions of a pulling round, as the client record stores them. */
    private static String registeredSubscriptions(Round round, List<SubscriptionFrame> subs) {
        List<Map<String, Object>> registered = new ArrayList<>();
        for (SubscriptionFrame s : subs) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", s.id());
            m.put("table", s.table());
            m.put("scopes", s.scopes());
            m.put("schemaVersion", round.header.schemaVersion());
            registered.add(m);
        }
        return CanonicalJson.write(registered);
    }

    // ------------------------------------------------------------------------------------------- segments

    /**
     * §5.5 direct download: re-authorize against the requested scopes — the recomputed digest must belong
     * to an unexpired publication in the caller's partition and live log epoch.
     */
    public Uni<SegmentDownload> authorizeSegment(SyncRequestContext ctx, String segmentId,
            Map<String, List<String>> requestedScopes) {
        long now = clock.getAsLong();
        return storage.readPartition(ctx.partition()).flatMap(state -> {
            if (state == null) {
                return Uni.createFrom().failure(notFound());
            }
            return admit(ctx.partition()).flatMap(gate -> verified(ctx.partition(), gate,
                    download(ctx, segmentId, requestedScopes, state, now)));
        });
    }

    private Uni<SegmentDownload> download(SyncRequestContext ctx, String segmentId,
            Map<String, List<String>> requestedScopes, PartitionState state, long now) {
        return segments.describe(segmentId).flatMap(stored -> {
            List<SegmentPublication> live = livePublications(stored, ctx.partition(), state.logEpoch());
            if (live.isEmpty()) {
                return Uni.createFrom().failure(notFound());
            }
            List<SegmentPublication> unexpired = live.stream().filter(p -> p.expiresAtMs() > now).toList();
            if (unexpired.isEmpty()) {
                return Uni.createFrom().failure(new SyncError(ErrorCode.SEGMENT_EXPIRED, "segment expired"));
            }
            return resolveOnce(ctx).flatMap(allowed -> {
                if (allowed.isEmpty() || !authorizedBy(unexpired, requestedScopes, allowed.get())) {
                    return Uni.createFrom().failure(new SyncError(ErrorCode.FORBIDDEN,
                            "segment not authorized for the requested scopes"));
                }
                return segments.read(segmentId).flatMap(bytes -> bytes == null ? Uni.createFrom().failure(notFound())
                        : Uni.createFrom().item(new SegmentDownload(segmentId, bytes)));
            });
        });
    }

    /**
     * §5.4 native signed URL: the URL is the entire grant — no host authentication. The token's MAC, expiry
     * and segment are verified, and its digest must belong to a live publication in the partition its
     * audience names.
     */
    public Uni<SegmentDownload> downloadSigned(String segmentId, String token) {
        long now = clock.getAsLong();
        if (signer == null) {
            return Uni.createFrom().failure(notFound());
        }
        dev.syncular.server.segments.SegmentUrlSigner.Claims claims = signer.verify(token, segmentId, now);
        if (claims == null) {
            return Uni.createFrom().failure(new SyncError(ErrorCode.FORBIDDEN, "signed URL rejected"));
        }
        return segments.describe(segmentId).flatMap(stored -> {
            if (stored == null) {
                return Uni.createFrom().failure(notFound());
            }
            List<SegmentPublication> granted = stored.publications().stream()
                    .filter(p -> p.scopeDigest().equals(claims.scopeDigest())
                            && signer.audience(p.partition()).equals(claims.audience()))
                    .toList();
            if (granted.isEmpty()) {
                return Uni.createFrom().failure(new SyncError(ErrorCode.FORBIDDEN, "signed URL rejected"));
            }
            String partition = granted.get(0).partition();
            return storage.readPartition(partition).flatMap(state -> {
                List<SegmentPublication> live = granted.stream()
                        .filter(p -> p.partition().equals(partition) && state != null && p.logEpoch().equals(state.logEpoch()))
                        .toList();
                if (live.isEmpty()) {
                    return Uni.createFrom().failure(notFound());
                }
                if (live.stream().noneMatch(p -> p.expiresAtMs() > now)) {
                    return Uni.createFrom().failure(new SyncError(ErrorCode.SEGMENT_EXPIRED, "segment expired"));
                }
                return admit(partition).flatMap(gate -> verified(partition, gate, segments.read(segmentId)
                        .flatMap(bytes -> bytes == null ? Uni.createFrom().<SegmentDownload>failure(notFound())
                                : Uni.createFrom().item(new SegmentDownload(segmentId, bytes)))));
            });
        });
    }

    private boolean authorizedBy(List<SegmentPublication> publications, Map<String, List<String>> requested,
            Map<String, List<String>> allowed) {
        Map<String, List<String>> effective = EffectiveScopes.effective(requested, allowed);
        if (effective == null) {
            return false;
        }
        String digest = CanonicalJson.scopeDigest(effective);
        for (SegmentPublication p : publications) {
            TableSchema table = window.current().table(p.table());
            if (table != null && p.scopeDigest().equals(digest)) {
                try {
                    EffectiveScopes.validateRequested(table, requested);
                    return true;
                } catch (SyncError e) {
                    return false;
                }
            }
        }
        return false;
    }

    private static List<SegmentPublication> livePublications(StoredSegment stored, String partition, String logEpoch) {
        if (stored == null) {
            return List.of();
        }
        List<SegmentPublication> out = new ArrayList<>();
        for (SegmentPublication p : stored.publications()) {
            if (p.partition().equals(partition) && p.logEpoch().equals(logEpoch)) {
                out.add(p);
            }
        }
        return out;
    }

    private static SyncError notFound() {
        return new SyncError(ErrorCode.NOT_FOUND, "segment not found");
    }
}
