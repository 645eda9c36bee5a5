package dev.syncular.server.realtime;

import dev.syncular.server.storage.SocketDisconnect;
import io.quarkus.websockets.next.CloseReason;
import java.util.function.Function;
import org.jboss.logging.Logger;

/**
 * The operator's disconnect ({@code POST <mount>/admin/partitions/{p}/actors/{a}/disconnect},
 * {@code …/clients/{c}/disconnect}) as every pod carries it out: the admin route announces a
 * {@link SocketDisconnect} on the storage's control channel, each pod's hub hears it on its one LISTEN
 * connection and closes the matching local sockets with {@link #CODE}. The client reconnects and is
 * authenticated again at the upgrade (§8.1), so a credential or grant the host revoked in the meantime no
 * longer gets a socket.
 */
final class OperatorDisconnects {
    private static final Logger LOG = Logger.getLogger(OperatorDisconnects.class);
    /** The close code of a socket an operator disconnected (application range, RFC 6455 §7.4.2). */
    static final int CODE = 4403;
    /** Its close reason: re-authenticate (§10.2 {@code sync.auth_required}, {@code refreshAuth}) and reconnect. */
    static final String REASON = "sync.auth_required: disconnected by an operator";

    private OperatorDisconnects() {}

    /** A control-channel payload: closes the matching sockets among {@code sessions}; how many it closed. */
    static int received(
            String payload, Function<String, Iterable<RealtimeSession>> sessions, RealtimeFailures failures) {
        SocketDisconnect d = SocketDisconnect.parse(payload);
        if (d == null) {
            return 0; // a control message of a newer version: ignored
        }
        int n = 0;
        for (RealtimeSession s : sessions.apply(d.partition())) {
            if (d.matches(s.ctx.partition(), s.ctx.actorId(), s.clientId)) {
                n++;
                s.connection()
                        .close(new CloseReason(CODE, REASON))
                        .subscribe()
                        .with(v -> {}, e -> failures.report(RealtimeFailures.Kind.CLOSE, e, s.connection()));
            }
        }
        if (n > 0) {
            LOG.infof(
                    "Operator disconnect: closed %d realtime socket(s) of %s",
                    n, d.actorId() != null ? "an actor" : "a client");
        }
        return n;
    }
}
