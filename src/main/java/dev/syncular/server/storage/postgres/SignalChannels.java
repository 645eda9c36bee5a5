package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.SocketDisconnect;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.List;

/**
 * The PostgreSQL channels of one storage schema's realtime signals (§8.2): the commit channel every log append
 * notifies, the control channel of socket disconnects and the presence channel, each at most the 63 bytes of a
 * PostgreSQL identifier, and the cluster's NOTIFY queue usage.
 */
final class SignalChannels {
    private final Pool pool;
    private final String pgSchema;

    SignalChannels(Pool pool, String pgSchema) {
        this.pool = pool;
        this.pgSchema = pgSchema;
    }

    /**
     * The PostgreSQL channel every commit of this storage schema is announced on (§8.2): each group transaction
     * issues {@code pg_notify(channel, '<partition>:<commitSeq>')} (or {@code '<partition>:<first>-<last>'} for
     * several commits, {@link CommitAppend#announcement}) before its {@code COMMIT}, so the notification is
     * delivered exactly when the commits commit.
     */
    String notificationChannel() {
        return CommitAppend.notificationChannel(pgSchema);
    }

    /**
     * {@code pg_notification_queue_usage()}: the fraction (0 to 1) of the cluster's NOTIFY queue in use. Every
     * listener of the cluster must consume a notification before its queue space is freed; a full queue makes
     * every notifying commit fail, so the pods export it as a gauge and the chart alerts on it.
     */
    Uni<Double> notificationQueueUsage() {
        return pool.query("SELECT pg_notification_queue_usage()")
                .execute()
                .map(rs -> PgSql.first(rs).getDouble(0));
    }

    /**
     * The PostgreSQL channel of this storage schema's realtime control messages ({@link SocketDisconnect}):
     * {@code syncular_control_} and the schema name as in {@link #notificationChannel()}. Every pod's realtime
     * hub listens on it.
     */
    String controlChannel() {
        String name = "syncular_control_" + notificationChannel().substring("syncular_commits_".length());
        return name.length() > 63 ? name.substring(0, 63) : name;
    }

    /**
     * Announces {@code disconnect} to every pod, this one included (a pod hears its own notifications). Pods whose
     * LISTEN connection is down at that moment do not hear it.
     */
    Uni<Void> announce(SocketDisconnect disconnect) {
        return pool.preparedQuery("SELECT pg_notify($1, $2)")
                .execute(Tuple.of(controlChannel(), disconnect.payload()))
                .replaceWithVoid();
    }

    /**
     * The presence channel beside the commit channel ({@code syncular_commits_<suffix>}):
     * {@code syncular_presence_<suffix>}, at most the 63 bytes of a PostgreSQL identifier.
     */
    String presenceChannel() {
        String channel = "syncular_presence_" + notificationChannel().substring("syncular_commits_".length());
        return channel.length() > 63 ? channel.substring(0, 63) : channel;
    }

    Uni<Void> publishPresence(List<String> chunks) {
        return pool.preparedQuery("SELECT count(pg_notify($1, c)) FROM unnest($2::text[]) AS c")
                .execute(Tuple.of(presenceChannel(), chunks.toArray(String[]::new)))
                .replaceWithVoid();
    }
}
