package dev.syncular.server.storage;

import java.util.Objects;

/**
 * An operator's request that every pod close the realtime sockets of one actor, or of one client, in a
 * partition: announced with {@code pg_notify} on the storage schema's control channel
 * ({@link RealtimeSignals#controlChannel()}), which every pod's realtime hub listens on, so it reaches the
 * pods that hold the sockets whichever pod took the admin request. Exactly one of {@code actorId} and
 * {@code clientId} is set.
 *
 * <p>Payload: {@code actor:<n>:<partition><actorId>} or {@code client:<n>:<partition><clientId>}, {@code n} the
 * partition's length in UTF-16 units, so neither id needs escaping. Ids are storable keys (at most 512 UTF-8
 * bytes each), so a payload stays far below PostgreSQL's 8000-byte {@code NOTIFY} limit.
 */
public record SocketDisconnect(String partition, String actorId, String clientId) {
    public SocketDisconnect {
        Objects.requireNonNull(partition, "partition");
        if ((actorId == null) == (clientId == null)) {
            throw new IllegalArgumentException("exactly one of actorId and clientId");
        }
    }

    public static SocketDisconnect actor(String partition, String actorId) {
        return new SocketDisconnect(partition, Objects.requireNonNull(actorId), null);
    }

    public static SocketDisconnect client(String partition, String clientId) {
        return new SocketDisconnect(partition, null, Objects.requireNonNull(clientId));
    }

    /** Whether a socket of {@code actor} / {@code client} in {@code partitionOfSocket} is meant. */
    public boolean matches(String partitionOfSocket, String actor, String client) {
        return partition.equals(partitionOfSocket)
                && (actorId != null ? actorId.equals(actor) : clientId.equals(client));
    }

    /** The {@code NOTIFY} payload ({@link #parse} reads it back). */
    public String payload() {
        return (actorId != null ? "actor:" : "client:") + partition.length() + ":" + partition
                + (actorId != null ? actorId : clientId);
    }

    /** The request a control-channel payload carries, or {@code null} for one this version does not know. */
    public static SocketDisconnect parse(String payload) {
        int kindEnd = payload.indexOf(':');
        int lengthEnd = kindEnd < 0 ? -1 : payload.indexOf(':', kindEnd + 1);
        if (lengthEnd < 0) {
            return null;
        }
        String kind = payload.substring(0, kindEnd);
        int n;
        try {
            n = Integer.parseInt(payload.substring(kindEnd + 1, lengthEnd));
        } catch (NumberFormatException e) {
            return null;
        }
        int from = lengthEnd + 1;
        if (n < 0 || from + n >= payload.length()) {
            return null;
        }
        String partition = payload.substring(from, from + n);
        String id = payload.substring(from + n);
        return switch (kind) {
            case "actor" -> actor(partition, id);
            case "client" -> client(partition, id);
            default -> null;
        };
    }
}
