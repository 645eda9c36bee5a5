package dev.syncular.server.boot;

import dev.syncular.server.segments.SegmentsConfig;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The pod's executor for blocking work of its own kind (issue 44, hole 5), beside Quarkus's worker pool: §5.3 SQLite
 * image builds run on {@link #images()}, {@code syncular.segments.image-build-threads} threads named {@code
 * syncular-image-N}, so a burst of builds never takes the threads pushes, CRDT merges and page encoding run on.
 * S3 needs no pool: the segment and blob stores call the asynchronous S3 client, which holds no thread while S3 is
 * slow, unreachable or retrying (its calls in flight are bounded by {@code quarkus.s3.async-client.max-concurrency}).
 * Stopped when the application stops.
 */
@Singleton
public class BlockingPools {
    private final ExecutorService images;

    @Inject
    public BlockingPools(SegmentsConfig config) {
        this.images = Executors.newFixedThreadPool(Math.max(1, config.imageBuildThreads()), named("syncular-image-"));
    }

    /** §5.3 SQLite image builds. */
    public Executor images() {
        return images;
    }

    @PreDestroy
    void stop() {
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
