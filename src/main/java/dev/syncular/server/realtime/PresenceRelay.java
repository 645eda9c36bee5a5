package dev.syncular.server.realtime;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.wire.realtime.ControlMessage;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * §8.6 presence as the hub relays it: the publishes and leaves of this pod's connections, held past a connection's
 * rate ({@link PresenceRate}, §8.6.4 latest-wins coalesce), into the {@link PresenceRegistry}; the messages of other
 * pods heard on the {@link PresenceBus} channel into it too; this pod's {@code hello} when its LISTEN takes effect,
 * {@code alive} with each heartbeat (§8.5) and {@code bye} at drain, and the other pods forgotten once silent for
 * three intervals. With presence off ({@code syncular.realtime.presence-enabled=false}) publishes are ignored
 * (tolerated) and nothing is sent.
 */
final class PresenceRelay {
    // the hub's log category, as before the hub was split (issue 46)
    private static final Logger LOG = Logger.getLogger(RealtimeHub.class);

    private final boolean enabled;
    private final double perSecond;
    private final int burst;
    private final PresenceBus bus;
    private final PresenceRegistry registry;
    private final Vertx vertx;
    private final RealtimeMetrics metrics;
    private final Supplier<RealtimeHub.PartitionTraffic> traffic;
    private final BooleanSupplier draining;
    /** The presence channel's LISTEN took effect (once or more). */
    private volatile boolean listening;

    private final CompletableFuture<Void> heard = new CompletableFuture<>();

    /**
     * The hub's presence ({@link RealtimeHub.Settings#presenceEnabled}, {@link RealtimeHub.Settings#presencePerSecond}
     * and {@link RealtimeHub.Settings#presenceBurst} from {@code settings}) on {@code bus} and {@code registry};
     * {@code traffic} is told each publish held past a connection's rate.
     */
    PresenceRelay(
            RealtimeHub.Settings settings,
            PresenceBus bus,
            PresenceRegistry registry,
            Vertx vertx,
            RealtimeMetrics metrics,
            Supplier<RealtimeHub.PartitionTraffic> traffic,
            BooleanSupplier draining) {
        this.enabled = settings.presenceEnabled();
        this.perSecond = settings.presencePerSecond();
        this.burst = settings.presenceBurst();
        this.bus = bus;
        this.registry = registry;
        this.vertx = vertx;
        this.metrics = metrics;
        this.traffic = traffic;
        this.draining = draining;
        if (!enabled) {
            heard.complete(null); // no presence channel to wait for
        }
    }

    boolean enabled() {
        return enabled;
    }

    /** The presence channel the LISTEN connection subscribes to while {@link #enabled()}. */
    String channel() {
        return bus.channel();
    }

    /** Completes once the presence channel's LISTEN took effect (at once with presence off). */
    CompletableFuture<Void> heard() {
        return heard;
    }

    /** A presence rate for a new connection ({@link RealtimeHub.Settings#presencePerSecond}, {@link PresenceRate}). */
    PresenceRate rate() {
        return perSecond <= 0 ? PresenceRate.OFF : new PresenceRate(perSecond, burst);
    }

    /**
     * §8.6: a publish or leave of local connection {@code s}; ignored (tolerated) with presence off. Past the
     * connection's rate the newest document per key is held and goes out when its rate allows ({@link PresenceRate}).
     */
    void published(RealtimeSession s, ControlMessage.PresencePublish m) {
        if (!enabled) {
            return;
        }
        PresenceRate rate = s.presenceRate;
        if (rate.off()) {
            registry.publish(s, m);
            return;
        }
        synchronized (rate) {
            if (!rate.admit(m, System.nanoTime())) {
                metrics.presenceCoalesced();
                traffic.get().presenceCoalesced(s.ctx.partition());
                scheduleHeld(s);
                return;
            }
        }
        registry.publish(s, m);
    }

    /** Sends the connection's held presence documents once its rate allows, and again while some are held. */
    private void scheduleHeld(RealtimeSession s) {
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
                registry.publish(s, p);
            }
            if (more) {
                scheduleHeld(s);
            }
        });
    }

    /** §8.6.3: {@code s} now holds {@link RealtimeSession#scopeKeys()}, and held {@code before}. */
    void registered(RealtimeSession s, Set<String> before) {
        if (enabled) {
            registry.registrationChanged(s, before, s.scopeKeys());
        }
    }

    /** §8.6.4: connection {@code s} ended; its documents leave. */
    void disconnected(RealtimeSession s) {
        if (enabled) {
            registry.disconnected(s);
        }
    }

    /** A payload heard on the presence channel ({@link PresenceBus}). */
    void received(String payload) {
        bus.received(payload, this::fromOtherPod);
    }

    /**
     * The presence channel's LISTEN took effect: after a re-{@code LISTEN} the other pods are forgotten (the
     * notifications in between are lost); either way this pod says {@code hello} and they re-announce.
     */
    void listened() {
        if (listening) {
            registry.forgetOtherPods();
        }
        listening = true;
        bus.pod("hello");
        heard.complete(null);
    }

    /** §8.5 heartbeat tick: {@code alive} to the other pods, and the ones silent for three intervals forgotten. */
    void heartbeat(SilenceWatch silence, SilenceWatch.Tick tick) {
        if (enabled && listening) {
            bus.pod("alive");
            registry.expireSilentPods(silence, tick);
        }
    }

    /** After dropped presence NOTIFYs: the other pods forget this pod's peers, then hear every document again. */
    void reannounce() {
        if (!draining.getAsBoolean()) {
            bus.pod("bye");
            registry.announceLocal();
        }
    }

    /**
     * Drain: the other pods drop this pod's peers now rather than after three silent heartbeats; waits for the
     * {@code bye} to be sent until {@code deadlineNanos} ({@link System#nanoTime}).
     */
    void bye(long deadlineNanos) {
        if (!enabled) {
            return;
        }
        bus.pod("bye");
        try {
            bus.flushed().get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (Exception e) {
            LOG.debug("Presence bye not confirmed before shutdown", e);
        }
    }

    /** A presence message of another pod (§8.6 across pods, {@link PresenceBus}). */
    private void fromOtherPod(String pod, ObjectNode m) {
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
                    registry.remoteDelete(pod, partition, key, peer);
                } else if (m.get("d") instanceof ObjectNode doc) {
                    registry.remoteSet(pod, partition, key, peer, doc);
                }
            }
            case "hello" -> {
                registry.heard(pod);
                registry.announceLocal();
            }
            case "alive" -> registry.heard(pod);
            case "bye" -> registry.podGone(pod);
            default -> {}
        }
    }
}
