package dev.syncular.server.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.segments.SegmentsConfig;
import dev.syncular.server.testsupport.MappedConfig;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The image pool is the §5.3 SQLite image builds' own (issue 44, hole 5): with every one of its threads held by a
 * long build, further builds wait in its queue while work on the worker pool — pushes, CRDT merges, page encoding
 * — runs at once; the builds' threads are named {@code syncular-image-N}. (S3 has no pool: the stores' calls hold
 * no thread, {@code S3StuckCallsTest}.)
 */
class BlockingPoolsTest {
    @Test
    void longImageBuildsHoldTheirOwnThreadsOnly() throws Exception {
        BlockingPools pools = new BlockingPools(
                MappedConfig.mapping(SegmentsConfig.class, Map.of("syncular.segments.image-build-threads", "2")));
        CountDownLatch buildsEnd = new CountDownLatch(1);
        CountDownLatch stuck = new CountDownLatch(2);
        CompletableFuture<String> names = new CompletableFuture<>();
        try {
            for (int i = 0; i < 2; i++) {
                pools.images().execute(() -> {
                    names.complete(Thread.currentThread().getName());
                    stuck.countDown();
                    try {
                        buildsEnd.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
            }
            assertTrue(stuck.await(10, TimeUnit.SECONDS), "both image threads are busy");
            assertTrue(names.get().startsWith("syncular-image-"), names.get());
            CompletableFuture<Void> queued = CompletableFuture.runAsync(() -> {}, pools.images());
            CompletableFuture<Void> push = CompletableFuture.runAsync(() -> {}, Infrastructure.getDefaultWorkerPool());
            push.get(10, TimeUnit.SECONDS); // the worker pool is not held by the builds
            assertFalse(queued.isDone(), "the next build waits for an image thread");
            buildsEnd.countDown();
            queued.get(10, TimeUnit.SECONDS);
            assertEquals(0, stuck.getCount());
        } finally {
            buildsEnd.countDown();
            pools.stop();
        }
    }
}
