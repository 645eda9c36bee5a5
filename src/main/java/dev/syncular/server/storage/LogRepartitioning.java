package dev.syncular.server.storage;

import io.smallrye.mutiny.Uni;
import java.util.function.Consumer;

/**
 * The commit log's physical layout and its online move to hash partitions by partition id (docs/SCALING.md,
 * "Partitioning the commit log"): the {@code repartition-log} command's storage side.
 */
public interface LogRepartitioning {

    /**
     * The layout now.
     *
     * @param leaves hash partitions of each log table ({@code 0}: plain tables)
     * @param moving a move was started and has not swapped yet (running it again resumes it)
     */
    record Layout(int leaves, boolean moving) {}

    /** What a move did: the leaves before and after, and the rows the copy phase wrote. */
    record Report(int leavesBefore, int leavesAfter, long rowsCopied) {}

    /** The layout now (catalog reads only). */
    Uni<Layout> layout();

    /**
     * Moves a plain log to {@code leaves} hash partitions while the deployment keeps serving; resumes a move that
     * was interrupted; does nothing on a partitioned log. Copies {@code batchRows} rows a transaction and tells
     * {@code progress} after each batch.
     */
    Uni<Report> repartition(int leaves, int batchRows, Consumer<String> progress);
}
