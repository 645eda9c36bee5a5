package dev.syncular.server.sync;

import java.util.List;

/**
 * What the engine tells operations about its work — metrics, the admin event tail — without depending on
 * either: the edge ({@code ops}) implements it, the engine only calls it. Every method defaults to doing
 * nothing and is called on the thread that finished the work, often an event loop: an implementation must
 * return at once and never block.
 */
public interface SyncObserver {
    SyncObserver NONE = new SyncObserver() {};

    /** How a pushed commit ended (§6.3): applied, replayed from its retained result (§2.3), or refused. */
    enum CommitOutcome {
        APPLIED,
        CACHED,
        CONFLICTED,
        REJECTED
    }

    /** Where pulled rows came from: the incremental log window (§4.5), rows segments (§5.2), a SQLite image (§5.3). */
    enum Lane {
        COMMITS,
        ROWS,
        IMAGE
    }

    /**
     * How segment bytes reached a client: inside the response (§5.7), downloaded from this server (§5.5, native
     * signed URLs included), or from the object store through a provider-presigned URL (§5.4).
     */
    enum Delivery {
        INLINE,
        DIRECT,
        PRESIGNED
    }

    /**
     * One pushed commit, after its transaction committed. {@code code} is the §10 code of the refusing result
     * ({@code null} when applied or replayed); {@code operations} the commit's operation count; {@code bytes} the
     * size of its operations as pushed (§6.1: table, row id and sparse row payload of each).
     */
    record Commit(
            String partition,
            String clientId,
            String clientCommitId,
            CommitOutcome outcome,
            String code,
            int operations,
            long bytes) {}

    /**
     * A round of {@code partition} that was admitted ({@link RoundAdmission}) ended after {@code nanos}, from its entry
     * read to its last statement: {@code outcome} is {@code "ok"} or the §10 code it failed with, {@code failure} what
     * it failed with ({@code null} when it succeeded) — a transient storage refusal among them, which the binding
     * answers {@code sync.rate_limited} (§10.2).
     */
    default void roundEnded(String partition, String outcome, Throwable failure, long nanos) {}

    default void commitPushed(Commit commit) {}

    /** Rows a released response carried on {@code lane} (only called with {@code rows > 0}). */
    default void rowsPulled(Lane lane, long rows) {}

    /** Segment bytes that reached a client by {@code delivery} (only called with {@code bytes > 0}). */
    default void segmentBytes(Delivery delivery, long bytes) {}

    /**
     * A released response's sections took {@code reads} snapshot pages or log windows from another section of their
     * round that names the same table and effective scopes, instead of reading them again ({@code reads > 0}).
     */
    default void readsShared(long reads) {}

    /** A cold §5.3 image build was not started: its partition had its share of builds running (rows lane instead). */
    default void imageBuildDeferred() {}

    /** A §5.3 SQLite image was served from the store ({@code built = false}) or built and published here. */
    default void imageServed(boolean built) {}

    /** A request was refused by the §2.4 serve gate for {@code reason}. */
    default void gateRefused(String partition, String reason) {}

    /** A §6.9 reaction of {@code type} was appended by a push transaction that committed. */
    default void reactionPlanned(String type) {}

    /**
     * A released pull handed its client {@code count} commits past its cursor (§4.5), each once however many of the
     * round's sections carried it: {@code createdAtMs[0..count)} are their creation times, {@code lastContactMs} the
     * update time of the client's stored record before the round ({@code -1}: none, a client never seen).
     */
    default void commitsVisible(String partition, long[] createdAtMs, int count, long lastContactMs) {}

    /** Tells every one of {@code observers}, in order. */
    static SyncObserver of(SyncObserver... observers) {
        List<SyncObserver> all = List.of(observers);
        return new SyncObserver() {
            @Override
            public void roundEnded(String partition, String outcome, Throwable failure, long nanos) {
                all.forEach(o -> o.roundEnded(partition, outcome, failure, nanos));
            }

            @Override
            public void commitPushed(Commit commit) {
                all.forEach(o -> o.commitPushed(commit));
            }

            @Override
            public void rowsPulled(Lane lane, long rows) {
                all.forEach(o -> o.rowsPulled(lane, rows));
            }

            @Override
            public void segmentBytes(Delivery delivery, long bytes) {
                all.forEach(o -> o.segmentBytes(delivery, bytes));
            }

            @Override
            public void readsShared(long reads) {
                all.forEach(o -> o.readsShared(reads));
            }

            @Override
            public void imageBuildDeferred() {
                all.forEach(SyncObserver::imageBuildDeferred);
            }

            @Override
            public void imageServed(boolean built) {
                all.forEach(o -> o.imageServed(built));
            }

            @Override
            public void gateRefused(String partition, String reason) {
                all.forEach(o -> o.gateRefused(partition, reason));
            }

            @Override
            public void commitsVisible(String partition, long[] createdAtMs, int count, long lastContactMs) {
                all.forEach(o -> o.commitsVisible(partition, createdAtMs, count, lastContactMs));
            }

            @Override
            public void reactionPlanned(String type) {
                all.forEach(o -> o.reactionPlanned(type));
            }
        };
    }
}
