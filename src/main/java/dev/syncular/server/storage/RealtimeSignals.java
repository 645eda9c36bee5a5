package dev.syncular.server.storage;

import io.smallrye.mutiny.Uni;
import java.util.List;

/**
 * The storage's signals to the realtime hubs of every pod (§8.2, §8.3, §8.6): the channel each commit is announced
 * on, the control channel operator disconnects travel on, the presence channel the pods relay presence on, and the
 * fill of the notification queue they share. The PostgreSQL storage implements them with {@code LISTEN}/{@code
 * NOTIFY}; a hub hears them through a {@link SignalListener}.
 */
public interface RealtimeSignals {

    /**
     * The tail of the commit-channel notification {@code <partition>:epoch} that
     * {@link SyncStorage#rotateLogEpoch} sends in its transaction (a commit's tail is its numeric commitSeq, so the
     * two never collide): every pod's realtime hub fences that partition's sessions with {@code reset-required}
     * (§2.1, §8.3).
     */
    String EPOCH_NOTIFICATION = "epoch";

    /**
     * The channel every commit of this storage is announced on (§8.2): each group transaction of a partition's
     * pushes announces its commits once, {@code '<partition>:<commitSeq>'} or {@code '<partition>:<first>-<last>'},
     * in that transaction, so the notification is delivered exactly when the commits commit.
     */
    String notificationChannel();

    /**
     * The fraction (0 to 1) of the notification queue in use. Every listener must consume a notification before
     * its queue space is freed; a full queue makes every notifying commit fail, so the pods export it as a gauge.
     */
    Uni<Double> notificationQueueUsage();

    /** The channel of this storage's realtime control messages ({@link SocketDisconnect}); every hub listens on it. */
    String controlChannel();

    /**
     * Announces {@code disconnect} to every pod, this one included (a pod hears its own notifications). Pods whose
     * listening connection is down at that moment do not hear it.
     */
    Uni<Void> announce(SocketDisconnect disconnect);

    /** The channel the realtime hubs relay presence between the pods on (§8.6 with several pods). */
    String presenceChannel();

    /**
     * Sends {@code chunks} (the chunks of one presence message, each under 8000 bytes) on {@link #presenceChannel}
     * in one statement — one transaction: delivered together and in order — to every pod, this one included.
     */
    Uni<Void> publishPresence(List<String> chunks);
}
