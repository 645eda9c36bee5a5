package dev.syncular.server.testsupport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/** Runs tasks at once: each on a thread of its own, all released together by one latch. */
public final class Concurrently {
    /** How long the tasks may take together. */
    public static final Duration WAIT = Duration.ofSeconds(60);

    private Concurrently() {}

    /** Runs {@code n} tasks at once (task {@code k} gets {@code k}) and yields their results in task order. */
    public static <T> List<T> run(int n, IntFunction<T> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int k = i;
                futures.add(pool.submit(() -> {
                    start.await();
                    return task.apply(k);
                }));
            }
            start.countDown();
            List<T> out = new ArrayList<>();
            for (Future<T> f : futures) {
                out.add(f.get(WAIT.toSeconds(), TimeUnit.SECONDS));
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }
}
