package dev.syncular.server.realtime;

/**
 * The part of the path that holds a connected client behind the commits it is owed (the stalest clients,
 * {@link StalestClients}).
 */
public enum Staleness {
    /** Its partition's notified commits wait for one of the pod's fan-out reads ({@code FanoutReads}) or their turn. */
    FANOUT_BACKLOG("fanout_backlog"),
    /** Its socket does not drain: a delta was refused at the outbound budget (§8.7) and the client woken. */
    SOCKET_BACKPRESSURE("socket_backpressure"),
    /**
     * The commit could not go out as a delta (§8.2 suppression, a gap, the serve gate, the fan-out share, a socket
     * round in flight): the client was woken (§8.3) and has it at its next pull.
     */
    PULL_INTERVAL("pull_interval");

    /** The name in metrics, the admin API and the console. */
    public final String wire;

    Staleness(String wire) {
        this.wire = wire;
    }
}
