package dev.syncular.server.storage;

import io.smallrye.mutiny.Uni;

/**
 * Hot standbys the reads of pull-only rounds may use (docs/SCALING.md, "Reads from replicas";
 * {@code syncular.storage.replicas}). Pushes, every read inside a push, and the writes of a pull round (the client
 * record, the entry and exit reads) stay on the primary; {@link #NONE} routes every round there.
 *
 * <p>The freshness rule: a replica serves a round only if the partition's commit sequence, read inside the
 * replica's own snapshot, is at least {@code max(heldSeq, announcedSeq)} — what the client already holds (its
 * cursors, a resumed bootstrap's pin) and the partition's commit sequence this pod last saw announced by the primary
 * ({@link #announced}, §8.2). Otherwise the round reads the primary. The answer is then never older than what the
 * client holds, nor than a commit the client may have been told of (a realtime wake-up, §8.3).
 */
public interface ReadReplicas {

    /** No replicas: every round reads the primary. */
    ReadReplicas NONE = new ReadReplicas() {
        @Override
        public Uni<ReadRoute> route(String partition, long heldSeq) {
            return Uni.createFrom().item(ReadRoute.PRIMARY);
        }

        @Override
        public void announced(String partition, long seq) {}

        @Override
        public void announcementsLost() {}
    };

    /**
     * Where a pull-only round of {@code partition} reads, whose client holds the partition's state through
     * {@code heldSeq} ({@code -1}: nothing). Never fails: a replica that cannot answer routes to the primary.
     */
    Uni<ReadRoute> route(String partition, long heldSeq);

    /** The primary announced commit {@code seq} of {@code partition} (§8.2); called on the LISTEN event loop. */
    void announced(String partition, long seq);

    /**
     * The pod re-{@code LISTEN}ed: announcements in between were lost, so {@link #announced} no longer bounds what a
     * client may have been told; replicas serve again once they have replayed what the primary held then.
     */
    void announcementsLost();
}
