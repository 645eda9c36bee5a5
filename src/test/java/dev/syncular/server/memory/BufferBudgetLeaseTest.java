package dev.syncular.server.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.config.LimitsConfig;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.testsupport.MappedConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The pod's buffer budget in bytes ({@code syncular.limits.buffer-budget}), without an app: leases grow and shrink
 * under it, a request that does not fit is refused {@code sync.rate_limited} with its reason and wait (§10.2), and
 * what a lease held comes back when it is released, also when two threads grow it at once (a gzip body's raw and
 * inflated bytes). The budget on a running pod, through real requests: {@code BufferBudgetTest}.
 */
class BufferBudgetLeaseTest {

    static BufferBudget budget(String bytes) {
        LimitsConfig limits = MappedConfig.mapping(LimitsConfig.class, Map.of("syncular.limits.buffer-budget", bytes));
        return new BufferBudget(limits, new SimpleMeterRegistry());
    }

    @Test
    void leasesCountTheirBytesAndGiveThemBack() {
        BufferBudget b = budget("1K");
        assertEquals(1024, b.limit());
        BufferBudget.Lease lease = b.open(-1);
        lease.grow(600);
        lease.shrink(100);
        assertEquals(500, b.inUse());
        assertEquals(500, lease.held());
        lease.shrink(10_000); // at most what it holds
        assertEquals(0, b.inUse());
        lease.grow(300);
        lease.release();
        lease.release(); // idempotent
        lease.grow(300); // after its release a lease counts nothing
        assertEquals(0, b.inUse());
    }

    @Test
    void whatDoesNotFitIsRefusedRateLimitedWithItsReason() {
        BufferBudget b = budget("1K");
        SyncError declared = assertThrows(SyncError.class, () -> b.open(2048));
        assertEquals(ErrorCode.RATE_LIMITED, declared.code());
        assertEquals("memory_budget", declared.details().get("reason"));
        assertEquals(BufferBudget.RETRY_AFTER_MS, declared.details().get("retryAfterMs"));
        BufferBudget.Lease lease = b.open(512);
        lease.grow(1000);
        assertThrows(SyncError.class, () -> lease.grow(100), "a growth over the budget holds nothing more");
        assertEquals(1000, b.inUse());
        assertThrows(SyncError.class, () -> b.open(100), "24 bytes left: a declared 100 does not fit");
        b.open(-1).release(); // an undeclared length is admitted while anything is left, and counted as it arrives
        lease.grow(24);
        assertThrows(SyncError.class, () -> b.open(-1), "nothing left: a new request waits");
        lease.release();
        b.open(-1).release();
    }

    @Test
    void heldAndUnmeteredBytes() {
        BufferBudget b = budget("1K");
        BufferBudget.Lease response = b.hold(4096); // a planned response is counted whatever is left
        assertEquals(4096, b.inUse());
        assertFalse(b.take(1), "the pod is over its budget");
        b.give(1);
        response.release();
        assertEquals(0, b.inUse());
        BufferBudget.Lease spooled = b.unmetered();
        spooled.grow(1 << 20);
        assertEquals(0, b.inUse());
        assertTrue(b.take(1024));
        b.give(1024);
        assertEquals(48L << 20, BufferBudget.defaultLimit(192L << 20), "a quarter of the chart's heap");
    }

    @Test
    void twoThreadsGrowingOneLeaseNeverPassTheBudget() throws Exception {
        for (int run = 0; run < 200; run++) {
            BufferBudget b = budget("64K");
            BufferBudget.Lease lease = b.open(-1);
            AtomicInteger refused = new AtomicInteger();
            CountDownLatch start = new CountDownLatch(1);
            Runnable grower = () -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                for (int i = 0; i < 100; i++) {
                    try {
                        lease.grow(512);
                    } catch (SyncError e) {
                        refused.incrementAndGet();
                    }
                }
            };
            Thread raw = new Thread(grower);
            Thread inflated = new Thread(grower);
            raw.start();
            inflated.start();
            start.countDown();
            raw.join();
            inflated.join();
            assertEquals(b.inUse(), lease.held());
            assertTrue(b.inUse() <= b.limit(), "in use " + b.inUse());
            assertEquals(200, refused.get() + lease.held() / 512, "every growth counted or refused");
            lease.release();
            assertEquals(0, b.inUse());
        }
    }
}
