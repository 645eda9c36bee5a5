package dev.syncular.server.realtime;

import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.sync.RealtimeDelta;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.realtime.ControlMessage;
import dev.syncular.server.wire.realtime.ControlMessages;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.pubsub.PgSubscriber;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

/**
 * The pod's realtime hub (§8.2, §8.5): the local sessions by partition, the one {@code LISTEN} connection of
 * the pod on the storage's commit channel (a {@link PgSubscriber} that reconnects forever; every re-{@code LISTEN}
 * after the first wakes all local sockets with {@code catchup-required}, since notifications in between are
 * lost), each notified commit read once from the log and fanned out as per-session deltas, and heartbeats.
 */
@ApplicationScoped
public class RealtimeHub {
    private static final Logger LOG = Logger.getLogger(RealtimeHub.class);
    /** {@code syncular.realtime.max-unacked-deltas}, read by the sessions. */
    static volatile int maxUnacked = 64;

    /**
     * The {@code application_name} of the pod's LISTEN connection, so an operator finds it in
     * {@code pg_stat_activity}: a random part, then the host name (the pod name in Kubernetes), at most the
     * 63 bytes PostgreSQL keeps.
     */
    private final String podId = podId(System.getenv("HOSTNAME"));

    private final ConcurrentHashMap<String, Set<RealtimeSession>> byPartition = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, CompletableFuture<Void>> partitionTails = new ConcurrentHashMap<>();
    private final AtomicInteger open = new AtomicInteger();
    private final SyncularConfig.Realtime config;
    private final PostgresSyncStorage storage;
    private final SchemaWindow window;
    private final Vertx vertx;
    private final RealtimeMetrics metrics;
    private final long maxDeltaBytes;
    private final PresenceBus presenceBus;
    private final PresenceRegistry presence;
    private PgSubscriber subscriber;
    private volatile boolean listening;
    private volatile boolean presenceListening;
    private volatile boolean draining;

    @Inject
    public RealtimeHub(SyncularConfig config, PostgresSyncStorage storage, SchemaWindow window, Vertx vertx,
            MeterRegistry registry, io.vertx.mutiny.sqlclient.Pool pool) {
        this.config = config.realtime();
        this.storage = storage;
        this.window = window;
        this.vertx = vertx;
        this.maxDeltaBytes = this.config.maxDeltaBytes().asLongValue();
        maxUnacked = this.config.maxUnackedDeltas();
        String commits = storage.notificationChannel();
        String presenceChannel = "syncular_presence_" + commits.substring("syncular_commits_".length());
        this.presenceBus = new PresenceBus(pool, presenceChannel.length() > 63 ? presenceChannel.substring(0, 63)
                : presenceChannel, podId);
        this.presence = new PresenceRegistry(podId, this::sessionsOf, presenceBus, System::currentTimeMillis,
                this.config.maxPresenceBytes().asLongValue());
        this.metrics = new RealtimeMetrics(registry, open::get, presence::localMembers);
    }

    void start(@Observes StartupEvent event) {
        if (!config.enabled()) {
            return;
        }
        var cfg = ConfigProvider.getConfig();
        String url = cfg.getOptionalValue("quarkus.datasource.reactive.url", String.class).orElse("");
        if (url.startsWith("vertx-reactive:")) {
            url = url.substring("vertx-reactive:".length());
        }
        int comma = url.indexOf(',');
        PgConnectOptions options = PgConnectOptions.fromUri(comma < 0 ? url : url.substring(0, comma));
        cfg.getOptionalValue("quarkus.datasource.username", String.class).ifPresent(options::setUser);
        cfg.getOptionalValue("quarkus.datasource.password", String.class).ifPresent(options::setPassword);
        options.addProperty("application_name", podId);
        subscriber = PgSubscriber.subscriber(vertx, options);
        subscriber.reconnectPolicy(retries -> 500L);
        subscriber.channel(storage.notificationChannel())
                .handler(this::notified)
                .subscribeHandler(v -> {
                    if (listening) {
                        // a re-LISTEN: whatever was committed while the connection was down was never announced here
                        metrics.listenReconnect();
                        byPartition.values().forEach(set -> set.forEach(s -> s.lostNotifications(metrics)));
                    }
                    listening = true;
                });
        if (config.presenceEnabled()) {
            subscriber.channel(presenceBus.channel())
                    .handler(payload -> presenceBus.received(payload, this::presenceMessage))
                    .subscribeHandler(v -> {
                        if (presenceListening) {
                            // notifications in between are lost: forget the other pods, ask them to re-announce
                            presence.forgetOtherPods();
                        }
                        presenceListening = true;
                        presenceBus.pod("hello");
                    });
        }
        subscriber.connect().onFailure(e -> LOG.error("Realtime LISTEN connection failed", e));
    }

    /**
     * Drain on shutdown: readiness goes DOWN and upgrades are refused at once, in-flight socket rounds get up
     * to {@code syncular.realtime.shutdown-grace} to finish, then every remaining socket closes with 1001
     * (going away) and the LISTEN connection is released. Runs on the shutdown thread, never an event loop.
     */
    void drainBeforeHttpCloses(@Observes io.quarkus.runtime.ShutdownDelayInitiatedEvent event) {
        drain();
    }

    void stop(@Observes @jakarta.annotation.Priority(1) ShutdownEvent event) {
        drain();
    }

    /**
     * Runs once: first at the start of Quarkus' shutdown (the {@code ShutdownDelayInitiatedEvent} of
     * {@code quarkus.shutdown.delay-enabled}, while the HTTP server still serves, so sockets get 1001 from here
     * rather than a plain close when the server stops), else at {@code ShutdownEvent}.
     */
    private synchronized void drain() {
        if (draining) {
            return;
        }
        draining = true;
        long deadline = System.nanoTime() + config.shutdownGrace().toNanos();
        while (roundsInFlight() > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        for (Set<RealtimeSession> set : byPartition.values()) {
            for (RealtimeSession s : set) {
                try {
                    s.connection().close(new io.quarkus.websockets.next.CloseReason(1001, "server shutting down"))
                            .await().atMost(java.time.Duration.ofSeconds(2));
                } catch (RuntimeException e) {
                    LOG.debug("Closing a realtime socket on shutdown failed", e);
                }
            }
        }
        if (subscriber != null) {
            if (config.presenceEnabled()) {
                // the other pods drop this pod's peers now rather than after three silent heartbeats
                presenceBus.pod("bye");
                try {
                    presenceBus.flushed().get(2, java.util.concurrent.TimeUnit.SECONDS);
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
                synchronized (s) {
                    n += s.roundInFlight ? 1 : 0;
                }
            }
        }
        return n;
    }

    /** The realtime metrics (a method: fields of a client proxy are not the bean's). */
    RealtimeMetrics metrics() {
        return metrics;
    }

    /** Whether the pod is draining (readiness DOWN, upgrades refused). */
    boolean draining() {
        return draining;
    }

    static String podId(String hostname) {
        String id = "syncular-rt-" + UUID.randomUUID().toString().substring(0, 8)
                + (hostname == null || hostname.isBlank() ? "" : "-" + hostname.replaceAll("[^A-Za-z0-9._-]", "_"));
        return id.length() > 63 ? id.substring(0, 63) : id;
    }

    /** This pod's id: the {@code application_name} of its LISTEN connection. */
    public String podId() {
        return podId;
    }

    boolean enabled() {
        return config.enabled();
    }

    boolean atCapacity() {
        return open.get() >= config.maxConnections();
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
        byPartition.computeIfPresent(s.ctx.partition(), (k, set) -> {
            if (set.remove(s)) {
                open.decrementAndGet();
            }
            return set.isEmpty() ? null : set;
        });
        if (config.presenceEnabled()) {
            presence.disconnected(s);
        }
    }

    private Iterable<RealtimeSession> sessionsOf(String partition) {
        Set<RealtimeSession> set = byPartition.get(partition);
        return set == null ? Set.of() : set;
    }

    /** §8.6: a publish or leave of local connection {@code s}; ignored (tolerated) with presence off. */
    void presencePublished(RealtimeSession s, ControlMessage.PresencePublish m) {
        if (config.presenceEnabled()) {
            presence.publish(s, m);
        }
    }

    /** §8.6.3: {@code s} now holds {@link RealtimeSession#scopeKeys()}, and held {@code before}. */
    void presenceRegistered(RealtimeSession s, Set<String> before) {
        if (config.presenceEnabled()) {
            presence.registrationChanged(s, before, s.scopeKeys());
        }
    }

    /** A presence message of another pod (§8.6 across pods, {@link PresenceBus}). */
    private void presenceMessage(String pod, com.fasterxml.jackson.databind.node.ObjectNode m) {
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
                } else if (m.get("d") instanceof com.fasterxml.jackson.databind.node.ObjectNode doc) {
                    presence.remoteSet(pod, partition, key, peer, doc);
                }
            }
            case "hello" -> {
                presence.heard(pod);
                presence.announceLocal();
            }
            case "alive" -> presence.heard(pod);
            case "bye" -> presence.podGone(pod);
            default -> { }
        }
    }

    /** A commit notification {@code <partition>:<commitSeq>}: fanned out in notification order per partition. */
    void notified(String payload) {
        int colon = payload.lastIndexOf(':');
        if (colon < 0) {
            return;
        }
        String partition = payload.substring(0, colon);
        long seq;
        try {
            seq = Long.parseLong(payload.substring(colon + 1));
        } catch (NumberFormatException e) {
            return;
        }
        Set<RealtimeSession> sessions = byPartition.get(partition);
        if (sessions == null || sessions.isEmpty()) {
            return;
        }
        CompletableFuture<Void> tail = partitionTails.compute(partition, (k, previous) ->
                (previous == null ? CompletableFuture.<Void>completedFuture(null) : previous)
                        .thenCompose(v -> fanOut(partition, seq).exceptionally(e -> {
                            LOG.warn("Realtime fanout of a commit failed; waking its partition's sockets", e);
                            Set<RealtimeSession> set = byPartition.get(partition);
                            if (set != null) {
                                set.forEach(s -> s.lostNotifications(metrics));
                            }
                            return null;
                        })));
        tail.whenComplete((v, e) -> partitionTails.remove(partition, tail));
    }

    private CompletableFuture<Void> fanOut(String partition, long seq) {
        return storage.readCommit(partition, seq).subscribeAsCompletionStage().thenAccept(commit -> {
            Set<RealtimeSession> sessions = byPartition.get(partition);
            if (sessions == null) {
                return;
            }
            Set<String> keys = commit == null ? Set.of() : RealtimeDelta.scopeKeys(window, commit);
            for (RealtimeSession s : sessions) {
                deliver(s, seq, commit, keys);
            }
        });
    }

    private void deliver(RealtimeSession s, long seq, StoredCommit commit, Set<String> keys) {
        // a commit gone from the log (pruned already) cannot be bridged: every session counts it as matching
        boolean matching = commit == null || s.matches(keys);
        switch (s.onCommit(seq, matching)) {
            case IGNORE -> { }
            case WAKE -> s.wake(dev.syncular.server.wire.realtime.WakeReason.CATCHUP_REQUIRED, metrics);
            case DELIVER -> {
                if (commit == null) {
                    s.wake(dev.syncular.server.wire.realtime.WakeReason.CATCHUP_REQUIRED, metrics);
                    return;
                }
                Message delta = RealtimeDelta.delta(s.logEpoch, s.registrations(), commit);
                if (delta != null) {
                    s.deliver(seq, delta.encode(), maxDeltaBytes, metrics);
                }
            }
        }
    }

    /** §8.5: a heartbeat to every socket; one not heard from for three intervals is closed (reaped). */
    @Scheduled(every = "${syncular.realtime.heartbeat-interval:30s}", delayed = "${syncular.realtime.heartbeat-interval:30s}")
    void heartbeat() {
        long now = System.currentTimeMillis();
        long idle = 3 * config.heartbeatInterval().toMillis();
        if (config.enabled() && config.presenceEnabled() && presenceListening) {
            presenceBus.pod("alive");
            presence.expireSilentPods(now - idle);
        }
        String beat = ControlMessages.render(new ControlMessage.Heartbeat(now));
        for (Set<RealtimeSession> set : byPartition.values()) {
            for (RealtimeSession s : set) {
                if (now - s.lastHeardMs > idle) {
                    s.connection().close().subscribe().with(v -> { }, e -> { });
                    continue;
                }
                s.sendText(beat);
                s.connection().sendPing(io.vertx.core.buffer.Buffer.buffer()).subscribe().with(v -> { }, e -> { });
            }
        }
    }
}
