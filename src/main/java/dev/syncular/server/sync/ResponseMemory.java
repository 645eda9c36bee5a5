package dev.syncular.server.sync;

/**
 * The pod-wide memory that planned responses draw from, beside the §1.4 budget of each round: a round's planned
 * frames are held whole until the round is verified, so with many large rounds at once their sum, not any one
 * round, is what can exhaust the heap. Each planned data frame's bytes are taken from it; once the pod holds more
 * than it allows, the round's response stops growing as if its own §1.4 budget were spent (bootstraps stop at the
 * next page, later subscriptions end with their resume token or cursor; the client continues in its next round),
 * and the bindings refuse new rounds with 429 {@code sync.rate_limited} until memory is given back. The round gives
 * its bytes back when it ends; the binding then holds the response it writes against the same budget.
 */
public interface ResponseMemory {
    /** No pod-wide limit: only each round's own §1.4 budget applies. */
    ResponseMemory NONE = new ResponseMemory() {
        @Override
        public boolean take(long bytes) {
            return true;
        }

        @Override
        public void give(long bytes) {}
    };

    /**
     * Counts {@code bytes} a planned response now holds (they exist already: they are always counted); answers
     * whether the pod stays within its budget with them.
     */
    boolean take(long bytes);

    /** Gives back bytes taken before. */
    void give(long bytes);
}
