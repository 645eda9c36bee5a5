package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * How DDL runs: the catalog-checked start-up DDL of {@link DdlStep}s (the storage's, the segment and blob
 * stores'), the READ COMMITTED DDL transaction under {@code lock_timeout} that the schema upgrade (§2.4) also runs
 * in, its retry after a lock timeout, and the advisory locks that let concurrent starters take turns.
 */
final class StartupDdl {
    /** {@code lock_timeout} of start-up DDL and of the schema-upgrade transaction. */
    static final long DDL_LOCK_TIMEOUT_MS = 5000;
    /** Attempts of a start-up DDL transaction that hit its lock timeout (backoff 0.2 s to 5 s between). */
    static final int DDL_ATTEMPTS = 20;

    private StartupDdl() {}

    /**
     * The catalog-checked start-up DDL: one catalog read evaluates every step's probe; when nothing is missing
     * (every boot but the first on a database) that is all — no transaction, no DDL, no lock on any table.
     * Otherwise one READ COMMITTED transaction under {@code lock_timeout} {@value #DDL_LOCK_TIMEOUT_MS} ms and
     * the transaction advisory lock {@code lockName} (concurrent starters — pods, test classes — apply it one
     * at a time) re-reads the probes and runs the steps still missing, in order; a lock timeout rolls it back
     * and it is retried ({@link #retryingLockTimeouts}). {@link DdlStep#concurrent() Concurrent} index builds on
     * existing tables run last, outside any transaction, one starter at a time (a session advisory lock); on a
     * table created by the same start-up the index is created with it. Notices are silenced.
     */
    static Uni<Void> applyDdl(Pool pool, String lockName, List<DdlStep> steps) {
        List<DdlStep> concurrent = steps.stream().filter(DdlStep::concurrent).toList();
        List<String> probes = new ArrayList<>(steps.stream().map(DdlStep::probe).toList());
        concurrent.forEach(s -> probes.add(s.tableProbe()));
        return probe(pool, probes).chain(present -> {
            List<DdlStep> missing = new ArrayList<>();
            List<DdlStep> built = new ArrayList<>();
            for (int i = 0; i < steps.size(); i++) {
                DdlStep s = steps.get(i);
                if (present[i]) {
                    continue;
                }
                // an index of a table this start-up creates is created with it; on an existing table, concurrently
                boolean existingTable = s.concurrent() && present[steps.size() + concurrent.indexOf(s)];
                (existingTable ? built : missing).add(s);
            }
            Uni<Void> tx = missing.isEmpty()
                    ? Uni.createFrom().voidItem()
                    : ddlTransaction(
                            pool,
                            conn -> xactLock(conn, lockName)
                                    .chain(() -> probe(
                                            conn,
                                            missing.stream().map(DdlStep::probe).toList()))
                                    .chain(still -> {
                                        List<String> sql = new ArrayList<>();
                                        for (int i = 0; i < missing.size(); i++) {
                                            if (!still[i]) {
                                                sql.add(missing.get(i).sql());
                                            }
                                        }
                                        return execAll(conn, sql);
                                    }));
            return tx.chain(() -> buildConcurrently(pool, lockName, built));
        });
    }

    /** The answers of {@code probes}, in order (one statement; reads the catalog only). */
    private static Uni<boolean[]> probe(SqlClient c, List<String> probes) {
        if (probes.isEmpty()) {
            return Uni.createFrom().item(new boolean[0]);
        }
        return c.query("SELECT " + String.join(", ", probes)).execute().map(rs -> {
            Row r = first(rs);
            boolean[] present = new boolean[probes.size()];
            for (int i = 0; i < present.length; i++) {
                present[i] = Boolean.TRUE.equals(r.getBoolean(i));
            }
            return present;
        });
    }

    /**
     * {@code CREATE INDEX CONCURRENTLY} of the missing {@code steps} (an invalid leftover dropped first), on one
     * pooled connection outside a transaction, under the session advisory lock {@code lockName + ":concurrent"}.
     * Writers are never blocked; this starter waits for the build.
     */
    private static Uni<Void> buildConcurrently(Pool pool, String lockName, List<DdlStep> steps) {
        if (steps.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        Tuple lock = Tuple.of(lockName + ":concurrent");
        return pool.withConnection(conn -> conn.query("SET client_min_messages = warning")
                .execute()
                .chain(() -> conn.preparedQuery("SELECT pg_advisory_lock(hashtext($1))")
                        .execute(lock))
                .chain(() -> probe(conn, steps.stream().map(DdlStep::probe).toList()))
                .chain(present -> {
                    Uni<Void> chain = Uni.createFrom().voidItem();
                    for (int i = 0; i < steps.size(); i++) {
                        DdlStep s = steps.get(i);
                        if (!present[i]) {
                            chain = chain.chain(
                                            () -> conn.query(s.dropInvalid()).execute())
                                    .chain(() -> conn.query(s.concurrentSql()).execute())
                                    .replaceWithVoid();
                        }
                    }
                    return chain;
                })
                .eventually(() -> conn.preparedQuery("SELECT pg_advisory_unlock(hashtext($1))")
                        .execute(lock)
                        .chain(() -> conn.query("RESET client_min_messages").execute())
                        .onFailure()
                        .recoverWithNull()));
    }

    /**
     * A READ COMMITTED transaction for DDL and the schema upgrade: {@code lock_timeout}
     * {@value #DDL_LOCK_TIMEOUT_MS} ms (a DDL lock request queued behind a long transaction would otherwise
     * stall every push queued behind it), notices silenced; retried on lock timeouts.
     */
    static <T> Uni<T> ddlTransaction(Pool pool, Function<SqlConnection, Uni<T>> work) {
        return retryingLockTimeouts(PgSql.readCommitted(
                pool,
                conn -> conn.query("SET LOCAL lock_timeout = " + DDL_LOCK_TIMEOUT_MS
                                + "; SET LOCAL statement_timeout = 0; SET LOCAL client_min_messages = warning")
                        .execute()
                        .chain(() -> work.apply(conn))));
    }

    /** Re-subscribes {@code u} (a whole transaction) after a lock timeout, with backoff, a bounded number of times. */
    static <T> Uni<T> retryingLockTimeouts(Uni<T> u) {
        return u.onFailure(e -> e instanceof PgException pe && "55P03".equals(pe.getSqlState()))
                .retry()
                .withBackOff(Duration.ofMillis(200), Duration.ofSeconds(5))
                .atMost(DDL_ATTEMPTS);
    }

    static Uni<RowSet<Row>> xactLock(SqlConnection conn, String lockName) {
        return conn.preparedQuery("SELECT pg_advisory_xact_lock(hashtext($1))").execute(Tuple.of(lockName));
    }

    static Uni<Void> execAll(SqlConnection conn, List<String> statements) {
        return Multi.createFrom()
                .iterable(statements)
                .onItem()
                .transformToUniAndConcatenate(sql -> conn.query(sql).execute())
                .collect()
                .last()
                .replaceWithVoid();
    }
}
