package dev.syncular.server.boot;

import dev.syncular.server.config.SyncularConfig;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The pod's executors for blocking work of its own kind (issue 44, hole 5), beside Quarkus's worker pool: the
 * synchronous S3 client's calls for segments and blobs run on {@link #s3()}, {@code syncular.s3.threads} threads
 * named {@code syncular-s3-N}. An S3 that is slow, unreachable or retrying (the SDK sleeps between retries on the
 * calling thread) thus holds these threads and queues S3 work behind them, while pushes, CRDT merges and page
 * encoding keep the worker pool; §5.3 SQLite image builds run on {@link #images()}, {@code
 * syncular.segments.image-build-threads} threads named {@code syncular-image-N}. Stopped when the application stops.
 */
@Singleton
public class BlockingPools {
    private final ExecutorService s3;
    private final ExecutorService images;

    @Inject
    public BlockingPools(SyncularConfig config) {
        this.s3 = Executors.newFixedThreadPool(Math.max(1, config.s3().threads()), named("syncular-s3-"));
        this.images = Executors.newFixedThreadPool(
                Math.max(1, config.segments().imageBuildThreads()), named("syncular-image-"));
    }

    /** §5.3 SQLite image builds. */
    public Executor images() {
        return images;
    }

    /** The S3 client's calls. */
    public Executor s3() {
        return s3;
    }

    @PreDestroy
    void stop() {
        s3.shutdownNow();
        images.shutdownNow();
    }

    private static ThreadFactory named(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
