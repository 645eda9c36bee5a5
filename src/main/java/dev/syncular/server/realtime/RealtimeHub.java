package dev.syncular.server.realtime;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.RealtimeSignals;
import dev.syncular.server.storage.SignalListener;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.sync.Tracing;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * A realtime hub (§8.2, §8.5, §8.6.4) over one storage: the coordinator of the pod's realtime parts, each of one
 * concern — the local sessions by partition ({@link SessionSet}), the one {@code LISTEN} connection on the
 * storage's commit, control and presence channels ({@link CommitNotifications}: reconnects forever; every
 * re-{@code LISTEN} after the first wakes all local sockets with {@code catchup-required}, since notifications in
 * between are lost), each notified commit read once from the log and fanned out as per-session deltas
 * ({@link DeltaDelivery}), presence ({@link PresenceRelay} on the {@link PresenceRegistry} and {@link PresenceBus}),
 * heartbeats and idle reaping ({@link Heartbeats}). It starts them, drains them, and is what the channel and the
 * composition see. The pod has one ({@link PodRealtime}); each conformance instance has its own.
 */
public final class RealtimeHub {
    /** What a hub is configured with. {@code podId} names the pod in the presence relay (and its LISTEN connection). */
    public record Settings(
            String podId,
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
            double fanoutBytesPerSecond,
            long socketBudgetBytes) {}

    /** A hub's {@code socketBudgetBytes} with no pod-wide bound (the conformance host's instances). */
    public static final long NO_SOCKET_BUDGET = SocketBudget.OFF;

    private final Settings settings;
    private final Vertx vertx;
    private final RealtimeMetrics metrics;
    private final SessionSet sessions = new SessionSet();
    private final SocketBudget socketBudget;
    private final PendingFanouts pendingFanouts = new PendingFanouts();
    private final PresenceRelay presence;
    private final Heartbeats heartbeats;
    private final CommitNotifications notifications;
    private volatile boolean draining;
    private volatile PartitionTraffic traffic = PartitionTraffic.NONE;

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
     * Told the realtime traffic of each partition on this pod (the loudest tenants, {@code observability.TenantLoad}), on the
     * thread that sent it, often an event loop: return at once, never block.
     */
    public interface PartitionTraffic {
        PartitionTraffic NONE = new PartitionTraffic() {};

        /** A delta (§8.2) of {@code bytes} (as written, its tag included) was sent to a socket of {@code partition}. */
        default void deltaSent(String partition, long bytes) {}

        /** A presence publish (§8.6) of a connection of {@code partition} was held past the connection's rate. */
        default void presenceCoalesced(String partition) {}

        /**
         * A delta (§8.2) of a commit created at {@code createdAtMs} was handed to a socket: the commit is visible to
         * that client now ({@code observability.VisibilityLag}).
         */
        default void deltaVisible(long createdAtMs) {}
    }

    /**
     * A hub reading notified commits from {@code storage}, listening on {@code signals}' channels through
     * {@code listener}, sending presence on {@code signals}; {@code serves} is the engine's serve gate (§2.4: deltas wait while it refuses).
     */
    public RealtimeHub(
            Settings settings,
            SyncStorage storage,
            RealtimeSignals signals,
            SchemaWindow window,
            Vertx vertx,
            SignalListener listener,
            MeterRegistry registry,
            Function<String, Uni<Boolean>> serves,
            Tracing tracing) {
        this.settings = settings;
        this.vertx = vertx;
        this.socketBudget = new SocketBudget(settings.socketBudgetBytes(), registry);
        // the parts the gauges read are built first; the bus's callbacks run only once the hub is built
        FanoutReads fanoutReads = new FanoutReads(DeltaDelivery.FANOUT_READS, DeltaDelivery.FANOUT_BACKLOG);
        PresenceBus bus = new PresenceBus(
                signals,
                settings.podId(),
                () -> metrics().presenceNotifyDrop(),
                () -> presence().reannounce());
        PresenceRegistry presenceRegistry = new PresenceRegistry(
                settings.podId(), sessions::of, bus, settings.clock(), settings.maxPresenceBytes());
        this.metrics =
                new RealtimeMetrics(registry, sessions::open, presenceRegistry::localMembers, fanoutReads::backlog);
        this.presence =
                new PresenceRelay(settings, bus, presenceRegistry, vertx, metrics, () -> traffic, this::draining);
        DeltaDelivery delivery = new DeltaDelivery(
                settings,
                fanoutReads,
                sessions,
                storage,
                window,
                serves,
                tracing,
                metrics,
                () -> traffic,
                pendingFanouts);
        this.heartbeats = new Heartbeats(settings, vertx, sessions, presence, signals, metrics);
        this.notifications = new CommitNotifications(
                listener, vertx, signals, sessions, delivery, presence, metrics, this::draining);
    }

    /** Where this hub tells each partition's traffic ({@link PartitionTraffic#NONE} until set). */
    public void partitionTraffic(PartitionTraffic traffic) {
        this.traffic = traffic;
    }

    /** Adds a listener of the commit channel ({@link CommitListener}). */
    public void addCommitListener(CommitListener listener) {
        notifications.addListener(listener);
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
        CompletableFuture<Void> commitsHeard = notifications.start();
        heartbeats.start();
        return CompletableFuture.allOf(commitsHeard, presence.heard());
    }

    /** Whether the LISTEN connection is (or was once) established: readiness waits for it. */
    public boolean listening() {
        return notifications.listening();
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
        while (sessions.roundsInFlight() > 0 && System.nanoTime() < roundsDeadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        SocketDrain.closeAll(sessions.partitions(), deadline, metrics.failures()); // concurrently, within the grace
        heartbeats.stop();
        if (notifications.subscribed()) {
            presence.bye(deadline); // the other pods drop this hub's peers now, not after three silent heartbeats
            notifications.close();
        }
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
                metrics,
                socketBudget);
    }

    /** {@code syncular.realtime.socket-budget} when unset: a quarter of the maximum heap. */
    public static long defaultSocketBudget(long maxHeapBytes) {
        return SocketBudget.defaultLimit(maxHeapBytes);
    }

    /** The pod's memory for its sockets ({@code syncular.realtime.socket-budget}). */
    SocketBudget socketBudget() {
        return socketBudget;
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

    /** The hub's presence (§8.6): publishes, registrations and the rate of a new connection. */
    PresenceRelay presence() {
        return presence;
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
        return sessions.open();
    }

    /** §8.1: connection {@code s} joins the hub (its channel opened). */
    void add(RealtimeSession s) {
        sessions.add(s);
        socketBudget.socketOpened();
    }

    /** The connection of {@code s} ended: it leaves the hub, and its presence leaves (§8.6.1). */
    void remove(RealtimeSession s) {
        if (sessions.remove(s)) {
            socketBudget.socketClosed();
        }
        presence.disconnected(s);
    }

    /** The sessions registered for {@code partition} (per-connection accounting, Appendix B 17). */
    int sessionCount(String partition) {
        return sessions.count(partition);
    }

    /**
     * This pod's connected clients behind by more than nothing at {@code nowMs}: the {@code n} stalest clients and
     * partitions, and the clients behind by more than {@code objectiveMs} by what holds them ({@link Stalest}).
     */
    public Stalest stalest(int n, long objectiveMs, long nowMs) {
        return Stalest.of(sessions, pendingFanouts, n, objectiveMs, nowMs);
    }
}
