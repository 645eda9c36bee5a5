package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.first;

import dev.syncular.server.storage.ConsoleSession;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.List;

/**
 * Operator console sessions: {@code sync_console_sessions(id_hash bytea PK, principal, csrf_token, created_at_ms,
 * expires_at_ms)}. The primary key is the SHA-256 of the session id, never the id. Expired rows are deleted by
 * every sign-in and never read.
 */
final class ConsoleSessions {
    private final Pool pool;
    private final String insert;
    private final String purge;
    private final String select;
    private final String delete;

    ConsoleSessions(Pool pool, String pgSchema) {
        this.pool = pool;
        String t = PgSql.qualified(pgSchema, "sync_console_sessions");
        insert = "INSERT INTO " + t + " (id_hash, principal, csrf_token, created_at_ms, expires_at_ms)"
                + " VALUES ($1, $2, $3, $4, $5)";
        purge = "DELETE FROM " + t + " WHERE expires_at_ms <= $1";
        select = "SELECT id_hash, principal, csrf_token, created_at_ms, expires_at_ms FROM " + t
                + " WHERE id_hash = $1 AND expires_at_ms > $2";
        delete = "DELETE FROM " + t + " WHERE id_hash = $1";
    }

    /** The DDL of the session table (part of the storage schema migration). */
    static List<DdlStep> ddl(String pgSchema) {
        String t = PgSql.qualified(pgSchema, "sync_console_sessions");
        return List.of(DdlStep.relation(
                pgSchema,
                "sync_console_sessions",
                "CREATE TABLE IF NOT EXISTS " + t
                        + " (id_hash bytea PRIMARY KEY, principal text NOT NULL, csrf_token text NOT NULL,"
                        + " created_at_ms bigint NOT NULL, expires_at_ms bigint NOT NULL)"));
    }

    Uni<Void> create(ConsoleSession s, long nowMs) {
        return pool.preparedQuery(purge)
                .execute(Tuple.of(nowMs))
                .chain(() -> pool.preparedQuery(insert)
                        .execute(Tuple.of(
                                Buffer.buffer(s.idHash()),
                                s.principal(),
                                s.csrfToken(),
                                s.createdAtMs(),
                                s.expiresAtMs())))
                .replaceWithVoid();
    }

    Uni<ConsoleSession> read(byte[] idHash, long nowMs) {
        return pool.preparedQuery(select)
                .execute(Tuple.of(Buffer.buffer(idHash), nowMs))
                .map(rs -> {
                    Row r = first(rs);
                    return r == null
                            ? null
                            : new ConsoleSession(
                                    PgSql.bytes(r.getBuffer(0)),
                                    r.getString(1),
                                    r.getString(2),
                                    r.getLong(3),
                                    r.getLong(4));
                });
    }

    Uni<Boolean> delete(byte[] idHash) {
        return pool.preparedQuery(delete)
                .execute(Tuple.of(Buffer.buffer(idHash)))
                .map(rs -> rs.rowCount() > 0);
    }
}
