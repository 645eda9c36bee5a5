package dev.syncular.server.realtime;

import dev.syncular.server.storage.RealtimeSignals;
import dev.syncular.server.wire.realtime.ControlMessage;
import dev.syncular.server.wire.realtime.ControlMessages;
import io.quarkus.websockets.next.CloseReason;
import io.quarkus.websockets.next.WebSocketConnection;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * §8.5 heartbeats of the hub's sockets, on one periodic timer: each tick sends every socket a {@code heartbeat}
 * event and a ping, and closes ({@link #IDLE}) one not heard from for three intervals, as silence is judged by
 * {@link SilenceWatch} (monotonic, and nothing closed by a tick that follows a stall of the pod). The tick also
 * carries presence's {@code alive} to the other pods ({@link PresenceRelay#heartbeat}) and samples the usage of
 * PostgreSQL's notification queue.
 */
final class Heartbeats {
    /** The close of a socket reaped for silence (§8.5): a normal closure, its reason for the client's logs. */
    static final CloseReason IDLE = new CloseReason(1000, "idle: nothing heard for three heartbeat intervals");

    private final Vertx vertx;
    private final long intervalMs;
    /** The {@code timestamp} of a heartbeat (epoch milliseconds; the seam tests replace). */
    private final LongSupplier clock;
    /** §8.5 the idle reaper's judgement, on the heartbeat timer. */
    private final SilenceWatch silence;

    private final SessionSet sessions;
    private final PresenceRelay presence;
    private final RealtimeSignals signals;
    private final RealtimeMetrics metrics;
    private long timer = -1;

    /**
     * Heartbeats every {@link RealtimeHub.Settings#heartbeatInterval} of {@code settings}, stamped by its
     * {@link RealtimeHub.Settings#clock}, to {@code sessions}.
     */
    Heartbeats(
            RealtimeHub.Settings settings,
            Vertx vertx,
            SessionSet sessions,
            PresenceRelay presence,
            RealtimeSignals signals,
            RealtimeMetrics metrics) {
        this.intervalMs = settings.heartbeatInterval().toMillis();
        this.clock = settings.clock();
        this.silence = new SilenceWatch(intervalMs, SilenceWatch.MONOTONIC_MS);
        this.vertx = vertx;
        this.sessions = sessions;
        this.presence = presence;
        this.signals = signals;
        this.metrics = metrics;
    }

    /** Starts the timer. */
    void start() {
        timer = vertx.setPeriodic(intervalMs, t -> tick());
    }

    /** Stops the timer, if it was started. */
    void stop() {
        if (timer >= 0) {
            vertx.cancelTimer(timer);
        }
    }

    private void tick() {
        long now = clock.getAsLong();
        SilenceWatch.Tick tick = silence.tick();
        presence.heartbeat(silence, tick);
        signals.notificationQueueUsage()
                .subscribe()
                .with(
                        metrics::notificationQueueUsage,
                        e -> metrics.failures().failed(RealtimeFailures.Kind.NOTIFY_QUEUE, e));
        String beat = ControlMessages.render(new ControlMessage.Heartbeat(now));
        for (Set<RealtimeSession> set : sessions.partitions()) {
            for (RealtimeSession s : set) {
                if (closeIfSilent(s.connection(), s.idleAt(silence, tick), metrics.failures())) {
                    continue;
                }
                s.sendHeartbeat(beat);
                ping(s.connection(), metrics.failures());
            }
        }
    }

    /**
     * §8.5 on a tick, for one socket of the pod (sync or watch): a {@code silent} one is closed with {@link #IDLE}.
     * Returns whether it was.
     */
    static boolean closeIfSilent(WebSocketConnection connection, boolean silent, RealtimeFailures failures) {
        if (!silent) {
            return false;
        }
        connection
                .close(IDLE)
                .subscribe()
                .with(v -> {}, e -> failures.report(RealtimeFailures.Kind.CLOSE, e, connection));
        return true;
    }

    /** The tick's ping, so a proxy's or {@code quarkus.http.idle-timeout} does not close a quiet socket. */
    static void ping(WebSocketConnection connection, RealtimeFailures failures) {
        connection
                .sendPing(Buffer.buffer())
                .subscribe()
                .with(v -> {}, e -> failures.report(RealtimeFailures.Kind.PING_WRITE, e, connection));
    }
}
