package dev.syncular.server.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.testsupport.MappedConfig;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The S3 pool is the S3 client's own (issue 44, hole 5): with every one of its threads held by a stuck call (an S3
 * that does not answer), further S3 calls wait in its queue while work on the worker pool — pushes, CRDT merges,
 * page encoding — runs at once; the stuck calls' threads are named {@code syncular-s3-N}.
 */
class BlockingPoolsTest {
    @Test
    void aStuckS3HoldsItsOwnThreadsOnly() throws Exception {
        BlockingPools pools = new BlockingPools(MappedConfig.mapping(Map.of("syncular.s3.threads", "2")));
        CountDownLatch s3Answers = new CountDownLatch(1);
        CountDownLatch stuck = new CountDownLatch(2);
        CompletableFuture<String> names = new CompletableFuture<>();
        try {
            for (int i = 0; i < 2; i++) {
                pools.s3().execute(() -> {
                    names.complete(Thread.currentThread().getName());
                    stuck.countDown();
                    try {
                        s3Answers.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
            }
            assertTrue(stuck.await(10, TimeUnit.SECONDS), "both S3 threads are stuck");
            assertTrue(names.get().startsWith("syncular-s3-"), names.get());
            CompletableFuture<Void> queued = CompletableFuture.runAsync(() -> {}, pools.s3());
            CompletableFuture<Void> push = CompletableFuture.runAsync(() -> {}, Infrastructure.getDefaultWorkerPool());
            push.get(10, TimeUnit.SECONDS); // the worker pool is not held by the stuck S3
            assertFalse(queued.isDone(), "the next S3 call waits for an S3 thread");
            s3Answers.countDown();
            queued.get(10, TimeUnit.SECONDS);
            assertEquals(0, stuck.getCount());
        } finally {
            s3Answers.countDown();
            pools.stop();
        }
    }
}
