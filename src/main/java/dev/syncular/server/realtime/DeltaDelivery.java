package dev.syncular.server.realtime;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.sync.RateBuckets;
import dev.syncular.server.sync.RealtimeDelta;
import dev.syncular.server.sync.Tracing;
import dev.syncular.server.wire.realtime.WakeReason;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * §8.2 delta delivery on this pod: each notified commit is read once (from the log, or from this pod's recent
 * commits) in one of the pod's {@link FanoutReads} slots and fanned out to the partition's sessions as per-session
 * deltas — or wake-ups (§8.3) where a session is suppressed, the serve gate refuses (§2.4), the partition used its
 * fan-out share on this pod (issue 45) or the read failed. A partition's deliveries and epoch rotations (§2.1) are
 * serialised through its tail in {@code partitionTails}, so every session sees its partition's commits in order
 * (§8.2 contiguity) and no delta of an old timeline follows a {@code reset-required}.
 */
final class DeltaDelivery {
    // the hub's log category, as before the hub was split (issue 46)
    private static final Logger LOG = Logger.getLogger(RealtimeHub.class);

    /** Sessions a fan-out delivers to in one event-loop task before it yields ({@link #fanOut}). */
    static final int SLICE = 256;

    /** The pod's fan-out reads running at once, across partitions ({@link FanoutReads}). */
    static final int FANOUT_READS = 8;
    /** Fan-out reads that may wait for a slot, oldest first; past that a partition's sockets are woken instead. */
    static final int FANOUT_BACKLOG = 10_000;
    /** How long the fan-out waits for a pending group's {@code COMMIT} answer before it reads the log. */
    private static final Duration PENDING_COMMIT_WAIT = Duration.ofSeconds(5);
    /** {@link Notified#heldEpoch} of a commit read from the log. */
    private static final String FROM_LOG = "";

    private final ConcurrentHashMap<String, CompletableFuture<Void>> partitionTails = new ConcurrentHashMap<>();
    /** The bytes the running fan-outs keep of encoded deltas ({@link FanoutDeltas#POD_MAX_BYTES}). */
    private final AtomicLong deltaBytes = new AtomicLong();
    /** The notified commits of each partition not fanned out yet, for the stalest clients ({@link StalestClients}). */
    private final PendingFanouts pending;

    private final FanoutReads fanoutReads;
    /**
     * Fan-out bytes per second of each partition on this pod ({@code Settings#fanoutBytesPerSecond}, 2 s of burst):
     * past its share a partition's deltas become wake-ups, so one tenant's large commits to many sockets cannot take
     * the pod's network and event loops from the others (issue 45). Guarded by itself.
     */
    private final RateBuckets fanoutShares;

    private final long maxDeltaBytes;
    private final int maxUnackedDeltas;
    private final SessionSet sessions;
    private final SyncStorage storage;
    private final SchemaWindow window;
    /** §2.4: whether the partition is served now (the engine's serve gate); deltas wait while it refuses. */
    private final Function<String, Uni<Boolean>> serves;
    /** A span per notified commit fanned out to this pod's sockets ({@code realtime.fanout}). */
    private final Tracing tracing;

    private final RealtimeMetrics metrics;
    private final Supplier<RealtimeHub.PartitionTraffic> traffic;

    /**
     * Delivery to {@code sessions} with the limits of {@code settings} ({@link RealtimeHub.Settings#maxDeltaBytes},
     * {@link RealtimeHub.Settings#maxUnackedDeltas}, {@link RealtimeHub.Settings#fanoutBytesPerSecond}), its commits
     * read in {@code fanoutReads} slots; {@code traffic} is told each delta sent, {@code pending} each commit heard and
     * fanned out.
     */
    DeltaDelivery(
            RealtimeHub.Settings settings,
            FanoutReads fanoutReads,
            SessionSet sessions,
            SyncStorage storage,
            SchemaWindow window,
            Function<String, Uni<Boolean>> serves,
            Tracing tracing,
            RealtimeMetrics metrics,
            Supplier<RealtimeHub.PartitionTraffic> traffic,
            PendingFanouts pending) {
        this.pending = pending;
        this.maxDeltaBytes = settings.maxDeltaBytes();
        this.maxUnackedDeltas = settings.maxUnackedDeltas();
        this.fanoutShares = new RateBuckets(settings.fanoutBytesPerSecond(), Duration.ofSeconds(2), System::nanoTime);
        this.fanoutReads = fanoutReads;
        this.sessions = sessions;
        this.storage = storage;
        this.window = window;
        this.serves = serves;
        this.tracing = tracing;
        this.metrics = metrics;
        this.traffic = traffic;
    }

    /** Commit {@code seq} of {@code partition} was notified: fanned out in notification order per partition. */
    void committed(String partition, long seq) {
        Set<RealtimeSession> heardBy = sessions.of(partition);
        if (heardBy.isEmpty()) {
            return;
        }
        // §8.7: a commit heard while a socket round is in flight is of that round's window, whenever its fan-out
        // reaches the session (a wake-up, never a delta)
        for (RealtimeSession s : heardBy) {
            s.heard(seq);
        }
        // the commit and the serve gate are read as soon as one of the pod's fan-out read slots is free, in arrival
        // order across partitions (a burst over thousands of partitions waits in the bounded backlog instead of
        // asking the pool for thousands of reads at once); only the deliveries queue behind each other, so every
        // session still sees the partition's commits in order (§8.2: deltas are cursor-contiguous per connection)
        // a root span: the notification carries no trace context (§8.2 payload is "partition:seq"); the fan-out
        // links to the push span stored with the commit instead (fanOut)
        long heardMs = System.currentTimeMillis();
        pending.heard(partition, heardMs);
        Span span = tracing.start("realtime.fanout", Context.root(), SpanKind.CONSUMER);
        span.setAttribute(Tracing.PARTITION, partition)
                .setAttribute(Tracing.COMMIT_SEQ, seq)
                .setAttribute(Tracing.SOCKETS, (long) heardBy.size());
        CompletableFuture<Notified> read = fanoutReads.submit(() -> read(partition, seq, heardMs));
        CompletableFuture<Void> tail = partitionTails.compute(
                partition,
                (k, previous) -> (previous == null ? CompletableFuture.<Void>completedFuture(null) : previous)
                        .thenCompose(v -> read)
                        .thenCompose(n -> fanOut(n, span))
                        .exceptionally(e -> {
                            // the partition's sockets are woken: their clients pull what the fan-out missed (§8.3)
                            Throwable cause =
                                    e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                            if (cause instanceof FanoutReads.BacklogFull) {
                                metrics.fanoutOverflow();
                            } else {
                                metrics.failures().failed(RealtimeFailures.Kind.FANOUT, e);
                            }
                            sessions.of(partition).forEach(s -> {
                                s.owe(heardMs, Staleness.FANOUT_BACKLOG);
                                s.lostNotifications(metrics);
                            });
                            return null;
                        }));
        tail.whenComplete((v, e) -> {
            pending.done(partition); // in notification order: the partition's tail runs its commits one by one
            partitionTails.remove(partition, tail);
            Tracing.end(span, e);
        });
    }

    /**
     * §2.1 restore rotation, announced on the commit channel by whichever pod rotated: every local session of the
     * partition holds the prior timeline, so it is fenced — no delta until its client has pulled again — and told
     * {@code reset-required} (§8.3); the pull that follows answers the new {@code logEpoch} with the reset.
     */
    void epochRotated(String partition) {
        if (!sessions.has(partition)) {
            return;
        }
        // queued behind the partition's pending fan-outs, so no delta of the old timeline follows the wake-up
        CompletableFuture<Void> tail = partitionTails.compute(
                partition,
                (k, previous) -> (previous == null ? CompletableFuture.<Void>completedFuture(null) : previous)
                        .thenRun(() -> sessions.of(partition).forEach(s -> s.epochRotated(metrics))));
        tail.whenComplete((v, e) -> partitionTails.remove(partition, tail));
    }

    /**
     * A notified commit as read from the log ({@code null} once pruned), or from this pod's recent commits of epoch
     * {@code heldEpoch} ({@link #FROM_LOG} when read from the log), and whether the gate serves (§2.4).
     */
    private record Notified(
            String partition, long seq, long heardMs, StoredCommit commit, String heldEpoch, boolean serving) {
        /** The commit's creation time, or when it was heard when it is gone from the log. */
        long createdAtMs() {
            return commit == null ? heardMs : commit.createdAtMs();
        }
    }

    /**
     * Reads notified commit {@code seq} and whether the gate serves (run in a {@link #fanoutReads} slot). A commit
     * this pod made is taken from its recent commits ({@code storage.recentCommits()}) in the epoch of one of the
     * partition's sessions; only sessions of that epoch get it as a delta.
     */
    private CompletableFuture<Notified> read(String partition, long seq, long heardMs) {
        String epoch = sessionEpoch(partition);
        CompletableFuture<StoredCommit> held = epoch == null
                ? null
                : storage.recentCommits().commit(partition, epoch, seq).orElse(null);
        if (held == null) {
            return fromLog(partition, seq, heardMs);
        }
        Uni<StoredCommit> answer = Uni.createFrom().completionStage(held);
        if (!held.isDone()) {
            // the commit's group awaits its COMMIT's answer (the NOTIFY came first): continue on this context, not
            // inside the push's callback; a bound in case the answer never comes (then the log is read)
            io.vertx.core.Context here = io.vertx.core.Vertx.currentContext();
            answer = answer.ifNoItem()
                    .after(PENDING_COMMIT_WAIT)
                    .recoverWithItem((StoredCommit) null)
                    .emitOn(task -> {
                        if (here != null) {
                            here.runOnContext(v -> task.run());
                        } else {
                            task.run();
                        }
                    });
        }
        return answer.onItem()
                .transformToUni(c -> c == null
                        ? Uni.createFrom().completionStage(() -> fromLog(partition, seq, heardMs))
                        : serves.apply(partition).map(open -> new Notified(partition, seq, heardMs, c, epoch, open)))
                .subscribeAsCompletionStage();
    }

    private CompletableFuture<Notified> fromLog(String partition, long seq, long heardMs) {
        return Uni.combine()
                .all()
                .unis(storage.readCommit(partition, seq), serves.apply(partition))
                .with((c, open) -> new Notified(partition, seq, heardMs, c, FROM_LOG, open))
                .subscribeAsCompletionStage();
    }

    /** The log epoch of one of the partition's sessions not fenced by a rotation, or {@code null}. */
    private String sessionEpoch(String partition) {
        for (RealtimeSession s : sessions.of(partition)) {
            String e = s.logEpoch;
            if (e != null) {
                return e;
            }
        }
        return null;
    }

    /**
     * Delivers notified commit {@code n} to each session of its partition, {@value #SLICE} sessions a task: a commit
     * of a scope that 10,000 sockets hold had held one event loop for seconds, so each slice runs as a task of its
     * own on the context the fan-out started on, and the loop serves its other work between them. The future ends
     * once every session had its turn (the partition's next commit waits for it: deltas stay in order). Sessions
     * that join meanwhile are not in the list: they read the partition's head after registering, which covers the
     * commit. With tracing on, the fan-out's {@code span} links to the push span stored with the commit (whichever
     * pod pushed it), and the first {@value Tracing#SAMPLED_DELIVERIES} sessions served get a
     * {@code realtime.delivery} span each under it.
     */
    private CompletableFuture<Void> fanOut(Notified n, Span span) {
        List<RealtimeSession> partitionSessions = List.copyOf(sessions.of(n.partition()));
        if (partitionSessions.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        boolean traced = span.isRecording();
        if (traced && n.commit() != null) {
            // the push that made the commit, on this pod or another: its context is stored with the commit
            SpanContext push = Tracing.linkOf(n.commit().traceParent());
            if (push.isValid()) {
                span.addLink(push);
            }
        }
        Set<String> keys = n.commit() == null ? Set.of() : RealtimeDelta.scopeKeys(window, n.commit());
        CompletableFuture<Void> done = new CompletableFuture<>();
        FanoutDeltas deltas = new FanoutDeltas(n.commit(), deltaBytes);
        done.whenComplete((v, e) -> deltas.release());
        deliverSlice(partitionSessions, 0, n, keys, deltas, span, io.vertx.core.Vertx.currentContext(), done);
        return done;
    }

    /** Delivers to sessions {@code from} and on, a slice now and the rest in later tasks of {@code on}. */
    private void deliverSlice(
            List<RealtimeSession> all,
            int from,
            Notified n,
            Set<String> keys,
            FanoutDeltas deltas,
            Span span,
            io.vertx.core.Context on,
            CompletableFuture<Void> done) {
        int start = from;
        while (true) {
            int end = Math.min(all.size(), start + SLICE);
            try {
                for (int i = start; i < end; i++) {
                    deliverTraced(all.get(i), n, keys, deltas, span, i);
                }
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
                return;
            }
            if (end == all.size()) {
                done.complete(null);
                return;
            }
            if (on != null) {
                int next = end;
                on.runOnContext(v -> deliverSlice(all, next, n, keys, deltas, span, on, done));
                return;
            }
            start = end; // off a Vert.x context (tests): the slices one after the other
        }
    }

    /** {@link #deliver} to the {@code index}-th session of the fan-out, under a delivery span when sampled. */
    private void deliverTraced(
            RealtimeSession s, Notified n, Set<String> keys, FanoutDeltas deltas, Span span, int index) {
        Span delivery = span.isRecording() && index < Tracing.SAMPLED_DELIVERIES
                ? tracing.start("realtime.delivery", Context.root().with(span), SpanKind.PRODUCER)
                        .setAttribute(Tracing.CLIENT_ID_HASH, Tracing.clientIdHash(s.clientId))
                : null;
        Throwable failed = null;
        try {
            String got = deliver(s, n, keys, deltas);
            if (delivery != null) {
                delivery.setAttribute(Tracing.DELIVERY, got);
            }
        } catch (RuntimeException e) {
            failed = e;
            // one connection's failure is its own: the others get the commit, this one catches up
            LOG.warn("Realtime delivery to one connection failed; it is woken to catch up", e);
            s.owe(n.createdAtMs(), Staleness.PULL_INTERVAL);
            s.lostNotifications(metrics);
        } finally {
            if (delivery != null) {
                Tracing.end(delivery, failed);
            }
        }
    }

    /** Commit {@code n} to session {@code s}: {@code "delta"}, {@code "wake"} or {@code "none"} (for its span). */
    private String deliver(RealtimeSession s, Notified n, Set<String> keys, FanoutDeltas deltas) {
        long seq = n.seq();
        StoredCommit commit = n.commit();
        boolean serving = n.serving();
        // a commit gone from the log (pruned already) cannot be bridged: every session counts it as matching
        boolean matching = commit == null || s.matches(keys);
        switch (s.onCommit(seq, matching, maxUnackedDeltas)) {
            case IGNORE -> {
                return "none";
            }
            case WAKE -> {
                s.owe(n.createdAtMs(), Staleness.PULL_INTERVAL);
                s.wake(WakeReason.CATCHUP_REQUIRED, metrics);
                return "wake";
            }
            case REMIND -> {
                s.wake(WakeReason.CATCHUP_REQUIRED, metrics);
                return "wake";
            }
            default -> { // DELIVER
                if (!serving) {
                    s.owe(n.createdAtMs(), Staleness.PULL_INTERVAL);
                    s.suppress(WakeReason.CATCHUP_REQUIRED, metrics); // the gate refuses: the pull will say why
                    return "wake";
                }
                if (commit == null
                        || s.logEpoch == null
                        || (!n.heldEpoch().isEmpty() && !n.heldEpoch().equals(s.logEpoch))) {
                    // gone from the log, a session fenced by an epoch rotation until its next socket round, or one
                    // of another epoch than the commit this pod held (§2.1): its client catches up by a pull
                    s.owe(n.createdAtMs(), Staleness.PULL_INTERVAL);
                    s.wake(WakeReason.CATCHUP_REQUIRED, metrics);
                    return "wake";
                }
                byte[] encoded = deltas.of(s.logEpoch, s.registrations());
                if (encoded == null) {
                    return "none";
                }
                long wait = 0;
                if (!fanoutShares.off()) {
                    synchronized (fanoutShares) {
                        wait = fanoutShares.waitMs(n.partition());
                    }
                }
                if (wait > 0) {
                    // issue 45: the partition used its fan-out bytes on this pod; its client catches up by a pull
                    metrics.fanoutShareRefusal();
                    s.owe(n.createdAtMs(), Staleness.PULL_INTERVAL);
                    s.suppress(WakeReason.CATCHUP_REQUIRED, metrics);
                    return "wake";
                }
                if (s.deliver(seq, commit.createdAtMs(), encoded, maxDeltaBytes, metrics)) {
                    if (!fanoutShares.off()) {
                        synchronized (fanoutShares) {
                            fanoutShares.take(n.partition(), encoded.length + 1L);
                        }
                    }
                    metrics.deltaLatency(commit.createdAtMs());
                    traffic.get().deltaVisible(commit.createdAtMs());
                    traffic.get().deltaSent(n.partition(), encoded.length + 1L); // the channel tag byte and the delta
                    return "delta";
                }
                return "wake"; // refused by the session (suppressed, a round in flight, oversize, backpressure)
            }
        }
    }
}
