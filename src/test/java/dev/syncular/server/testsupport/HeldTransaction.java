package dev.syncular.server.testsupport;

import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A transaction a test opens on a connection of its own and keeps open — holding the locks its statements
 * took — to show what another session does meanwhile: whether it waits ({@link #awaitBlocked}), which locks it
 * already holds ({@link #relationLocks}), or that it never needed what is held. {@link #close} rolls back.
 */
public final class HeldTransaction implements AutoCloseable {
    /** How long {@link #awaitBlocked} waits for another session to block. */
    public static final Duration WAIT = Duration.ofSeconds(30);
    /** How long one statement may take (a benchmark's bulk insert included). */
    private static final Duration STATEMENT = Duration.ofMinutes(15);

    private final Pool pool;
    private final SqlConnection conn;
    private final int pid;
    private boolean open = true;

    private HeldTransaction(Pool pool, SqlConnection conn, int pid) {
        this.pool = pool;
        this.conn = conn;
        this.pid = pid;
    }

    /** BEGIN on a connection of {@code pool}, then {@code statements} in that transaction. */
    public static HeldTransaction begin(Pool pool, String... statements) {
        SqlConnection conn = pool.getConnection().await().atMost(WAIT);
        int pid = conn.query("SELECT pg_backend_pid()")
                .execute()
                .await()
                .atMost(WAIT)
                .iterator()
                .next()
                .getInteger(0);
        HeldTransaction t = new HeldTransaction(pool, conn, pid);
        t.execute("BEGIN");
        for (String s : statements) {
            t.execute(s);
        }
        return t;
    }

    public RowSet<Row> execute(String sql) {
        return conn.query(sql).execute().await().atMost(STATEMENT);
    }

    /** This transaction's backend process id. */
    public int pid() {
        return pid;
    }

    /**
     * Waits (a poll of {@code pg_stat_activity} with a deadline) until some other backend is blocked by this
     * transaction's locks; yields that backend's pid.
     */
    public int awaitBlocked() {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            RowSet<Row> rs = pool.preparedQuery(
                            "SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))")
                    .execute(Tuple.of(pid))
                    .await()
                    .atMost(WAIT);
            if (rs.size() > 0) {
                return rs.iterator().next().getInteger(0);
            }
        }
        throw new AssertionError("no session got blocked by the held transaction within " + WAIT);
    }

    /**
     * The relation-level locks backend {@code otherPid} holds (granted) on relations of {@code pgSchema}, as
     * {@code relname:mode}.
     */
    public List<String> relationLocks(int otherPid, String pgSchema) {
        List<String> out = new ArrayList<>();
        for (Row r : pool.preparedQuery(
                        "SELECT c.relname::text || ':' || l.mode FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                                + " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE l.pid = $1 AND l.granted AND n.nspname = $2 ORDER BY 1")
                .execute(Tuple.of(otherPid, pgSchema))
                .await()
                .atMost(WAIT)) {
            out.add(r.getString(0));
        }
        return out;
    }

    public void commit() {
        end("COMMIT");
    }

    @Override
    public void close() {
        end("ROLLBACK");
    }

    private void end(String how) {
        if (open) {
            open = false;
            try {
                execute(how);
            } finally {
                conn.close().await().atMost(WAIT);
            }
        }
    }
}
