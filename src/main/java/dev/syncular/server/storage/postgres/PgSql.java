package dev.syncular.server.storage.postgres;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The small SQL helpers every class of the PostgreSQL storage shares: identifier quoting and qualification,
 * string literals, the first row of a result, the pipelined-statement join ({@link #allSettled}) and the one
 * {@link ObjectMapper}. No state, no SQL of its own.
 */
final class PgSql {
    static final ObjectMapper JSON = new ObjectMapper();

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
     * sending order (later ones are its consequence).
     */
    static Uni<Void> allSettled(List<? extends CompletableFuture<?>> sent) {
        CompletableFuture<Void> all = CompletableFuture
                .allOf(sent.stream().map(f -> f.handle((v, e) -> null)).toArray(CompletableFuture[]::new));
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
}
