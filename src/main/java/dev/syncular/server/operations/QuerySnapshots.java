package dev.syncular.server.operations;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import java.util.function.BiFunction;

/**
 * Where a registered query's snapshot runs (REMOTE.md §2): {@link #primary} or, with read replicas configured, a
 * hot standby that has replayed the partition through every commit this pod heard announced (docs/SCALING.md,
 * "Reads from replicas"). {@code work(pool, need)} runs the snapshot on {@code pool}, failing with
 * {@code PostgresReadReplicas.Behind} when the partition's {@code maxCommitSeq} in it is below {@code need}.
 */
public interface QuerySnapshots {

    /** Every snapshot on {@code primary}, whose {@code need} is {@code -1} (any sequence). */
    static QuerySnapshots primary() {
        return (partition, primary, work) -> work.apply(primary, -1L);
    }

    Uni<QueryExecutor.Result> run(
            String partition, Pool primary, BiFunction<Pool, Long, Uni<QueryExecutor.Result>> work);
}
