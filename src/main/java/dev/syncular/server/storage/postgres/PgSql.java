package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.StorageException;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Future;
import io.vertx.core.http.ConnectionPoolTooBusyException;
import io.vertx.mutiny.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;
import java.io.IOException;
import java.net.SocketException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/**
 * The small SQL helpers every class of the PostgreSQL storage shares: identifier quoting and qualification,
 * string literals, the first row of a result, the pipelined-statement join ({@link #allSettled}), the
 * READ COMMITTED transaction ({@link #readCommitted}), the transient-failure classification ({@link #busy}).
 * No state.
 */
final class PgSql {
    /** The first statement of every explicit transaction of this storage (see the package documentation). */
    static final String READ_COMMITTED = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED";
    /** How long a client is told to wait after a transient refusal ({@link StorageException#BUSY}). */
    static final long RETRY_AFTER_MS = StorageException.BUSY_RETRY_AFTER_MS;
    /**
     * The type of a failure Vert.x builds from a bare message ({@code Future.failedFuture(String)}), which is how
     * the SQL client's pool fails a wait for a connection that is not free in time (message {@code Timeout}). Vert.x
     * has no public type for it, so the type is taken from the public factory, not named (it is internal).
     */
    private static final Class<? extends Throwable> MESSAGE_FAILURE =
            Future.failedFuture("Timeout").cause().getClass();

    private PgSql() {}

    /** A quoted PostgreSQL identifier. */
    static String q(String ident) {
        return '"' + ident.replace("\"", "\"\"") + '"';
    }

    /** The qualified, quoted name of a storage object in the PostgreSQL schema {@code pgSchema}. */
    static String qualified(String pgSchema, String name) {
        return q(pgSchema) + "." + q(name);
    }

    /** A SQL string literal. */
    static String lit(String text) {
        return "'" + text.replace("'", "''") + "'";
    }

    static Row first(RowSet<Row> rs) {
        var it = rs.iterator();
        return it.hasNext() ? it.next() : null;
    }

    static byte[] bytes(Buffer b) {
        return b == null ? null : b.getBytes();
    }

    /**
     * Completes once every pipelined statement of {@code sent} is answered; fails with the first failure in
     * sending order (later ones are its consequence). Nothing sent: done at once.
     */
    static Uni<Void> allSettled(List<? extends CompletableFuture<?>> sent) {
        if (sent.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        CompletableFuture<Void> all = CompletableFuture.allOf(
                sent.stream().map(f -> f.handle((v, e) -> null)).toArray(CompletableFuture[]::new));
        return Uni.createFrom().completionStage(all).chain(() -> {
            for (CompletableFuture<?> f : sent) {
                if (f.isCompletedExceptionally()) {
                    Throwable cause = f.handle((v, e) -> e).join();
                    while (cause instanceof CompletionException && cause.getCause() != null) {
                        cause = cause.getCause();
                    }
                    return Uni.createFrom().failure(cause);
                }
            }
            return Uni.createFrom().voidItem();
        });
    }

    /**
     * {@code work} in one transaction that states its isolation level first: READ COMMITTED, so each
     * statement sees what committed before it started — what every multi-statement transaction here relies on
     * after taking a lock (a fresh snapshot per statement). Rolled back when {@code work} fails.
     */
    static <T> Uni<T> readCommitted(Pool pool, Function<SqlConnection, Uni<T>> work) {
        return pool.withTransaction(conn -> conn.query(READ_COMMITTED).execute().chain(() -> work.apply(conn)));
    }

    /**
     * A transient failure as {@link StorageException#BUSY} (the same request may succeed later): a lock or
     * statement timeout (SQLSTATE 55P03, 57014), a deadlock or serialization failure (40P01, 40001), too many
     * connections (53300), a full pool wait queue or a timed-out wait for a pooled connection — nothing was
     * written — and the database going away under a failover or restart ({@code storage_unavailable}: 57P01-57P03,
     * a refused, reset or closed connection, no host of a list accepting writes; {@code read_only}: 25006), where a commit
     * may have landed before the connection closed and the client's retry with the same client commit id is
     * answered from its §2.3 idempotency record. {@code null} for anything else.
     */
    static StorageException busy(Throwable t) {
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof StorageException se) {
            return StorageException.BUSY.equals(se.code()) ? se : null;
        }
        String reason = null;
        if (t instanceof PgException pe) {
            reason = switch (String.valueOf(pe.getSqlState())) {
                case "55P03" -> "lock_timeout";
                case "57014" -> "statement_timeout";
                case "40P01" -> "deadlock";
                case "40001" -> "serialization_failure";
                case "53300" -> "too_many_connections";
                // a failover or restart in progress: the session was ended, the server is starting or stopping
                case "57P01", "57P02", "57P03" -> "storage_unavailable";
                // the host demoted to a standby under an open connection (a failover): the next one finds the primary
                case "25006" -> "read_only";
                default -> null;
            };
        } else if (connectionLost(t)) {
            reason = "storage_unavailable"; // no host accepts writes, or the connection went away: retry shortly
        } else if (t instanceof ConnectionPoolTooBusyException) {
            reason = "pool_wait_queue_full";
        } else if (MESSAGE_FAILURE.isInstance(t) && "Timeout".equals(t.getMessage())) {
            reason = "pool_wait_timeout"; // the pool's own failure for a connection not free in time
        }
        return reason == null ? null : busy(reason, t);
    }

    /**
     * Whether {@code t} or one of its causes says the database connection went away under the request (the server
     * restarted or failed over): no host accepts writes, the connection was closed, refused or reset, a write hit a
     * broken pipe, or the client found the connection no longer active.
     */
    private static boolean connectionLost(Throwable t) {
        for (int depth = 0; t != null && depth < 6; depth++, t = t.getCause()) {
            String message = String.valueOf(t.getMessage());
            if (t instanceof ReadWriteTarget.NoWritableHostException
                    || t instanceof ClosedConnectionException
                    || t instanceof SocketException
                    || (t instanceof IOException
                            && (message.contains("Broken pipe") || message.contains("Connection reset")))
                    || message.startsWith("Connection is not active now")) {
                return true;
            }
        }
        return false;
    }

    static StorageException busy(String reason, Throwable cause) {
        return StorageException.busy(reason, cause);
    }

    /** {@link #busy(Throwable)}, or {@code t} itself. */
    static Throwable busyOr(Throwable t) {
        StorageException b = busy(t);
        return b != null ? b : t;
    }
}
