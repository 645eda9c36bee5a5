package dev.syncular.server.storage;

import java.util.function.DoubleSupplier;

/** Told where pull-only rounds read and how each replica is doing ({@link ReadReplicas}; metrics). */
public interface ReplicaObserver {

    /** What became of a round a replica was asked to serve. */
    enum Outcome {
        /** The replica held the partition through what the round needs: it served the round. */
        SERVED("served"),
        /** The replica had not replayed far enough: the round read the primary. */
        BEHIND("behind"),
        /** The replica was out of rotation or failed: the round read the primary. */
        UNAVAILABLE("unavailable");

        public final String tag;

        Outcome(String tag) {
            this.tag = tag;
        }
    }

    ReplicaObserver NONE = new ReplicaObserver() {
        @Override
        public void read(String replica, Outcome outcome) {}

        @Override
        public void watch(String replica, DoubleSupplier lagSeconds, DoubleSupplier inRotation) {}
    };

    /** A round {@code replica} ({@code host:port/db}, never a password) was asked to serve ended {@code outcome}. */
    void read(String replica, Outcome outcome);

    /** The replica's replay lag in seconds and whether it is in rotation ({@code 1}) or not ({@code 0}). */
    void watch(String replica, DoubleSupplier lagSeconds, DoubleSupplier inRotation);
}
