package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.StorageException;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import java.util.List;
import java.util.function.Function;

/**
 * What the stores living in the storage's PostgreSQL schema share with {@link PostgresSyncStorage} (the embedded
 * segment and blob stores): identifier quoting, catalog-checked start-up DDL, the READ COMMITTED transaction, and
 * the recognition of a transient failure ({@code sync.storage.busy}) the bindings answer {@code sync.rate_limited}.
 */
public final class PostgresStores {
    private PostgresStores() {}

    /**
     * Catalog-checked start-up DDL ({@link DdlStep}): nothing but one catalog read when every object exists;
     * otherwise the missing steps in one transaction under {@code lock_timeout} and an advisory lock on
     * {@code lockName} (concurrent starters — pods, test classes — apply it one at a time), retried after a lock
     * timeout, then any concurrent index builds. Notices are silenced.
     */
    public static Uni<Void> applyDdl(Pool pool, String lockName, List<DdlStep> ddl) {
        return StartupDdl.applyDdl(pool, lockName, ddl);
    }

    /**
     * {@code work} in a transaction whose first statement states READ COMMITTED (the isolation level every
     * transaction of this storage, and of the stores sharing its schema, relies on); rolled back on failure.
     */
    public static <T> Uni<T> readCommitted(Pool pool, Function<SqlConnection, Uni<T>> work) {
        return PgSql.readCommitted(pool, work);
    }

    /**
     * {@code t} as {@code sync.storage.busy} when it is a transient storage failure the same request may retry
     * (a lock or statement timeout, a deadlock, a full or timed-out connection pool, a full push queue), else
     * {@code null}. The HTTP and realtime bindings answer it {@code sync.rate_limited} with {@code Retry-After}.
     */
    public static StorageException busy(Throwable t) {
        return PgSql.busy(t);
    }

    /** A quoted PostgreSQL identifier (shared by the stores that live in the same PostgreSQL schema). */
    public static String q(String ident) {
        return PgSql.q(ident);
    }
}
