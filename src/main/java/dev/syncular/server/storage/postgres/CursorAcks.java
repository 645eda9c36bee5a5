package dev.syncular.server.storage.postgres;

import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The §8.2 realtime acks of this pod, written to {@code sync_clients} in batches: while one batch statement runs,
 * the acks that arrive wait for the next, so the pod spends at most one pooled connection on acks however many
 * sockets acknowledge at once (one commit fanned out to 10,000 sockets of one scope brings 10,000 acks within
 * milliseconds; one statement each filled the pool's wait queue and refused the pushes behind them). Acks of one
 * client (with the same actor and log epoch) coalesce into the newest cursor and time. An ack arriving while no
 * batch runs is written at once, alone: a lone ack costs what it did.
 *
 * <p>Each ack's answer is its own row's outcome (updated or not: the record is absent, bound to another actor, or
 * the log epoch moved on); a failed statement fails every ack of its batch, and the cursor stays where it was until
 * a later ack is stored (the §4.6 retention input only lags). Nothing here is shared with another pod: an ack lost
 * with its pod is an ack never sent.
 */
final class CursorAcks {
    /** Acks written by one statement at most; more wait for the next. */
    static final int MAX_BATCH = 1000;

    private final Pool pool;
    private final String batchSql;

    /** Acks waiting for the next statement, by (partition, client, actor, epoch); guarded by {@code this}. */
    private final Map<List<String>, Pending> pending = new LinkedHashMap<>();
    /** Whether a batch statement is running; guarded by {@code this}. */
    private boolean writing;

    CursorAcks(Pool pool, String pgSchema) {
        this.pool = pool;
        // §8.2 ack, as the single-ack statement it replaces: UPDATE only (never creates), monotonic maxima, bound to
        // the actor and the live log epoch, the cursor capped at the partition's newest commit
        this.batchSql = "UPDATE " + PgSql.qualified(pgSchema, "sync_clients")
                + " c SET cursor = GREATEST(c.cursor, LEAST(u.cur, p.max_commit_seq)),"
                + " updated_at_ms = GREATEST(c.updated_at_ms, u.at)"
                + " FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[])"
                + " AS u(pid, cid, aid, ep, cur, at) JOIN " + PgSql.qualified(pgSchema, "sync_partitions")
                + " p ON p.partition_id = u.pid AND p.log_epoch = u.ep"
                + " WHERE c.partition_id = u.pid AND c.client_id = u.cid AND c.actor_id = u.aid"
                + " RETURNING c.partition_id, c.client_id, c.actor_id, u.ep";
    }

    /**
     * One ack's answer and the Vert.x context it was asked on (none off one): a batch completes on the context of
     * the ack that started it, and each answer goes back to its own socket's context.
     */
    private record Waiter(CompletableFuture<Boolean> done, Context context) {
        void answer(Boolean updated, Throwable failure) {
            Runnable complete = () -> {
                if (failure != null) {
                    done.completeExceptionally(failure);
                } else {
                    done.complete(updated);
                }
            };
            if (context == null || context == Vertx.currentContext()) {
                complete.run();
            } else {
                context.runOnContext(v -> complete.run());
            }
        }
    }

    /** One client's acks waiting to be written: the newest cursor and time, and everyone waiting for them. */
    private static final class Pending {
        final List<String> key;
        long cursor;
        long nowMs;
        final List<Waiter> waiters = new ArrayList<>(1);

        Pending(List<String> key, long cursor, long nowMs) {
            this.key = key;
            this.cursor = cursor;
            this.nowMs = nowMs;
        }
    }

    Uni<Boolean> advance(String partition, String clientId, String actorId, String logEpoch, long cursor, long nowMs) {
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        boolean start;
        synchronized (this) {
            List<String> key = List.of(partition, clientId, actorId, logEpoch);
            Pending p = pending.get(key);
            if (p == null) {
                p = new Pending(key, cursor, nowMs);
                pending.put(key, p);
            } else {
                p.cursor = Math.max(p.cursor, cursor);
                p.nowMs = Math.max(p.nowMs, nowMs);
            }
            p.waiters.add(new Waiter(done, Vertx.currentContext()));
            start = !writing;
            writing = true;
        }
        if (start) {
            writeNext();
        }
        return Uni.createFrom().completionStage(done);
    }

    /** Writes the next batch of waiting acks, then the one after it, until none waits. */
    private void writeNext() {
        List<Pending> batch;
        synchronized (this) {
            if (pending.isEmpty()) {
                writing = false;
                return;
            }
            batch = new ArrayList<>(Math.min(pending.size(), MAX_BATCH));
            Iterator<Pending> it = pending.values().iterator();
            while (it.hasNext() && batch.size() < MAX_BATCH) {
                batch.add(it.next());
                it.remove();
            }
        }
        int n = batch.size();
        String[] partitions = new String[n];
        String[] clients = new String[n];
        String[] actors = new String[n];
        String[] epochs = new String[n];
        Long[] cursors = new Long[n];
        Long[] times = new Long[n];
        for (int i = 0; i < n; i++) {
            Pending p = batch.get(i);
            partitions[i] = p.key.get(0);
            clients[i] = p.key.get(1);
            actors[i] = p.key.get(2);
            epochs[i] = p.key.get(3);
            cursors[i] = p.cursor;
            times[i] = p.nowMs;
        }
        Tuple args = Tuple.tuple()
                .addArrayOfString(partitions)
                .addArrayOfString(clients)
                .addArrayOfString(actors)
                .addArrayOfString(epochs)
                .addArrayOfLong(cursors)
                .addArrayOfLong(times);
        Uni<Set<List<String>>> written;
        try {
            written = pool.preparedQuery(batchSql).execute(args).map(rows -> {
                Set<List<String>> updated = new HashSet<>();
                for (Row r : rows) {
                    updated.add(List.of(r.getString(0), r.getString(1), r.getString(2), r.getString(3)));
                }
                return updated;
            });
        } catch (RuntimeException e) {
            written = Uni.createFrom().failure(e);
        }
        written.subscribe()
                .with(
                        updated -> {
                            for (Pending p : batch) {
                                Boolean was = updated.contains(p.key);
                                p.waiters.forEach(w -> w.answer(was, null));
                            }
                            writeNext();
                        },
                        failure -> {
                            for (Pending p : batch) {
                                p.waiters.forEach(w -> w.answer(null, failure));
                            }
                            writeNext();
                        });
    }
}
