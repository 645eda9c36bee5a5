package dev.syncular.server.realtime;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quarkus.websockets.next.WebSocketConnection;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jboss.logging.Logger;

/**
 * Failures the realtime binding does not hand to anyone — a write to a socket, an ack's cursor write, a close,
 * a fan-out, a re-registration, the LISTEN connection — each counted in {@code syncular_realtime_errors_total{kind}}
 * and logged with its cause: a failure because the peer went away (the connection is closed, reset or its pipe
 * broken) at DEBUG without a stack trace, any other at WARN with its stack trace, at most once a minute per
 * kind (the line says how many of that kind were not logged since the last one).
 */
final class RealtimeFailures {
    private static final Logger LOG = Logger.getLogger(RealtimeFailures.class);
    private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);
    /** Until the channel hands a session the hub's: logs, counts nowhere that is scraped. */
    static final RealtimeFailures UNREGISTERED = new RealtimeFailures(new SimpleMeterRegistry());

    /** What failed; the metric's {@code kind} label. */
    enum Kind {
        /** A {@code 0x00} delta write (§8.2). */
        DELTA_WRITE("delta_write"),
        /** A control message write: hello, wake-up, heartbeat, presence (§8.1, §8.3, §8.5, §8.6). */
        CONTROL_WRITE("control_write"),
        /** A ping write (§8.5). */
        PING_WRITE("ping_write"),
        /** A socket round's response write (§8.7). */
        ROUND_WRITE("round_write"),
        /** A socket round that failed outside its in-band error path (§8.7). */
        ROUND("round"),
        /** The client record's cursor write of an ack (§8.2; the §4.6 retention input). */
        ACK_WRITE("ack_write"),
        /** Reading a connection's registrations after a socket round; they are revoked until the next one (§8.7). */
        REGISTRATION("registration"),
        /** Closing a socket (reaped, expired, disconnected, drained). */
        CLOSE("close"),
        /** Reading a notified commit for its fan-out; the partition's sockets are woken instead (§8.3). */
        FANOUT("fanout"),
        /** The LISTEN connection. */
        LISTEN("listen"),
        /** Reading {@code pg_notification_queue_usage()} for its gauge (each heartbeat). */
        NOTIFY_QUEUE("notify_queue"),
        /** An error the socket layer reports for a connection (mostly a reset by the peer). */
        CONNECTION("connection");

        final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    private final Map<Kind, Counter> counters = new EnumMap<>(Kind.class);
    private final Map<Kind, AtomicLong> lastWarn = new EnumMap<>(Kind.class);
    private final Map<Kind, AtomicLong> unlogged = new EnumMap<>(Kind.class);

    RealtimeFailures(MeterRegistry registry) {
        for (Kind k : Kind.values()) {
            counters.put(
                    k,
                    Counter.builder("syncular.realtime.errors")
                            .tag("kind", k.label)
                            .description("Realtime failures that were not propagated, by kind")
                            .register(registry));
            lastWarn.put(k, new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS));
            unlogged.put(k, new AtomicLong());
        }
    }

    /** A failure on {@code connection}: a disconnect when it is closed by now or the cause says so. */
    void report(Kind kind, Throwable e, WebSocketConnection connection) {
        if (connection.isClosed() || disconnect(e)) {
            disconnect(kind, e);
        } else {
            failed(kind, e);
        }
    }

    /** A failure caused by the peer going away: counted, DEBUG, no stack trace. */
    void disconnect(Kind kind, Throwable e) {
        counters.get(kind).increment();
        LOG.debugf("Realtime %s failed, the connection is gone: %s", kind.label, e);
    }

    /** Any other failure: counted, WARN with its cause at most once a minute per kind. */
    void failed(Kind kind, Throwable e) {
        counters.get(kind).increment();
        long now = System.nanoTime();
        AtomicLong last = lastWarn.get(kind);
        long previous = last.get();
        if (now - previous >= WARN_EVERY_NANOS && last.compareAndSet(previous, now)) {
            long skipped = unlogged.get(kind).getAndSet(0);
            LOG.warnf(
                    e,
                    "Realtime %s failed (%d more since the last such line; all counted in "
                            + "syncular_realtime_errors_total{kind=\"%s\"})",
                    kind.label,
                    skipped,
                    kind.label);
        } else {
            unlogged.get(kind).incrementAndGet();
            LOG.debugf("Realtime %s failed: %s", kind.label, e);
        }
    }

    /** Whether {@code e} (or a cause) says the connection went away. */
    static boolean disconnect(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof ClosedChannelException) {
                return true;
            }
            String m = t.getMessage() == null ? "" : t.getMessage().toLowerCase(Locale.ROOT);
            if ((t instanceof IOException
                            || t.getClass().getName().startsWith("io.netty")
                            || t.getClass().getName().startsWith("io.vertx")
                            || t.getClass().getName().startsWith("io.quarkus.websockets"))
                    && (m.contains("closed") || m.contains("reset") || m.contains("broken pipe"))) {
                return true;
            }
        }
        return false;
    }
}
