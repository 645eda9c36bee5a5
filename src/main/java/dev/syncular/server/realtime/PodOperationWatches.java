package dev.syncular.server.realtime;

import dev.syncular.server.operations.QueryWatches;
import dev.syncular.server.sync.SyncRequestContext;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.websockets.next.WebSocketConnection;
import io.vertx.core.http.HttpConnection;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The pod's §6 watches on its commit signal: the realtime hub's {@code LISTEN} connection already hears every
 * commit of every pod ({@code <partition>:<commitSeq>} or a group's {@code <partition>:<first>-<last>} on the storage's commit channel), so the watches listen
 * there too ({@link RealtimeHub.CommitListener}) — a commit taken on another pod reruns a watch here — and a
 * re-{@code LISTEN} or an epoch rotation gives every affected watch a fresh snapshot. Gauges:
 * {@code syncular.operations.watches} (active watches of the pod), {@code syncular.operations.watch.backlog}
 * (runs waiting for a run slot), {@code syncular.operations.watch.connections} (open watch sockets).
 *
 * <p>The sockets' lifetime, as for the sync socket: every {@code syncular.realtime.heartbeat-interval} a ping
 * (so {@code quarkus.http.idle-timeout} does not close a watch that has nothing to say); a socket not heard from
 * (message or pong) for three intervals is closed; a socket ends with 4401 when its upgrade's credential expires
 * ({@link CredentialLifetime}).
 */
@Startup
@ApplicationScoped
public class PodOperationWatches {
    private final ConcurrentHashMap<WebSocketConnection, Long> lastHeardMs = new ConcurrentHashMap<>();
    private final CredentialLifetime lifetime;
    private final RealtimeHub hub;

    @Inject
    public PodOperationWatches(
            PodRealtime realtime, QueryWatches watches, MeterRegistry registry, RealtimeConfig config) {
        this.hub = realtime.hub();
        this.lifetime =
                new CredentialLifetime(hub.vertx(), hub.clock(), hub.metrics().failures());
        long interval = config.heartbeatInterval().toMillis();
        SilenceWatch silence = new SilenceWatch(interval, SilenceWatch.MONOTONIC_MS);
        hub.vertx().setPeriodic(interval, t -> heartbeat(silence));
        realtime.hub().addCommitListener(new RealtimeHub.CommitListener() {
            @Override
            public void committed(String partition, long seq) {
                watches.committed(partition, seq);
            }

            @Override
            public void partitionReset(String partition) {
                watches.partitionReset(partition);
            }

            @Override
            public void notificationsLost() {
                watches.notificationsLost();
            }
        });
        Gauge.builder("syncular.operations.watches", watches, QueryWatches::activeWatches)
                .strongReference(true)
                .description("Active remote query watches of this pod (REMOTE.md §6)")
                .register(registry);
        Gauge.builder("syncular.operations.watch.backlog", watches, QueryWatches::runBacklog)
                .strongReference(true)
                .description("Watch runs waiting for one of this pod's run slots")
                .register(registry);
        Gauge.builder("syncular.operations.watch.connections", lastHeardMs, Map::size)
                .strongReference(true)
                .description("Open watch sockets of this pod (REMOTE.md §6)")
                .register(registry);
    }

    /** A socket opened for {@code ctx}: its credential's lifetime is armed, its heartbeats begin. */
    void opened(WebSocketConnection connection, SyncRequestContext ctx) {
        if (lastHeardMs.put(connection, SilenceWatch.MONOTONIC_MS.getAsLong()) == null) {
            hub.socketBudget().socketOpened();
        }
        lifetime.watch(connection, ctx);
    }

    /** A message or a pong from the socket. */
    void heard(WebSocketConnection connection) {
        lastHeardMs.computeIfPresent(connection, (c, t) -> SilenceWatch.MONOTONIC_MS.getAsLong());
    }

    /** Whether {@code ctx}'s credential has expired (then the message is not served and the socket closed). */
    boolean expired(WebSocketConnection connection, SyncRequestContext ctx) {
        if (!lifetime.expired(ctx)) {
            return false;
        }
        lifetime.close(connection)
                .subscribe()
                .with(v -> {}, e -> hub.metrics().failures().report(RealtimeFailures.Kind.CLOSE, e, connection));
        return true;
    }

    /**
     * The outbound byte budget of a watch socket, the sync socket's ({@code syncular.realtime.outbound-buffer-bytes},
     * {@code outbound-stuck-timeout}): see {@link OperationWatchEndpoint}.
     */
    OutboundBudget outbound(WebSocketConnection connection) {
        return hub.outbound(connection, () -> {
            HttpConnection tcp = connection.userData().get(RealtimeChannel.TRANSPORT);
            if (tcp != null) {
                tcp.close();
            }
        });
    }

    /** Open watch sockets of the pod. */
    int openConnections() {
        return lastHeardMs.size();
    }

    void closed(WebSocketConnection connection) {
        if (lastHeardMs.remove(connection) != null) {
            hub.socketBudget().socketClosed();
        }
        lifetime.release(connection);
    }

    private void heartbeat(SilenceWatch silence) {
        SilenceWatch.Tick tick = silence.tick();
        RealtimeFailures failures = hub.metrics().failures();
        lastHeardMs.forEach((connection, heard) -> {
            if (!Heartbeats.closeIfSilent(connection, silence.silent(tick, heard), failures)) {
                Heartbeats.ping(connection, failures);
            }
        });
    }
}
