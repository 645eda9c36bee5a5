package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentUrlSigner;
import dev.syncular.server.segments.SegmentUrls;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.ReadReplicas;
import dev.syncular.server.storage.ReadRoute;
import dev.syncular.server.storage.RequestEntry;
import dev.syncular.server.storage.ServeGate;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.MediaType;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.ReqHeader;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRef;
import dev.syncular.server.wire.SubscriptionFrame;
import dev.syncular.server.wire.WireException;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * The protocol engine behind {@code POST <mount>/sync} and socket rounds (§1.1 "two bindings, one
 * handler", §8.7): takes a decoded request message and plans the whole response as frames, which the binding
 * then streams (§1.4). A request-level failure fails the {@code Uni} with a {@link SyncError}.
 *
 * <p>A round, {@link #handle}: enter (one read: partition, serve gate, client record) → admit (§2.4) → plan
 * (§1.7 {@link RequestValidation}, §2.1 epoch, §1.6 schema floor, then the push, {@link CommitPush}, and the
 * pull, {@link Pull}) → verify (the exit read: client record save, §4.6 horizon recheck, §2.4 read-verify-refuse)
 * → release the frames. Segment downloads (§5.5) are {@link SegmentDelivery}'s, behind the same gate.
 */
public final class SyncEngine {
    private final SchemaWindow window;
    private final SyncStorage storage;
    private final ScopeResolver resolver;
    private final SyncLimits limits;
    private final LongSupplier clock;
    private final ServeGates gates;
    private final ServeGateCheck check;
    private final CommitPush push;
    private final Pull pull;
    private final ReadReplicas replicas;
    private final SegmentDelivery delivery;
    private final SyncObserver observer;
    /** Descriptor URLs are provider-presigned (§5.4): their bytes never pass through this server. */
    private final boolean presignedUrls;
    /** §7.3 auth leases; {@link AuthLeases#OFF} when not configured. */
    private final AuthLeases leases;
    /** Fairness: every round's place among its actor's and partition's rounds in flight. */
    private final RoundAdmission admission;

    private final ResponseMemory memory;
    /** The spans of rounds and their parts; {@link Tracing#OFF} without tracing. */
    private final Tracing tracing;

    /** Which binding a round came through: a span attribute ({@link Tracing#BINDING}). */
    public enum Binding {
        HTTP("http"),
        SOCKET("socket"),
        COMMAND("command");

        public final String tag;

        Binding(String tag) {
            this.tag = tag;
        }
    }

    /** The engine over {@code parts}; see {@link EngineParts} for each part and its "off" value. */
    public SyncEngine(EngineParts parts) {
        SchemaWindow window = parts.window();
        SyncStorage storage = parts.storage();
        SegmentStore segments = parts.segments();
        ScopeResolver resolver = parts.resolver();
        SyncLimits limits = parts.limits();
        LongSupplier clockMs = parts.clockMs();
        SyncObserver observer = parts.observer();
        SegmentUrls urls = parts.urls();
        WritePolicy policy = parts.policy();
        AuthLeases leases = parts.leases();
        RoundAdmission admission = parts.admission();
        this.admission = admission;
        this.memory = parts.memory();
        this.tracing = parts.tracing();
        this.replicas = parts.replicas();
        this.leases = leases;
        this.window = window;
        this.storage = storage;
        this.resolver = resolver;
        this.limits = limits;
        this.clock = clockMs;
        this.gates = new ServeGates(window.current().version(), parts.checkpoints());
        this.observer = observer;
        this.presignedUrls = urls != SegmentUrls.NONE && !(urls instanceof SegmentUrlSigner);
        this.check = new ServeGateCheck(storage, gates, observer);
        this.push = new CommitPush(
                window,
                storage,
                parts.blobs(),
                clockMs,
                gates,
                check,
                new PushOperations(window, parts.merger(), policy, parts.queries(), parts.limits()),
                observer,
                policy,
                tracing);
        this.delivery = new SegmentDelivery(window, storage, segments, resolver, limits, clockMs, check, urls);
        RowsLane rows = new RowsLane(delivery);
        ImageLane images = new ImageLane(segments, limits, clockMs, parts.images(), delivery, rows, observer, tracing);
        this.pull = new Pull(new Bootstrap(rows, images), storage.recentCommits());
    }

    /** §7.3 auth leases, or {@link AuthLeases#OFF} when not configured. */
    public AuthLeases leases() {
        return leases;
    }

    public ServeGates gates() {
        return gates;
    }

    /**
     * §2.4 for the realtime binding: whether this process serves {@code partition} now. A realtime delta
     * (§8.2) is a response like any other: while the gate refuses, the hub wakes the client instead, and the
     * pull that follows gets the gate's refusal.
     */
    public Uni<Boolean> serves(String partition) {
        return storage.readServeGate(partition, gates.runningSchemaVersion())
                .map(gate -> gates.refusal(partition, gate) == null);
    }

    /** The bytes of an authorized segment download (§5.5). */
    public record SegmentDownload(String segmentId, byte[] bytes) {}

    /**
     * One sync round (§1.5 request → §1.6 response), the single round path of every binding: the HTTP binding
     * calls it with the decoded body of {@code POST <mount>/sync}, a socket round (§8.7) with the request
     * reassembled from its {@code 0x01} chunks; each streams the frames it yields. The round's span
     * ({@code sync.round}) is a child of {@code trace}, the binding's own span or {@link Context#root()}.
     */
    public Uni<List<Frame>> handle(SyncRequestContext ctx, Message request, Binding binding, Context trace) {
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
        int operations = 0;
        long bytes = 0;
        for (PushCommit c : pushes) {
            operations += c.operations().size();
            for (PushOperation op : c.operations()) {
                bytes += op.rowId().length() + (op.payload() == null ? 0 : op.payload().length);
            }
        }
        // fairness first: a refused round (sync.rate_limited) has read and written nothing
        boolean bootstraps = false;
        for (SubscriptionFrame s : subscriptions) {
            bootstraps |= s.cursor() < 0 || s.bootstrapState() != null;
        }
        return admission.admit(
                ctx.partition(),
                ctx.actorId(),
                new RoundAdmission.Demand(operations, bytes, bootstraps),
                () -> round(ctx, header, pushes, pullHeader, subscriptions, ServerCommand.NONE, binding, trace));
    }

    /**
     * Whether a round of {@code ctx}'s actor would find its round places taken now ({@link RoundAdmission#admissible}):
     * a binding asks before it reads the request's body, so a refused round costs no reading or decoding.
     */
    public Uni<Void> admissible(SyncRequestContext ctx) {
        return admission.admissible(ctx.partition(), ctx.actorId());
    }

    /**
     * REMOTE.md §3: one server command as a push round of its own, under the command's reserved idempotency
     * identity ({@code clientId} in the {@code ["remote-command",} namespace, {@code clientCommitId}), in the
     * partition's live epoch at the current schema version. The answer is the round's frames: {@code RESP_HEADER}
     * and the commit's {@code PUSH_RESULT} (applied, cached for a retry of an applied command, or rejected, stored
     * and replayed like any push).
     */
    public Uni<List<Frame>> command(
            SyncRequestContext ctx, String clientId, String clientCommitId, ServerCommand command, Context trace) {
        ReqHeader header = new ReqHeader(clientId, window.current().version(), null);
        List<PushCommit> pushes = List.of(new PushCommit(clientCommitId, List.of()));
        return admission.admit(
                ctx.partition(),
                ctx.actorId(),
                RoundAdmission.Demand.pushing(1, 0),
                () -> round(ctx, header, pushes, null, List.of(), command, Binding.COMMAND, trace));
    }

    private Uni<List<Frame>> round(
            SyncRequestContext ctx,
            ReqHeader header,
            List<PushCommit> pushes,
            PullHeader pullHeader,
            List<SubscriptionFrame> subscriptions,
            ServerCommand command,
            Binding binding,
            Context parent) {
        return tracing.span("sync.round", parent, SpanKind.INTERNAL, trace -> {
            Span span = Span.fromContext(trace);
            if (span.isRecording()) {
                int operations = 0;
                for (PushCommit c : pushes) {
                    operations += c.operations().size();
                }
                span.setAttribute(Tracing.PARTITION, ctx.partition())
                        .setAttribute(Tracing.CLIENT_ID_HASH, Tracing.clientIdHash(header.clientId()))
                        .setAttribute(Tracing.BINDING, binding.tag)
                        .setAttribute(Tracing.PUSH_COMMITS, (long) pushes.size())
                        .setAttribute(Tracing.PUSH_OPERATIONS, (long) operations)
                        .setAttribute(Tracing.SUBSCRIPTIONS, (long) subscriptions.size());
            }
            return round(ctx, header, pushes, pullHeader, subscriptions, command, trace)
                    .invoke(frames -> span.setAttribute(Tracing.FRAMES, (long) frames.size()));
        });
    }

    private Uni<List<Frame>> round(
            SyncRequestContext ctx,
            ReqHeader header,
            List<PushCommit> pushes,
            PullHeader pullHeader,
            List<SubscriptionFrame> subscriptions,
            ServerCommand command,
            Context trace) {
        long started = System.nanoTime();
        long now = clock.getAsLong();
        String partition = ctx.partition();
        // the round being planned: its frames' bytes go back to the pod's memory when it ends (ResponseMemory)
        AtomicReference<RoundState> planning = new AtomicReference<>();
        // One entry read (partition touch + serve gate + client record), one exit round trip (client record
        // upsert when due + the verify read, which also rechecks the horizon of incremental pulls). Before the
        // entry read, what the storage cannot hold and the subscription cap are refused (RequestValidation).
        return Uni.createFrom()
                .deferred(() -> {
                    RequestValidation.admissible(ctx, header, pushes, subscriptions, limits);
                    return storage.enterRequest(partition, header.clientId(), gates.runningSchemaVersion(), now)
                            .flatMap(entry -> {
                                SyncError refusal = gates.refusal(partition, entry.gate());
                                if (refusal != null) {
                                    return check.refuse(refusal);
                                }
                                return check.fenced(
                                                partition,
                                                plan(
                                                        ctx,
                                                        header,
                                                        pushes,
                                                        pullHeader,
                                                        subscriptions,
                                                        entry,
                                                        command,
                                                        trace,
                                                        planning))
                                        .flatMap(planned ->
                                                finish(partition, entry.gate(), planned, entry.client(), now));
                            });
                })
                .onTermination()
                .invoke(() -> {
                    RoundState planned = planning.getAndSet(null);
                    if (planned != null) {
                        planned.end();
                    }
                })
                .onItemOrFailure()
                .invoke((frames, failure) ->
                        observer.roundEnded(partition, outcome(failure), failure, System.nanoTime() - started));
    }

    /** A round's outcome for the observer: {@code "ok"} or the §10 code it fails with (a bounded set). */
    static String outcome(Throwable failure) {
        if (failure == null) {
            return "ok";
        }
        if (failure instanceof SyncError e) {
            return e.code().code;
        }
        if (failure instanceof WireException e && ErrorCode.of(e.code()) != null) {
            return e.code();
        }
        return ErrorCode.INTERNAL_ERROR.code;
    }

    /**
     * Tells the observer what a released response carries: rows by lane — the incremental {@code COMMIT}
     * changes, rows segments inline (counted as they were planned) or by reference, SQLite images — and the
     * segment bytes that reach the client inline or through provider-presigned URLs. Referenced segments
     * fetched from this server are counted by the download route. The commits it hands over become visible to its
     * client now ({@link VisibleCommits}).
     */
    private void released(PlannedResponse planned, List<Frame> frames) {
        long changes = 0;
        long rows = planned.round == null ? 0 : planned.round.inlineRows;
        long shared = planned.round == null ? 0 : planned.round.shares.reused();
        if (shared > 0) {
            observer.readsShared(shared);
        }
        long images = 0;
        long inlineBytes = 0;
        long presignedBytes = 0;
        for (Frame f : frames) {
            if (f instanceof CommitFrame c) {
                changes += c.changes().size();
            } else if (f instanceof SegmentInline s) {
                inlineBytes += s.payload().length;
            } else if (f instanceof SegmentRef r) {
                if (r.mediaType() == MediaType.SQLITE) {
                    images += r.rowCount();
                } else {
                    rows += r.rowCount();
                }
                if (presignedUrls && r.url() != null) {
                    presignedBytes += r.byteLength();
                }
            }
        }
        if (changes > 0) {
            observer.rowsPulled(SyncObserver.Lane.COMMITS, changes);
        }
        if (rows > 0) {
            observer.rowsPulled(SyncObserver.Lane.ROWS, rows);
        }
        if (images > 0) {
            observer.rowsPulled(SyncObserver.Lane.IMAGE, images);
        }
        if (inlineBytes > 0) {
            observer.segmentBytes(SyncObserver.Delivery.INLINE, inlineBytes);
        }
        if (presignedBytes > 0) {
            observer.segmentBytes(SyncObserver.Delivery.PRESIGNED, presignedBytes);
        }
        VisibleCommits.tell(observer, planned, frames);
    }

    private Uni<PlannedResponse> plan(
            SyncRequestContext ctx,
            ReqHeader request,
            List<PushCommit> pushes,
            PullHeader pullHeader,
            List<SubscriptionFrame> subscriptions,
            RequestEntry entry,
            ServerCommand command,
            Context trace,
            AtomicReference<RoundState> planning) {
        PartitionState state = entry.partition();
        boolean isCommand = command != ServerCommand.NONE;
        // REMOTE.md §3: a command always writes in the partition's live epoch
        ReqHeader header =
                isCommand ? new ReqHeader(request.clientId(), request.schemaVersion(), state.logEpoch()) : request;
        return Uni.createFrom().deferred(() -> {
            // §2.1: the epoch is compared before any other request work.
            boolean resetRequired =
                    header.logEpoch() == null || !header.logEpoch().equals(state.logEpoch());
            CompiledSchema clientSchema = window.forVersion(header.schemaVersion());
            if (clientSchema == null) {
                // §1.6 schema-floor response: nothing else is processed.
                return Uni.createFrom()
                        .item(new PlannedResponse(new RespHeader(
                                window.oldest().version(),
                                window.current().version(),
                                state.logEpoch(),
                                resetRequired)));
            }
            if (resetRequired) {
                return Uni.createFrom().item(new PlannedResponse(new RespHeader(null, null, state.logEpoch(), true)));
            }
            if (!isCommand) { // a command's identity is the reserved one (REMOTE.md §3), its operations its own
                RequestValidation.validate(header, pushes, pullHeader, subscriptions, clientSchema, limits);
            }
            RoundState round = new RoundState(
                    ctx,
                    header,
                    clientSchema,
                    resolver,
                    window,
                    limits.maxResponseBytes(),
                    memory,
                    leases,
                    state.logEpoch());
            planning.set(round);
            round.command = command;
            round.trace = trace;
            round.reads = storage;
            ClientRecord client = entry.client();
            if (client != null && !client.actorId().equals(ctx.actorId())) {
                return Uni.createFrom()
                        .failure(new SyncError(ErrorCode.INVALID_CLIENT_ID, "clientId is bound to another actor"));
            }
            PlannedResponse planned = new PlannedResponse(round, subscriptions, pullHeader != null, client);
            planned.head.add(new RespHeader(null, null, state.logEpoch(), false));
            // §7.3.3: with leases configured every round resolves its authority first (a lease-authorized round
            // without a valid lease fails before any push), and a live resolution issues or slides the lease
            Uni<Void> authorized = !leases.enabled() ? Uni.createFrom().voidItem() : round.allowed.replaceWithVoid();
            return authorized
                    .flatMap(a -> push.pushAll(round, pushes, planned.head))
                    .flatMap(v -> pullHeader == null
                            ? Uni.createFrom().voidItem()
                            : tracing.span(
                                    "sync.pull",
                                    trace,
                                    SpanKind.INTERNAL,
                                    t -> pushes.isEmpty() && !isCommand && replicas != ReadReplicas.NONE
                                            ? pullRouted(round, pullHeader, subscriptions, planned, state)
                                            : pull.pullAll(round, pullHeader, subscriptions, planned, state)))
                    .flatMap(v -> !leases.enabled() || !round.liveAuthority
                            ? Uni.createFrom().voidItem()
                            : round.allowed
                                    .flatMap(allowed ->
                                            leases.issue(ctx, header.clientId(), allowed.get(), state.logEpoch()))
                                    // §7.3.2: LEASE right after RESP_HEADER, before any PUSH_RESULT
                                    .invoke(lease -> planned.head.add(1, lease))
                                    .replaceWithVoid())
                    .replaceWith(planned);
        });
    }

    /**
     * The pull of a pull-only round, read where {@link ReadReplicas#route} sends it (docs/SCALING.md, "Reads from
     * replicas"): what the client holds is the highest of its cursors and of its resumed bootstraps' pins; on a
     * replica the pull answers as of the partition's sequence read there ({@link ReadRoute#upToSeq}) at the newest.
     * A round with pushes reads the primary (its read-after-write is the primary's).
     */
    private Uni<Void> pullRouted(
            RoundState round,
            PullHeader pullHeader,
            List<SubscriptionFrame> subscriptions,
            PlannedResponse planned,
            PartitionState state) {
        long held = -1;
        for (SubscriptionFrame sub : subscriptions) {
            held = Math.max(held, sub.cursor());
            TableSchema table = round.clientSchema.table(sub.table());
            BootstrapResume resume = table == null ? null : BootstrapResume.parse(sub.bootstrapState(), table, state);
            if (resume != null) {
                held = Math.max(held, resume.asOfCommitSeq());
            }
        }
        return replicas.route(state.partition(), held).flatMap(route -> {
            PartitionState read = state;
            if (route.onReplica()) {
                round.reads = route.reads();
                read = route.upToSeq() >= state.maxCommitSeq()
                        ? state
                        : new PartitionState(
                                state.partition(),
                                state.logEpoch(),
                                route.upToSeq(),
                                state.horizonSeq(),
                                state.createdAtMs(),
                                state.lastSeenAtMs());
            }
            return pull.pullAll(round, pullHeader, subscriptions, planned, read);
        });
    }

    /**
     * The exit of a round: the client record upsert (only when due, see {@link ClientRecords#mustSave}) and
     * then the verify read, in one round trip. That read's horizon is the §4.6 recheck of the incremental
     * sections (each was read before it); a section that fell behind turns into {@code reset}, and if that
     * changes the client record the exit runs again (save, re-read) — so the last gate read always follows
     * every write and every window read. Read-verify-refuse: the gate must still admit and carry the entry
     * gate's token.
     */
    private Uni<List<Frame>> finish(
            String partition, ServeGate before, PlannedResponse planned, ClientRecord stored, long now) {
        ClientRecord record = planned.clientRecord(now);
        ClientRecord save = record != null && ClientRecords.mustSave(stored, record, now) ? record : null;
        return storage.finishRequest(partition, gates.runningSchemaVersion(), save)
                .flatMap(exit -> {
                    if (planned.expire(exit.horizonSeq())) {
                        return finish(partition, before, planned, save != null ? save : stored, now);
                    }
                    SyncError refusal = gates.verify(partition, before, exit.gate());
                    if (refusal != null) {
                        return check.refuse(refusal);
                    }
                    List<Frame> frames = planned.frames();
                    released(planned, frames);
                    return Uni.createFrom().item(frames);
                });
    }

    /**
     * §5.5 direct download: re-authorize against the requested scopes — the recomputed digest must belong
     * to an unexpired publication in the caller's partition and live log epoch.
     */
    public Uni<SegmentDownload> authorizeSegment(
            SyncRequestContext ctx, String segmentId, Map<String, List<String>> requestedScopes) {
        return tracing.span("segment.download", Context.current(), SpanKind.INTERNAL, t -> {
            Span.fromContext(t)
                    .setAttribute(Tracing.PARTITION, ctx.partition())
                    .setAttribute(Tracing.SEGMENT, segmentId);
            return delivery.authorize(ctx, segmentId, requestedScopes);
        });
    }

    /**
     * §5.4 native signed URL: the URL is the entire grant — no host authentication. The token's MAC, expiry
     * and segment are verified, and its digest must belong to a live publication in the partition its
     * audience names.
     */
    public Uni<SegmentDownload> downloadSigned(String segmentId, String token) {
        return tracing.span("segment.download", Context.current(), SpanKind.INTERNAL, t -> {
            Span.fromContext(t).setAttribute(Tracing.SEGMENT, segmentId);
            return delivery.downloadSigned(segmentId, token);
        });
    }
}
