package dev.syncular.server.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.wire.Op;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The bounds of {@link RecentCommits}: a run holds consecutive sequences of one epoch only, at most
 * {@link RecentCommits#MAX_COMMITS_PER_PARTITION}, within its byte budget, the partition pushed least recently
 * dropped first. (That a held window equals the log's is proved against PostgreSQL in
 * {@code PostgresSyncStorageTest}.)
 */
class RecentCommitsTest {
    private static final Map<String, Set<String>> P1 = Map.of("project_id", Set.of("P1"));

    private static StoredCommit commit(long seq) {
        return new StoredCommit(
                seq,
                1_000L,
                "a",
                "c",
                "cc-" + seq,
                List.of(new StoredChange(
                        "tasks", "r" + seq, Op.UPSERT, 1L, Map.of("project_id", "P1"), new Object[] {"r" + seq, "P1"})),
                StoredCommit.UNTRACED);
    }

    private static CommitQuery window(long after, long upTo) {
        return new CommitQuery("tasks", P1, after, upTo, 1000);
    }

    @Test
    void answersOnlyWindowsTheRunHoldsWhole() {
        RecentCommits recent = new RecentCommits(1 << 20);
        for (long s = 5; s <= 9; s++) {
            recent.offer("p", "e1", commit(s));
        }
        assertEquals(
                5,
                recent.window("p", "e1", window(4, 9)).orElseThrow().commits().size());
        assertEquals(
                List.of(7L, 8L),
                recent.window("p", "e1", window(6, 8)).orElseThrow().commits().stream()
                        .map(StoredCommit::commitSeq)
                        .toList());
        assertTrue(recent.window("p", "e1", window(3, 9)).isEmpty(), "seq 4 is not held");
        assertTrue(recent.window("p", "e1", window(4, 10)).isEmpty(), "seq 10 is not held");
        assertTrue(recent.window("p", "e2", window(4, 9)).isEmpty(), "another epoch");
        assertTrue(recent.window("q", "e1", window(4, 9)).isEmpty(), "another partition");
        assertEquals(2, recent.hits());
        assertEquals(4, recent.misses());
        // §8.2: one commit, whole, of the run's epoch only
        assertEquals("cc-7", recent.commit("p", "e1", 7).orElseThrow().join().clientCommitId());
        assertTrue(recent.commit("p", "e2", 7).isEmpty());
        assertTrue(recent.commit("p", "e1", 4).isEmpty());
        assertTrue(recent.commit("p", "e1", 10).isEmpty());
        assertEquals(1, recent.commitHits());
        assertEquals(3, recent.commitMisses());
        // an empty window needs nothing held (§4.5: the cursor stays)
        assertEquals(9, recent.window("q", "e1", window(9, 9)).orElseThrow().scannedThroughSeq());
    }

    @Test
    void aGapAnEpochOrAnOlderSequenceStartsTheRunAnew() {
        RecentCommits recent = new RecentCommits(1 << 20);
        recent.offer("p", "e1", commit(1));
        recent.offer("p", "e1", commit(2));
        recent.offer("p", "e1", commit(4)); // 3 came from another pod
        assertTrue(recent.window("p", "e1", window(1, 4)).isEmpty());
        assertEquals(
                1,
                recent.window("p", "e1", window(3, 4)).orElseThrow().commits().size());
        recent.offer("p", "e2", commit(5)); // rotated epoch (§2.1)
        assertTrue(recent.window("p", "e1", window(4, 5)).isEmpty());
        assertTrue(recent.window("p", "e2", window(4, 5)).isPresent());
        recent.offer("p", "e2", commit(2)); // a restored log below the run
        assertTrue(recent.window("p", "e2", window(4, 5)).isEmpty());
        assertTrue(recent.window("p", "e2", window(1, 2)).isPresent());
    }

    @Test
    void boundedPerPartitionAndInBytesLeastRecentPartitionFirst() {
        RecentCommits counted = new RecentCommits(1L << 30);
        for (long s = 1; s <= RecentCommits.MAX_COMMITS_PER_PARTITION + 10; s++) {
            counted.offer("p", "e", commit(s));
        }
        assertTrue(counted.window("p", "e", window(9, 11)).isEmpty(), "the oldest commits were dropped");
        assertTrue(counted.window("p", "e", window(10, RecentCommits.MAX_COMMITS_PER_PARTITION + 10))
                .isPresent());

        long one = RecentCommits.estimate(commit(1));
        RecentCommits budget = new RecentCommits(10 * one);
        for (long s = 1; s <= 4; s++) {
            budget.offer("a", "e", commit(s));
            budget.offer("b", "e", commit(s));
        }
        assertTrue(budget.bytes() <= 10 * one);
        budget.window("a", "e", window(0, 4)); // touches a: b is now the least recent
        budget.offer("c", "e", commit(1));
        budget.offer("c", "e", commit(2));
        budget.offer("c", "e", commit(3));
        assertTrue(budget.bytes() <= 10 * one);
        assertTrue(budget.window("b", "e", window(0, 1)).isEmpty(), "b was dropped whole");
        assertTrue(budget.window("a", "e", window(0, 4)).isPresent(), "a was kept");
        assertTrue(budget.window("c", "e", window(0, 3)).isPresent());

        RecentCommits tiny = new RecentCommits(one);
        tiny.offer("a", "e", commit(1));
        tiny.offer("a", "e", commit(2));
        assertTrue(tiny.window("a", "e", window(1, 2)).isPresent(), "within its budget, a run keeps its newest");
        assertTrue(tiny.window("a", "e", window(0, 2)).isEmpty());
    }

    /**
     * A group written and not yet committed answers no window; the fan-out's read of one of its commits waits for
     * the COMMIT's answer (its NOTIFY may come first) and gets the commit, or {@code null} when the group failed.
     */
    @Test
    void aPendingGroupAnswersTheFanOutOnlyOnceItsCommitAnswered() {
        RecentCommits recent = new RecentCommits(1 << 20);
        recent.offer("p", "e", commit(1));
        RecentCommits.Pending group = recent.prepare("p", "e", List.of(commit(2), commit(3)));
        assertTrue(recent.window("p", "e", window(1, 3)).isEmpty(), "not committed: no window");
        var waiting = recent.commit("p", "e", 3).orElseThrow();
        assertFalse(waiting.isDone());
        assertTrue(recent.commit("p", "other", 3).isEmpty());
        group.committed();
        assertEquals(3L, waiting.join().commitSeq());
        assertEquals(
                2, recent.window("p", "e", window(1, 3)).orElseThrow().commits().size());

        RecentCommits.Pending failed = recent.prepare("p", "e", List.of(commit(4)));
        var lost = recent.commit("p", "e", 4).orElseThrow();
        failed.abandoned();
        assertEquals(null, lost.join(), "a failed group's sequence is another writer's: read the log");
        assertTrue(recent.commit("p", "e", 4).isEmpty());
        assertTrue(recent.window("p", "e", window(3, 4)).isEmpty());
        RecentCommits.Pending.NONE.committed(); // the off value ignores its outcome
    }

    @Test
    void offHoldsNothing() {
        assertFalse(RecentCommits.OFF.enabled());
        RecentCommits.OFF.offer("p", "e", commit(1));
        assertTrue(RecentCommits.OFF.window("p", "e", window(0, 1)).isEmpty());
        assertEquals(0, RecentCommits.OFF.bytes());
        assertThrows(IllegalArgumentException.class, () -> new RecentCommits(-1));
    }
}
