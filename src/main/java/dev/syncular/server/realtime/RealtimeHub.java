package dev.syncular.server.realtime;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.config.ReadWriteTarget;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.RealtimeSignals;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.sync.RateBuckets;
import dev.syncular.server.sync.RealtimeDelta;
import dev.syncular.server.sync.Tracing;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.realtime.ControlMessage;
import dev.syncular.server.wire.realtime.ControlMessages;
import dev.syncular.server.wire.realtime.WakeReason;
import io.micrometer.core.instrument.MeterRegistry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.quarkus.websockets.next.CloseReason;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.pubsub.PgSubscriber;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.jboss.logging.Logger;

/**
 * A realtime hub (§8.2, §8.5, §8.6.4) over one storage: the local sessions by partition, one {@code LISTEN}
 * connection on the storage's commit and presence channels (a {@link PgSubscriber} that reconnects forever;
 * every re-{@code LISTEN} after the first wakes all local sockets with {@code catchup-required}, since
 * notifications in between are lost), each notified commit read once from the log and fanned out as
 * per-session deltas, the presence registry, and heartbeats. The pod has one ({@link PodRealtime}); each
 * conformance instance has its own.
 */
public final class RealtimeHub {
    private static final Logger LOG = Logger.getLogger(RealtimeHub.class);

    /**
     * What a hub is configured with. {@code podId} names the LISTEN connection ({@code application_name});
     * {@code listen} are its connection options, one per database host in the datasource's order (the options the
     * application's pool connects with, {@code config.BoundedPgPool#listenOptions}): the hub listens on the only
     * one or, when there are more, on the one that accepts writes ({@link ReadWriteTarget}).
     */
    public record Settings(
            String podId,
            List<PgConnectOptions> listen,
            long maxDeltaBytes,
            int maxUnackedDeltas,
            boolean presenceEnabled,
            long maxPresenceBytes,
            Duration heartbeatInterval,
            LongSupplier clock,
            long outboundBufferBytes,
            Duration outboundStuckTimeout,
            double presencePerSecond,
            int presenceBurst,
            double fanoutBytesPerSecond) {
        public Settings {
            if (listen.isEmpty()) {
                throw new IllegalArgumentException("a realtime hub needs the connection options of one database host");
            }
            listen = List.copyOf(listen);
        }
    }

    private static final long RECONNECT_DELAY_MS = 500;
    private static final long MAX_RECONNECT_DELAY_MS = 10_000;

    private final Settings settings;
    /** §2.4: whether the partition is served now (the engine's serve gate); deltas wait while it refuses. */
    private final Function<String, Uni<Boolean>> serves;

    private final ConcurrentHashMap<String, Set<RealtimeSession>> byPartition = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, CompletableFuture<Void>> partitionTails = new ConcurrentHashMap<>();
    private final AtomicInteger open = new AtomicInteger();
    /**
     * The pod's fan-out reads: {@value #FANOUT_READS} at a time across partitions, up to {@value #FANOUT_BACKLOG}
     * waiting oldest first; past that a partition's sockets are woken instead.
     */
    private final FanoutReads fanoutReads = new FanoutReads(FANOUT_READS, FANOUT_BACKLOG);
    /**
     * Fan-out bytes per second of each partition on this pod ({@code Settings#fanoutBytesPerSecond}, 2 s of burst):
     * past its share a partition's deltas become wake-ups, so one tenant's large commits to many sockets cannot take
     * the pod's network and event loops from the others (issue 45). Guarded by itself.
     */
    private final RateBuckets fanoutShares;

    private static final int FANOUT_READS = 8;
    private static final int FANOUT_BACKLOG = 10_000;
    private final SyncStorage storage;
    private final RealtimeSignals signals;
    private final SchemaWindow window;
    private final Vertx vertx;
    /** The LISTEN connection's host: the only one, or the one of a list that accepts writes now. */
    private final ReadWriteTarget target;

    private final RealtimeMetrics metrics;
    private final PresenceBus presenceBus;
    private final PresenceRegistry presence;
    private volatile PgSubscriber subscriber;
    private long heartbeatTimer = -1;
    /** §8.5 the idle reaper's judgement, on the heartbeat timer. */
    private final SilenceWatch silence;
    /** The close of a socket reaped for silence (§8.5): a normal closure, its reason for the client's logs. */
    static final CloseReason IDLE = new CloseReason(1000, "idle: nothing heard for three heartbeat intervals");

    private volatile boolean listening;
    private volatile boolean presenceListening;
    private volatile boolean draining;
    private final CompletableFuture<Void> commitsHeard = new CompletableFuture<>();
    private final List<CommitListener> commitListeners = new CopyOnWriteArrayList<>();

    /**
     * Hears the hub's commit channel besides its sockets (the REMOTE.md §6 watches): every notified commit of
     * every partition, on whichever pod it was taken, on the LISTEN connection's event loop (never block there).
     */
    public interface CommitListener {
        /** Commit {@code seq} of {@code partition} was announced. */
        void committed(String partition, long seq);

        /** The partition's log epoch was rotated (§2.1). */
        void partitionReset(String partition);

        /** A re-{@code LISTEN}: notifications in between were lost. */
        void notificationsLost();
    }

    /**
     * Told the realtime traffic of each partition on this pod (the loudest tenants, {@code ops.TenantLoad}), on the
     * thread that sent it, often an event loop: return at once, never block.
     */
    public interface PartitionTraffic {
        PartitionTraffic NONE = new PartitionTraffic() {};

        /** A delta (§8.2) of {@code bytes} (as written, its tag included) was sent to a socket of {@code partition}. */
        default void deltaSent(String partition, long bytes) {}

        /** A presence publish (§8.6) of a connection of {@code partition} was held past the connection's rate. */
        default void presenceCoalesced(String partition) {}
    }

    private volatile PartitionTraffic traffic = PartitionTraffic.NONE;

    /** Where this hub tells each partition's traffic ({@link PartitionTraffic#NONE} until set). */
    public void partitionTraffic(PartitionTraffic traffic) {
        this.traffic = traffic;
    }

    /** Adds a listener of the commit channel ({@link CommitListener}). */
    public void addCommitListener(CommitListener listener) {
        commitListeners.add(listener);
    }

    private void toListeners(Consumer<CommitListener> call) {
        for (CommitListener l : commitListeners) {
            try {
                call.accept(l);
            } catch (RuntimeException e) {
                LOG.warn("A commit listener failed", e);
            }
        }
    }

    private final CompletableFuture<Void> presenceHeard = new CompletableFuture<>();
    /** A span per notified commit fanned out to this pod's sockets ({@code realtime.fanout}). */
    private final Tracing tracing;

    public RealtimeHub(
            Settings settings,
            SyncStorage storage,
            RealtimeSignals signals,
            SchemaWindow window,
            Vertx vertx,
            Pool pool,
            MeterRegistry registry,
            Function<String, Uni<Boolean>> serves,
            Tracing tracing) {
        this.tracing = tracing;
        this.settings = settings;
        this.silence = new SilenceWatch(settings.heartbeatInterval().toMillis(), SilenceWatch.MONOTONIC_MS);
        this.fanoutShares = new RateBuckets(settings.fanoutBytesPerSecond(), Duration.ofSeconds(2), System::nanoTime);
        this.serves = serves;
        this.storage = storage;
        this.signals = signals;
        this.window = window;
        this.vertx = vertx;
        this.target = new ReadWriteTarget(vertx, settings.listen());
        String commits = signals.notificationChannel();
        String presenceChannel = "syncular_presence_" + commits.substring("syncular_commits_".length());
        this.presenceBus = new PresenceBus(
                pool,
                presenceChannel.length() > 63 ? presenceChannel.substring(0, 63) : presenceChannel,
                settings.podId(),
                () -> metrics().presenceNotifyDrop(),
                this::reannouncePresence);
        this.presence = new PresenceRegistry(
                settings.podId(), this::sessionsOf, presenceBus, settings.clock(), settings.maxPresenceBytes());
        this.metrics = new RealtimeMetrics(registry, open::get, presence::localMembers, fanoutReads::backlog);
    }

    /**
     * A {@code application_name} for a LISTEN connection, so an operator finds it in {@code pg_stat_activity}:
     * a random part, then the host name (the pod name in Kubernetes), at most the 63 bytes PostgreSQL keeps.
     */
    public static String podId(String hostname) {
        String id = "syncular-rt-" + UUID.randomUUID().toString().substring(0, 8)
                + (hostname == null || hostname.isBlank() ? "" : "-" + hostname.replaceAll("[^A-Za-z0-9._-]", "_"));
        return id.length() > 63 ? id.substring(0, 63) : id;
    }

    /**
     * Opens the LISTEN connection and starts the heartbeats; completes once the hub listens (commits made from
     * then on reach its sockets).
     */
    public CompletableFuture<Void> start() {
        listen(0);
        heartbeatTimer = vertx.setPeriodic(settings.heartbeatInterval().toMillis(), t -> heartbeat());
        return CompletableFuture.allOf(commitsHeard, presenceHeard);
    }

    /**
     * Opens a subscriber for the commit, control and presence channels. With one host it is that host's, and
     * reconnects forever by itself. With a host list ({@link ReadWriteTarget}: the write endpoint of a failover
     * pair, as for the pool) it is the host that accepts writes now, and every lost connection goes back here to
     * find it again, since a failover moves the primary and a standby refuses {@code LISTEN}; its first
     * {@code LISTEN} then counts as a re-{@code LISTEN}, since notifications in between were lost. A failed
     * connect (the first one too) is retried, with backoff ({@link #reconnectDelayMs}).
     */
    private void listen(int failedConnects) {
        if (draining) {
            return;
        }
        target.writableIndex().onComplete(found -> {
            if (found.succeeded()) {
                subscribe(found.result(), failedConnects);
            } else {
                metrics.failures().failed(RealtimeFailures.Kind.LISTEN, found.cause());
                vertx.setTimer(reconnectDelayMs(failedConnects + 1), t -> listen(failedConnects + 1));
            }
        });
    }

    /** A subscriber on host {@code host} of {@link Settings#listen} ({@link #listen}). */
    private void subscribe(int host, int failedConnects) {
        if (draining) {
            return;
        }
        boolean failover = settings.listen().size() > 1;
        PgSubscriber next = PgSubscriber.subscriber(vertx, settings.listen().get(host));
        AtomicBoolean connected = new AtomicBoolean(); // this subscriber's LISTEN took effect once
        subscriber = next;
        if (draining) { // drain began meanwhile and may have closed the previous subscriber only
            next.close();
            return;
        }
        next.reconnectPolicy(retries -> failover ? -1L : RECONNECT_DELAY_MS);
        next.channel(signals.notificationChannel()).handler(this::notified).subscribeHandler(v -> {
            if (listening) {
                // a re-LISTEN: whatever was committed while the connection was down was never announced here
                metrics.listenReconnect();
                wakeAllSpread();
                toListeners(CommitListener::notificationsLost);
            }
            listening = true;
            connected.set(true);
            commitsHeard.complete(null);
        });
        // operator disconnects of an actor's or a client's sockets, announced by whichever pod took the admin request
        next.channel(signals.controlChannel())
                .handler(payload -> OperatorDisconnects.received(payload, this::sessionsOf, metrics.failures()));
        if (settings.presenceEnabled()) {
            next.channel(presenceBus.channel())
                    .handler(payload -> presenceBus.received(payload, this::presenceMessage))
                    .subscribeHandler(v -> {
                        if (presenceListening) {
                            // notifications in between are lost: forget the other pods, ask them to re-announce
                            presence.forgetOtherPods();
                        }
                        presenceListening = true;
                        presenceBus.pod("hello");
                        presenceHeard.complete(null);
                    });
        } else {
            presenceHeard.complete(null);
        }
        AtomicBoolean moved = new AtomicBoolean();
        if (failover) {
            // a lost connection: find the host that accepts writes again
            next.closeHandler(v -> retry(next, moved, connected.get() ? 0 : failedConnects + 1));
        }
        next.connect().onFailure(e -> {
            metrics.failures().failed(RealtimeFailures.Kind.LISTEN, e);
            // the subscriber's reconnect policy covers only a connection that was once up: a failed connect is
            // retried here until the hub listens — readiness waits for it, and nothing else would bring the pod
            // back into rotation
            retry(next, moved, failedConnects + 1);
        });
    }

    /**
     * Once per failed subscriber (its close and its failed connect may both report): {@link #listen} again after a
     * delay that doubles with each connect failed in a row, from {@link #RECONNECT_DELAY_MS} to {@link
     * #MAX_RECONNECT_DELAY_MS}.
     */
    private void retry(PgSubscriber failed, AtomicBoolean moved, int failedConnects) {
        if (draining || !moved.compareAndSet(false, true)) {
            return;
        }
        failed.close();
        vertx.setTimer(reconnectDelayMs(failedConnects), t -> listen(failedConnects));
    }

    /** The delay before the next connect after {@code failedConnects} failed in a row (0 after a lost connection). */
    static long reconnectDelayMs(int failedConnects) {
        int doublings = Math.min(Math.max(failedConnects - 1, 0), 5);
        return Math.min(RECONNECT_DELAY_MS << doublings, MAX_RECONNECT_DELAY_MS);
    }

    /**
     * After a re-LISTEN every local socket may have missed commits: each is fenced at once (no delta until its
     * client caught up) and woken with {@code catchup-required} (§8.3) at a random instant within a spread of
     * {@value #WAKES_PER_SECOND_AFTER_RECONNECT} sockets a second (at most {@value #MAX_WAKE_SPREAD_MS} ms), so
     * a reconnect does not send every client's catch-up pull to the pod in the same instant.
     */
    private void wakeAllSpread() {
        List<Map.Entry<String, RealtimeSession>> all = new ArrayList<>();
        byPartition.forEach((partition, set) -> set.forEach(s -> {
            s.fence();
            all.add(Map.entry(partition, s));
        }));
        long spreadMs = Math.min(MAX_WAKE_SPREAD_MS, all.size() * 1000L / WAKES_PER_SECOND_AFTER_RECONNECT);
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (var e : all) {
            long delay = spreadMs < 1 ? 0 : random.nextLong(spreadMs);
            if (delay < 1) {
                e.getValue().lostNotifications(metrics);
                continue;
            }
            vertx.setTimer(delay, t -> {
                Set<RealtimeSession> now = byPartition.get(e.getKey());
                if (now != null && now.contains(e.getValue())) {
                    e.getValue().lostNotifications(metrics);
                }
            });
        }
    }

    private static final int WAKES_PER_SECOND_AFTER_RECONNECT = 2000;
    private static final long MAX_WAKE_SPREAD_MS = 5000;

    /** After dropped presence NOTIFYs: the other pods forget this pod's peers, then hear every document again. */
    private void reannouncePresence() {
        if (!draining) {
            presenceBus.pod("bye");
            presence.announceLocal();
        }
    }

    /** Whether the LISTEN connection is (or was once) established: readiness waits for it. */
    public boolean listening() {
        return listening;
    }

    /**
     * Drain: upgrades are refused from now on ({@link #draining()}), in-flight socket rounds get up to
     * {@code grace} less the closes' reserve ({@link SocketDrain#closeReserveNanos}) to finish, then every
     * remaining socket is closed with 1001 (going away), all at once ({@link SocketDrain}), the other pods hear
     * this hub's {@code bye} and the LISTEN connection is released — all within {@code grace}. Blocks: run it
     * off the event loop.
     */
    public synchronized void drain(Duration grace) {
        if (draining) {
            return;
        }
        draining = true;
        long deadline = System.nanoTime() + grace.toNanos();
        long roundsDeadline = deadline - SocketDrain.closeReserveNanos(grace);
        while (roundsInFlight() > 0 && System.nanoTime() < roundsDeadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        SocketDrain.closeAll(byPartition.values(), deadline, metrics.failures()); // concurrently, within the grace
        if (heartbeatTimer >= 0) {
            vertx.cancelTimer(heartbeatTimer);
        }
        if (subscriber != null) {
            if (settings.presenceEnabled()) {
                // the other pods drop this hub's peers now rather than after three silent heartbeats
                presenceBus.pod("bye");
                try {
                    presenceBus.flushed().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (Exception e) {
                    LOG.debug("Presence bye not confirmed before shutdown", e);
                }
            }
            subscriber.close();
        }
    }

    private int roundsInFlight() {
        int n = 0;
        for (Set<RealtimeSession> set : byPartition.values()) {
            for (RealtimeSession s : set) {
                n += s.roundInFlight() ? 1 : 0;
            }
        }
        return n;
    }

    /**
     * The outbound budget of a new connection on this hub; {@code closeTransport} closes its TCP connection when
     * its close frame cannot get through.
     */
    OutboundBudget outbound(WebSocketConnection connection, Runnable closeTransport) {
        return new OutboundBudget(
                connection,
                closeTransport,
                vertx,
                settings.outboundBufferBytes(),
                settings.outboundStuckTimeout(),
                metrics);
    }

    /**
     * The longest §8.1 control message a connection may send: 256 Ki characters, or the presence document cap
     * (§8.6.2) and 64 Ki more when that is larger — so an oversized presence document is still answered
     * {@code presence.too_large}.
     */
    long maxControlChars() {
        return Math.max(256 * 1024, settings.maxPresenceBytes() + 64 * 1024);
    }

    /** The realtime metrics (a method: fields of a client proxy are not the bean's). */
    RealtimeMetrics metrics() {
        return metrics;
    }

    /** The Vert.x instance the hub's timers run on. */
    Vertx vertx() {
        return vertx;
    }

    /** The hub's clock (epoch milliseconds; the seam tests replace). */
    LongSupplier clock() {
        return settings.clock();
    }

    /** Whether the hub is draining (readiness DOWN, upgrades refused). */
    boolean draining() {
        return draining;
    }

    /** The {@code application_name} of this hub's LISTEN connection. */
    public String podId() {
        return settings.podId();
    }

    int openConnections() {
        return open.get();
    }

    void add(RealtimeSession s) {
        byPartition.compute(s.ctx.partition(), (k, set) -> {
            Set<RealtimeSession> out = set == null ? ConcurrentHashMap.newKeySet() : set;
            out.add(s);
            return out;
        });
        open.incrementAndGet();
    }

    void remove(RealtimeSession s) {
        s.closed = true;
        byPartition.computeIfPresent(s.ctx.partition(), (k, set) -> {
            if (set.remove(s)) {
                open.decrementAndGet();
            }
            return set.isEmpty() ? null : set;
        });
        if (settings.presenceEnabled()) {
            presence.disconnected(s);
        }
    }

    private Iterable<RealtimeSession> sessionsOf(String partition) {
        Set<RealtimeSession> set = byPartition.get(partition);
        return set == null ? Set.of() : set;
    }

    /** The sessions registered for {@code partition} (per-connection accounting, Appendix B 17). */
    int sessionCount(String partition) {
        Set<RealtimeSession> set = byPartition.get(partition);
        return set == null ? 0 : set.size();
    }

    /** A presence rate for a new connection ({@link Settings#presencePerSecond}, {@link PresenceRate}). */
    PresenceRate presenceRate() {
        return settings.presencePerSecond() <= 0
                ? PresenceRate.OFF
                : new PresenceRate(settings.presencePerSecond(), settings.presenceBurst());
    }

    /**
     * §8.6: a publish or leave of local connection {@code s}; ignored (tolerated) with presence off. Past the
     * connection's rate the newest document per key is held and goes out when its rate allows ({@link PresenceRate}).
     */
    void presencePublished(RealtimeSession s, ControlMessage.PresencePublish m) {
        if (!settings.presenceEnabled()) {
            return;
        }
        PresenceRate rate = s.presenceRate;
        if (rate.off()) {
            presence.publish(s, m);
            return;
        }
        synchronized (rate) {
            if (!rate.admit(m, System.nanoTime())) {
                metrics.presenceCoalesced();
                traffic.presenceCoalesced(s.ctx.partition());
                scheduleHeldPresence(s);
                return;
            }
        }
        presence.publish(s, m);
    }

    /** Sends the connection's held presence documents once its rate allows, and again while some are held. */
    private void scheduleHeldPresence(RealtimeSession s) {
        PresenceRate rate = s.presenceRate;
        long delay;
        synchronized (rate) {
            if (rate.releaseScheduled) {
                return;
            }
            rate.releaseScheduled = true;
            delay = rate.millisToNextToken(System.nanoTime());
        }
        vertx.setTimer(delay, t -> {
            List<ControlMessage.PresencePublish> due;
            boolean more;
            synchronized (rate) {
                rate.releaseScheduled = false;
                due = s.closed ? List.of() : rate.release(System.nanoTime());
                more = !s.closed && rate.holding();
            }
            for (ControlMessage.PresencePublish p : due) {
                presence.publish(s, p);
            }
            if (more) {
                scheduleHeldPresence(s);
            }
        });
    }

    /** §8.6.3: {@code s} now holds {@link RealtimeSession#scopeKeys()}, and held {@code before}. */
    void presenceRegistered(RealtimeSession s, Set<String> before) {
        if (settings.presenceEnabled()) {
            presence.registrationChanged(s, before, s.scopeKeys());
        }
    }

    /** A presence message of another pod (§8.6 across pods, {@link PresenceBus}). */
    private void presenceMessage(String pod, ObjectNode m) {
        String type = m.path("t").asText();
        switch (type) {
            case "set", "del" -> {
                String partition = m.path("p").asText(null);
                String key = m.path("k").asText(null);
                String actor = m.path("a").asText(null);
                String client = m.path("c").asText(null);
                if (partition == null || key == null || actor == null || client == null) {
                    return;
                }
                PresenceRegistry.Peer peer = new PresenceRegistry.Peer(actor, client);
                if (type.equals("del")) {
                    presence.remoteDelete(pod, partition, key, peer);
                } else if (m.get("d") instanceof ObjectNode doc) {
                    presence.remoteSet(pod, partition, key, peer, doc);
                }
            }
            case "hello" -> {
                presence.heard(pod);
                presence.announceLocal();
            }
            case "alive" -> presence.heard(pod);
            case "bye" -> presence.podGone(pod);
            default -> {}
        }
    }

    /** A commit notification {@code <partition>:<commitSeq>}: fanned out in notification order per partition. */
    void notified(String payload) {
        int colon = payload.lastIndexOf(':');
        if (colon < 0) {
            return;
        }
        String partition = payload.substring(0, colon);
        if (RealtimeSignals.EPOCH_NOTIFICATION.equals(payload.substring(colon + 1))) {
            epochRotated(partition);
            toListeners(l -> l.partitionReset(partition));
            return;
        }
        long seq;
        try {
            seq = Long.parseLong(payload.substring(colon + 1));
        } catch (NumberFormatException e) {
            return;
        }
        toListeners(l -> l.committed(partition, seq));
        Set<RealtimeSession> sessions = byPartition.get(partition);
        if (sessions == null || sessions.isEmpty()) {
            return;
        }
        // §8.7: a commit heard while a socket round is in flight is of that round's window, whenever its fan-out
        // reaches the session (a wake-up, never a delta)
        for (RealtimeSession s : sessions) {
            s.heard(seq);
        }
        // the commit and the serve gate are read as soon as one of the pod's fan-out read slots is free, in arrival
        // order across partitions (a burst over thousands of partitions waits in the bounded backlog instead of
        // asking the pool for thousands of reads at once); only the deliveries queue behind each other, so every
        // session still sees the partition's commits in order (§8.2: deltas are cursor-contiguous per connection)
        // a root span: the notification carries no trace context (§8.2 payload is "partition:seq")
        Span span = tracing.start("realtime.fanout", Context.root(), SpanKind.CONSUMER);
        span.setAttribute(Tracing.PARTITION, partition)
                .setAttribute(Tracing.COMMIT_SEQ, seq)
                .setAttribute(Tracing.SOCKETS, (long) sessions.size());
        CompletableFuture<Notified> read = fanoutReads.submit(() -> read(partition, seq));
        CompletableFuture<Void> tail = partitionTails.compute(
                partition,
                (k, previous) -> (previous == null ? CompletableFuture.<Void>completedFuture(null) : previous)
                        .thenCompose(v -> read)
                        .thenAccept(this::fanOut)
                        .exceptionally(e -> {
                            // the partition's sockets are woken: their clients pull what the fan-out missed (§8.3)
                            Throwable cause =
                                    e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                            if (cause instanceof FanoutReads.BacklogFull) {
                                metrics.fanoutOverflow();
                            } else {
                                metrics.failures().failed(RealtimeFailures.Kind.FANOUT, e);
                            }
                            Set<RealtimeSession> set = byPartition.get(partition);
                            if (set != null) {
                                set.forEach(s -> s.lostNotifications(metrics));
                            }
                            return null;
                        }));
        tail.whenComplete((v, e) -> {
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
        Set<RealtimeSession> sessions = byPartition.get(partition);
        if (sessions == null) {
            return;
        }
        // queued behind the partition's pending fan-outs, so no delta of the old timeline follows the wake-up
        CompletableFuture<Void> tail = partitionTails.compute(
                partition,
                (k, previous) -> (previous == null ? CompletableFuture.<Void>completedFuture(null) : previous)
                        .thenRun(() -> {
                            Set<RealtimeSession> now = byPartition.get(partition);
                            if (now != null) {
                                now.forEach(s -> s.epochRotated(metrics));
                            }
                        }));
        tail.whenComplete((v, e) -> partitionTails.remove(partition, tail));
    }

    /**
     * A notified commit as read from the log ({@code null} once pruned), or from this pod's recent commits of epoch
     * {@code heldEpoch} ({@link #FROM_LOG} when read from the log), and whether the gate serves (§2.4).
     */
    private record Notified(String partition, long seq, StoredCommit commit, String heldEpoch, boolean serving) {}

    /** {@link Notified#heldEpoch} of a commit read from the log. */
    private static final String FROM_LOG = "";

    /**
     * Reads notified commit {@code seq} and whether the gate serves (run in a {@link #fanoutReads} slot). A commit
     * this pod made is taken from its recent commits ({@code storage.recentCommits()}) in the epoch of one of the
     * partition's sessions; only sessions of that epoch get it as a delta.
     */
    private CompletableFuture<Notified> read(String partition, long seq) {
        String epoch = sessionEpoch(partition);
        CompletableFuture<StoredCommit> held = epoch == null
                ? null
                : storage.recentCommits().commit(partition, epoch, seq).orElse(null);
        if (held == null) {
            return fromLog(partition, seq);
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
                        ? Uni.createFrom().completionStage(() -> fromLog(partition, seq))
                        : serves.apply(partition).map(open -> new Notified(partition, seq, c, epoch, open)))
                .subscribeAsCompletionStage();
    }

    /** How long the fan-out waits for a pending group's {@code COMMIT} answer before it reads the log. */
    private static final Duration PENDING_COMMIT_WAIT = Duration.ofSeconds(5);

    private CompletableFuture<Notified> fromLog(String partition, long seq) {
        return Uni.combine()
                .all()
                .unis(storage.readCommit(partition, seq), serves.apply(partition))
                .with((c, open) -> new Notified(partition, seq, c, FROM_LOG, open))
                .subscribeAsCompletionStage();
    }

    /** The log epoch of one of the partition's sessions not fenced by a rotation, or {@code null}. */
    private String sessionEpoch(String partition) {
        Set<RealtimeSession> sessions = byPartition.get(partition);
        if (sessions != null) {
            for (RealtimeSession s : sessions) {
                String e = s.logEpoch;
                if (e != null) {
                    return e;
                }
            }
        }
        return null;
    }

    private void fanOut(Notified n) {
        Set<RealtimeSession> sessions = byPartition.get(n.partition());
        if (sessions == null) {
            return;
        }
        Set<String> keys = n.commit() == null ? Set.of() : RealtimeDelta.scopeKeys(window, n.commit());
        for (RealtimeSession s : sessions) {
            try {
                deliver(s, n, keys);
            } catch (RuntimeException e) {
                // one connection's failure is its own: the others get the commit, this one catches up
                LOG.warn("Realtime delivery to one connection failed; it is woken to catch up", e);
                s.lostNotifications(metrics);
            }
        }
    }

    private void deliver(RealtimeSession s, Notified n, Set<String> keys) {
        long seq = n.seq();
        StoredCommit commit = n.commit();
        boolean serving = n.serving();
        // a commit gone from the log (pruned already) cannot be bridged: every session counts it as matching
        boolean matching = commit == null || s.matches(keys);
        switch (s.onCommit(seq, matching, settings.maxUnackedDeltas())) {
            case IGNORE -> {}
            case WAKE -> s.wake(WakeReason.CATCHUP_REQUIRED, metrics);
            case DELIVER -> {
                if (!serving) {
                    s.suppress(WakeReason.CATCHUP_REQUIRED, metrics); // the gate refuses: the pull will say why
                    return;
                }
                if (commit == null
                        || s.logEpoch == null
                        || (!n.heldEpoch().isEmpty() && !n.heldEpoch().equals(s.logEpoch))) {
                    // gone from the log, a session fenced by an epoch rotation until its next socket round, or one
                    // of another epoch than the commit this pod held (§2.1): its client catches up by a pull
                    s.wake(WakeReason.CATCHUP_REQUIRED, metrics);
                    return;
                }
                Message delta = RealtimeDelta.delta(s.logEpoch, s.registrations(), commit);
                if (delta == null) {
                    return;
                }
                byte[] encoded = delta.encode();
                long wait = 0;
                if (!fanoutShares.off()) {
                    synchronized (fanoutShares) {
                        wait = fanoutShares.waitMs(n.partition());
                    }
                }
                if (wait > 0) {
                    // issue 45: the partition used its fan-out bytes on this pod; its client catches up by a pull
                    metrics.fanoutShareRefusal();
                    s.suppress(WakeReason.CATCHUP_REQUIRED, metrics);
                    return;
                }
                if (s.deliver(seq, encoded, settings.maxDeltaBytes(), metrics)) {
                    if (!fanoutShares.off()) {
                        synchronized (fanoutShares) {
                            fanoutShares.take(n.partition(), encoded.length + 1L);
                        }
                    }
                    metrics.deltaLatency(commit.createdAtMs());
                    traffic.deltaSent(n.partition(), encoded.length + 1L); // the channel tag byte and the delta
                }
            }
        }
    }

    /**
     * §8.5: a heartbeat to every socket; one not heard from for three intervals is closed (reaped), as silence is
     * judged by {@link SilenceWatch} (monotonic, and nothing closed by a tick that follows a stall of the pod).
     */
    private void heartbeat() {
        long now = settings.clock().getAsLong();
        SilenceWatch.Tick tick = silence.tick();
        if (settings.presenceEnabled() && presenceListening) {
            presenceBus.pod("alive");
            presence.expireSilentPods(silence, tick);
        }
        signals.notificationQueueUsage()
                .subscribe()
                .with(
                        metrics::notificationQueueUsage,
                        e -> metrics.failures().failed(RealtimeFailures.Kind.NOTIFY_QUEUE, e));
        String beat = ControlMessages.render(new ControlMessage.Heartbeat(now));
        for (Set<RealtimeSession> set : byPartition.values()) {
            for (RealtimeSession s : set) {
                if (s.idleAt(silence, tick)) {
                    s.connection()
                            .close(IDLE)
                            .subscribe()
                            .with(
                                    v -> {},
                                    e -> metrics.failures().report(RealtimeFailures.Kind.CLOSE, e, s.connection()));
                    continue;
                }
                s.sendHeartbeat(beat);
                s.connection()
                        .sendPing(Buffer.buffer())
                        .subscribe()
                        .with(
                                v -> {},
                                e -> metrics.failures().report(RealtimeFailures.Kind.PING_WRITE, e, s.connection()));
            }
        }
    }
}
