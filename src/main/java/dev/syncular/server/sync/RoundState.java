package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.PullReads;
import dev.syncular.server.wire.Change;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.ReqHeader;
import dev.syncular.server.wire.SegmentInline;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Per-request state of one round (§1.5/§1.6): the memoized scope resolution of §3.2 rule 3, the
 * client's schema (§9), shared by its pushes (§6) and its pull (§4), and the pull's response budget (§1.4:
 * the planned response is held until the round is verified, so its size is the round's server memory).
 */
final class RoundState {
    final SyncRequestContext ctx;
    final ReqHeader header;
    final CompiledSchema clientSchema;
    final Uni<Optional<Map<String, List<String>>>> allowed;
    /** The highest commit sequence this request's pushes applied or replayed. */
    long lastCommitSeq;
    /** Rows of this request's inline rows segments (§5.7), told to the {@link SyncObserver} on release. */
    long inlineRows;
    /** The reads its pull's repeated sections share (issue 45: one snapshot per table and effective scopes). */
    SnapshotShares shares = SnapshotShares.NONE;
    /** REMOTE.md §3: the server command whose operations this round's one push carries; NONE for a sync round. */
    ServerCommand command = ServerCommand.NONE;
    /** The round's span ({@code sync.round}), the parent of its push, pull and segment spans; root without one. */
    Context trace = Context.root();
    /** The span of the commit being pushed ({@code sync.push}): the parent of its validators' webhook calls. */
    Context commitTrace = Context.root();
    /** §5.9.6: the blob existence check of the commit being applied. */
    BlobPresence blobs = BlobPresence.NONE;
    /**
     * Where the pull reads: the primary storage, or for a pull-only round a replica that holds what the round needs
     * ({@link dev.syncular.server.storage.ReadReplicas}).
     */
    PullReads reads;
    /** {@code SyncLimits#maxResponseBytes}. */
    final long responseBudget;
    /** Bytes of the data frames (segments, commits) the pull planned so far. */
    long responseBytes;
    /** The pod-wide memory the planned frames are taken from ({@link ResponseMemory}); given back by {@link #end}. */
    private final ResponseMemory memory;
    /** Whether the pod-wide memory was over its budget after a frame of this round was planned. */
    private boolean podMemorySpent;
    /** Set by {@link #end}: a frame planned later (a cancelled round's last page) takes nothing from the pod. */
    private boolean ended;

    /**
     * §7.3.3: whether the live resolver answered this round (so it issues or refreshes the lease), as opposed to a
     * failed resolver or lease-authorized service during an outage. Set when {@link #allowed} resolves.
     */
    volatile boolean liveAuthority;

    /**
     * @param leases §7.3 auth leases, or {@link AuthLeases#OFF} when not configured
     * @param logEpoch the partition's current {@code logEpoch} (§2.1): only a lease issued in it authorizes
     */
    RoundState(
            SyncRequestContext ctx,
            ReqHeader header,
            CompiledSchema clientSchema,
            ScopeResolver resolver,
            SchemaWindow window,
            long responseBudget,
            ResponseMemory memory,
            AuthLeases leases,
            String logEpoch) {
        this.ctx = ctx;
        this.header = header;
        this.clientSchema = clientSchema;
        Uni<Optional<Map<String, List<String>>>> live = Uni.createFrom()
                .deferred(() -> resolver.resolveScopes(ctx))
                .map(Optional::ofNullable)
                .invoke(o -> liveAuthority = o.isPresent());
        this.allowed = !leases.enabled()
                ? resolve(live, window)
                : resolve(
                        live
                                // §7.3.3: every failure but the outage signal still fails loud (revocation, §3.2 rule
                                // 5) ...
                                .onFailure(f -> !(f instanceof ScopeResolverOutage))
                                .recoverWithItem(Optional.empty())
                                // ... and an outage is served from a valid lease, or fails the request with its §10.2
                                // code
                                .onFailure()
                                .recoverWithUni(() -> leases.authorize(ctx, header.clientId(), logEpoch)
                                        .map(Optional::of)),
                        window);
        this.responseBudget = responseBudget;
        this.memory = memory;
    }

    /**
     * Whether the planned response reached the budget — its own, or the pod's ({@link ResponseMemory}): no further
     * page or commit is added to it.
     */
    boolean budgetSpent() {
        return responseBytes >= responseBudget || podMemorySpent;
    }

    /** Whether the budget is spent once a frame of {@code bytes} more is planned. */
    boolean spentAfter(long bytes) {
        return responseBytes + bytes >= responseBudget || podMemorySpent;
    }

    /** The round ended (its frames handed to the binding, or it failed): its bytes go back to the pod's memory. */
    synchronized void end() {
        if (!ended) {
            ended = true;
            memory.give(responseBytes);
        }
    }

    /** What a descriptor ({@code SEGMENT_REF}) counts against the budget. */
    static final int DESCRIPTOR_BYTES = 256;

    /** Counts a planned data frame against the budget: its payload bytes (an inline segment, a commit's rows). */
    void plan(Frame frame) {
        long bytes;
        if (frame instanceof SegmentInline inline) {
            bytes = inline.payload().length;
        } else if (frame instanceof CommitFrame commit) {
            bytes = 64;
            for (Change c : commit.changes()) {
                bytes += 32 + c.rowId().length() + (c.row() == null ? 0 : c.row().length);
            }
        } else {
            bytes = DESCRIPTOR_BYTES;
        }
        synchronized (this) {
            responseBytes += bytes;
            if (!ended && !memory.take(bytes)) {
                podMemorySpent = true;
            }
        }
    }

    /**
     * §3.2 rule 3: called at most once per request and memoized. A resolver failure is an empty result
     * (pulls revoke, writes are forbidden); a resolved key no table declares fails the whole request.
     */
    static Uni<Optional<Map<String, List<String>>>> resolveOnce(
            ScopeResolver resolver, SchemaWindow window, SyncRequestContext ctx) {
        return resolve(
                Uni.createFrom().deferred(() -> resolver.resolveScopes(ctx)).map(Optional::ofNullable), window);
    }

    private static Uni<Optional<Map<String, List<String>>>> resolve(
            Uni<Optional<Map<String, List<String>>>> resolution, SchemaWindow window) {
        return resolution
                .onFailure(f -> !(f instanceof SyncError && isLeaseCode(((SyncError) f).code())))
                .recoverWithItem(Optional.empty())
                .invoke(o -> o.ifPresent(m -> EffectiveScopes.validateAllowed(window.current(), m)))
                .memoize()
                .indefinitely();
    }

    private static boolean isLeaseCode(ErrorCode code) {
        return code == ErrorCode.AUTH_LEASE_REQUIRED || code == ErrorCode.AUTH_LEASE_REVOKED;
    }
}
