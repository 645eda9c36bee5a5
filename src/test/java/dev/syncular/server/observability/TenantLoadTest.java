package dev.syncular.server.observability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.TenantLoadRow;
import dev.syncular.server.storage.postgres.PostgresStores;
import dev.syncular.server.sync.RoundAdmission;
import dev.syncular.server.sync.SyncObserver;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The per-pod accumulator of the loudest tenants on its own clock: the four figures per partition, the sliding
 * minute, the bound on partitions per bucket (the quietest evicted, a loud one kept) and the top N per figure.
 */
class TenantLoadTest {
    private final AtomicLong now = new AtomicLong(1_000_000);
    private final TenantLoad load = new TenantLoad(now::get, PostgresStores::busy);

    private static SyncObserver.Commit applied(String partition, long bytes) {
        return new SyncObserver.Commit(partition, "c", "cc", SyncObserver.CommitOutcome.APPLIED, null, 1, bytes);
    }

    private Map<String, TenantLoadRow> window() {
        return load.window().stream().collect(Collectors.toMap(TenantLoadRow::partition, r -> r));
    }

    @Test
    void countsTheFourFiguresPerPartition() {
        load.roundEnded("a", "ok", null, 5_000_000);
        load.roundEnded("a", "sync.rate_limited", busy("queue_full"), 1_000_000);
        load.commitPushed(applied("a", 300));
        load.commitPushed(new SyncObserver.Commit(
                "a", "c", "cc2", SyncObserver.CommitOutcome.REJECTED, "sync.forbidden", 1, 999));
        load.fanout("a", 42);
        load.refused("a", RoundAdmission.ACTOR_ROUNDS);
        load.refused("b", RoundAdmission.POD_ROUNDS);
        load.roundEnded(
                "b",
                "sync.rate_limited",
                new SyncError(ErrorCode.RATE_LIMITED, "busy", Map.of("reason", "memory_budget")),
                1);
        load.presenceCoalesced("b");
        load.roundEnded("b", "sync.forbidden", new SyncError(ErrorCode.FORBIDDEN, "no", Map.of()), 7);

        Map<String, TenantLoadRow> w = window();
        TenantLoadRow a = w.get("a");
        assertEquals(6_000_000, a.databaseNanos());
        assertEquals(300, a.committedBytes(), "only applied commits count");
        assertEquals(42, a.fanoutBytes());
        assertEquals(Map.of("queue_full", 1L, "actor_rounds", 1L), a.refusals());
        TenantLoadRow b = w.get("b");
        assertEquals(
                Map.of("pod_rounds", 1L, "other", 1L, "presence_coalesced", 1L),
                b.refusals(),
                "a reason outside the closed set is other; a failure that is no refusal counts none");
        assertEquals(8, b.databaseNanos());
    }

    @Test
    void theWindowIsTheLastMinute() {
        load.commitPushed(applied("old", 100));
        now.addAndGet(TenantLoad.BUCKET_MS * 3);
        load.commitPushed(applied("old", 10));
        load.commitPushed(applied("new", 5));
        assertEquals(110, window().get("old").committedBytes());
        now.addAndGet(TenantLoad.BUCKET_MS * 3);
        assertEquals(10, window().get("old").committedBytes(), "the first bucket left the window");
        now.addAndGet(TenantLoad.BUCKET_MS * 3);
        assertEquals(Map.of(), window(), "nothing within the last minute");
    }

    @Test
    void aBucketHoldsABoundedNumberOfPartitionsAndKeepsTheLoudOnes() {
        load.commitPushed(applied("loud", 1_000_000));
        load.fanout("fans", 1_000_000);
        for (int i = 0; i < 10 * TenantLoad.MAX_PARTITIONS; i++) {
            load.roundEnded("quiet-" + i, "ok", null, 1 + i % 7);
        }
        Map<String, TenantLoadRow> w = window();
        assertTrue(w.size() <= TenantLoad.MAX_PARTITIONS + TenantLoad.SLACK, "held " + w.size());
        assertTrue(w.containsKey("loud"), "the loudest by committed bytes is never evicted");
        assertTrue(w.containsKey("fans"), "the loudest by fan-out bytes is never evicted");
    }

    @Test
    void topNamesTheLoudestOfEachFigure() {
        for (int i = 0; i < 30; i++) {
            load.roundEnded("db-" + i, "ok", null, 1000L * (i + 1));
            load.commitPushed(applied("bytes-" + i, 10L * (i + 1)));
        }
        load.refused("refused", RoundAdmission.PARTITION_ROUNDS);
        List<TenantLoadRow> top = load.top(3);
        List<String> names = top.stream().map(TenantLoadRow::partition).toList();
        assertEquals(
                List.of("db-29", "db-28", "db-27", "bytes-27", "bytes-28", "bytes-29", "refused"),
                names,
                "the top 3 of each figure, once each, by database time then id");
        List<TenantLoadRow> byBytes = TenantLoad.ranked(top, TenantLoadRow::committedBytes, 3);
        assertEquals(
                List.of("bytes-29", "bytes-28", "bytes-27"),
                byBytes.stream().map(TenantLoadRow::partition).toList());
    }

    private static StorageException busy(String reason) {
        return new StorageException(StorageException.BUSY, "busy", Map.of("reason", reason));
    }
}
