package dev.syncular.server.realtime;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import io.quarkus.websockets.next.WebSocketConnection;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.io.IOException;
import org.jboss.logging.Logger;

/**
 * Transport failures of realtime sockets (§8), the endpoints' {@code @OnError}: a peer that vanishes — connection
 * reset, broken pipe, a connection closed under a pending write, any {@link IOException} — is an ordinary event of mobile networks, logged at DEBUG in one
 * line without a stack trace and counted ({@code syncular.realtime.socket.failures{kind="disconnect"}}); anything
 * else is a server-side failure, logged at WARN with its cause and counted as {@code kind="error"}. The connection
 * closes either way (the hub drops its session in {@code @OnClose}).
 */
@Startup // meters exported from the start, at zero
@ApplicationScoped
public class SocketFailures {
    private static final Logger LOG = Logger.getLogger(SocketFailures.class);

    private final Counter disconnects;
    private final Counter errors;

    @Inject
    public SocketFailures(MeterRegistry registry) {
        disconnects = counter(registry, "disconnect");
        errors = counter(registry, "error");
    }

    private static Counter counter(MeterRegistry registry, String kind) {
        return Counter.builder("syncular.realtime.socket.failures")
                .description("Realtime socket failures: peers that vanished (disconnect) and server-side errors (error)")
                .tag("kind", kind).register(registry);
    }

    /** Logs and counts {@code failure} of {@code connection} by its kind. */
    public Uni<Void> failed(WebSocketConnection connection, Throwable failure) {
        if (isDisconnect(failure)) {
            disconnects.increment();
            LOG.debugf("Realtime socket %s ended abruptly: %s", connection.id(), failure.getClass().getSimpleName());
        } else {
            errors.increment();
            LOG.warnf(failure, "Realtime socket %s failed; closing it", connection.id());
        }
        return Uni.createFrom().voidItem();
    }

    static boolean isDisconnect(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof IOException || t instanceof io.vertx.core.http.HttpClosedException
                    || t instanceof io.netty.channel.ChannelException) {
                return true;
            }
        }
        return false;
    }
}
