package dev.syncular.server.bench;

import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.segments.SqliteImageBuilder;
import dev.syncular.server.storage.StoredRow;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * §5.3 SQLite image build benchmark (not part of the test suite). Run with {@code bench/sqlite.sh}.
 *
 * <p>Builds 100,000- and 1,000,000-row images of a 6-column table (text id primary key, text list_id, text
 * title, integer position, boolean done, float score) through {@link SqliteImageBuilder}, fed by synthetic
 * keyset-ordered batches of 1,000 {@link StoredRow}s generated on the fly (the whole table is never held).
 * Reports build time (wall clock, row generation included; median and best), the building thread's CPU time
 * (robust when other processes share the CPUs; SQLite runs on that thread through JNI), rows/s, file size, and the heap during each
 * build: the peak of heap used sampled every 5 ms by a scheduled executor, and the peak live heap after a
 * collection ({@link MemoryPoolMXBean#getCollectionUsage()}). {@code bench/sqlite.sh} runs it with
 * {@code -Xmx256m} so a build that held the table would fail with an {@code OutOfMemoryError}.
 *
 * <p>System properties: {@code bench.sizes} (comma-separated row counts, default {@code 100000,1000000}),
 * {@code bench.warmup} (warm-up builds of the smallest size, default 2), {@code bench.iterations}
 * (measured builds per size, default 3), {@code bench.dir} (where images are written, default the
 * system temp directory; each image is deleted after measuring).
 */
public final class SqliteImageBenchmark {
    private static final int BATCH = 1_000;
    private static final int WARMUP = Integer.getInteger("bench.warmup", 2);
    private static final int ITERATIONS = Integer.getInteger("bench.iterations", 3);

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private static final String SCHEMA = """
            {"version": 1, "tables": [{"name": "items", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
              {"name": "id", "type": "string", "nullable": false},
              {"name": "list_id", "type": "string", "nullable": false},
              {"name": "title", "type": "string", "nullable": true},
              {"name": "position", "type": "integer", "nullable": false},
              {"name": "done", "type": "boolean", "nullable": false},
              {"name": "score", "type": "float", "nullable": true}]}]}
            """;

    private static final long[] NO_COLUMN_VERSIONS = new long[0];
    private static final String[] LISTS = new String[100];

    static {
        for (int i = 0; i < LISTS.length; i++) {
            LISTS[i] = "list-" + i;
        }
    }

    private SqliteImageBenchmark() {}

    private record Run(
            double seconds, double cpuSeconds, long rows, long bytes, long peakHeapUsed, long peakHeapAfterGc) {}

    public static void main(String[] args) throws Exception {
        TableSchema table = SchemaLoader.parse(SCHEMA).table("items");
        int[] sizes = Arrays.stream(
                        System.getProperty("bench.sizes", "100000,1000000").split(","))
                .map(String::trim)
                .mapToInt(Integer::parseInt)
                .toArray();
        Path dir = Path.of(System.getProperty("bench.dir", System.getProperty("java.io.tmpdir")));
        Runtime rt = Runtime.getRuntime();
        System.out.printf(
                Locale.ROOT,
                "load average before run: %.2f (%d CPUs); JVM %s; max heap %s; batches of %,d rows%n",
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                rt.availableProcessors(),
                System.getProperty("java.version"),
                mb(rt.maxMemory()),
                BATCH);

        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "heap-sampler");
            t.setDaemon(true);
            return t;
        });
        try {
            int smallest = Arrays.stream(sizes).min().orElse(100_000);
            for (int i = 0; i < WARMUP; i++) {
                build(table, dir, smallest, sampler);
            }
            System.out.printf(
                    Locale.ROOT,
                    "%-12s %10s %10s %12s %14s %10s %8s %16s %18s%n",
                    "rows",
                    "median s",
                    "best s",
                    "median cpu s",
                    "rows/s (best)",
                    "file MB",
                    "B/row",
                    "peak heap used",
                    "peak heap post-GC");
            for (int size : sizes) {
                List<Run> runs = new ArrayList<>();
                for (int i = 0; i < ITERATIONS; i++) {
                    runs.add(build(table, dir, size, sampler));
                }
                runs.sort((a, b) -> Double.compare(a.seconds, b.seconds));
                Run best = runs.get(0);
                Run median = runs.get(runs.size() / 2);
                double[] cpu =
                        runs.stream().mapToDouble(Run::cpuSeconds).sorted().toArray();
                long peakUsed = runs.stream().mapToLong(Run::peakHeapUsed).max().orElse(0);
                long peakAfterGc =
                        runs.stream().mapToLong(Run::peakHeapAfterGc).max().orElse(0);
                System.out.printf(
                        Locale.ROOT,
                        "%,-12d %10.3f %10.3f %12.3f %,14.0f %10.1f %8.1f %16s %18s%n",
                        size,
                        median.seconds,
                        best.seconds,
                        cpu[cpu.length / 2],
                        best.rows / best.seconds,
                        best.bytes / 1e6,
                        (double) best.bytes / best.rows,
                        mb(peakUsed),
                        mb(peakAfterGc));
            }
        } finally {
            sampler.shutdownNow();
        }
        System.out.printf(Locale.ROOT, "process peak RSS (VmHWM, includes SQLite's native page cache): %s%n", vmHwm());
        System.out.printf(
                Locale.ROOT,
                "load average after run: %.2f (warm-up %d, measured %d per size)%n",
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                WARMUP,
                ITERATIONS);
    }

    private static Run build(TableSchema table, Path dir, int rows, ScheduledExecutorService sampler) throws Exception {
        Path target = Files.createTempFile(dir, "bench-image-", ".sqlite");
        List<MemoryPoolMXBean> heapPools = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP)
                .toList();
        System.gc();
        AtomicLong peakUsed = new AtomicLong();
        AtomicLong peakAfterGc = new AtomicLong();
        for (MemoryPoolMXBean p : heapPools) {
            p.resetPeakUsage();
        }
        Runnable sample = () -> {
            long used = 0;
            long afterGc = 0;
            for (MemoryPoolMXBean p : heapPools) {
                used += p.getUsage().getUsed();
                if (p.getCollectionUsage() != null) {
                    afterGc += p.getCollectionUsage().getUsed();
                }
            }
            peakUsed.accumulateAndGet(used, Math::max);
            peakAfterGc.accumulateAndGet(afterGc, Math::max);
        };
        ScheduledFuture<?> task = sampler.scheduleAtFixedRate(sample, 0, 5, TimeUnit.MILLISECONDS);
        try {
            long cpu0 = THREADS.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            SqliteImageBuilder.Result result =
                    SqliteImageBuilder.build(target, table, 1, 1_000_000L, "digest", new Source(rows));
            double seconds = (System.nanoTime() - t0) / 1e9;
            double cpuSeconds = (THREADS.getCurrentThreadCpuTime() - cpu0) / 1e9;
            task.cancel(false);
            sample.run();
            if (result.rowCount() != rows) {
                throw new IllegalStateException("built " + result.rowCount() + " rows, expected " + rows);
            }
            return new Run(
                    seconds, cpuSeconds, result.rowCount(), result.byteLength(), peakUsed.get(), peakAfterGc.get());
        } finally {
            task.cancel(false);
            Files.deleteIfExists(target);
        }
    }

    /** Synthetic keyset-ordered rows, generated one batch at a time. */
    private static final class Source implements SqliteImageBuilder.RowBatches {
        private final int total;
        private int next;

        Source(int total) {
            this.total = total;
        }

        @Override
        public List<StoredRow> next() {
            int end = Math.min(total, next + BATCH);
            List<StoredRow> batch = new ArrayList<>(end - next);
            for (; next < end; next++) {
                int i = next;
                String id = id(i);
                Object[] values = {
                    id,
                    LISTS[i % LISTS.length],
                    i % 10 == 0 ? null : "Title of item " + i,
                    (long) i,
                    i % 3 == 0,
                    i % 7 == 0 ? null : i * 0.25,
                };
                batch.add(new StoredRow(id, 1 + (i % 5), values, NO_COLUMN_VERSIONS, Map.of()));
            }
            return batch;
        }

        /** {@code item-00000042}: zero-padded so string order equals numeric (keyset) order. */
        private static String id(int i) {
            char[] c = {'i', 't', 'e', 'm', '-', '0', '0', '0', '0', '0', '0', '0', '0'};
            for (int p = c.length - 1; i > 0; p--, i /= 10) {
                c[p] = (char) ('0' + i % 10);
            }
            return new String(c);
        }
    }

    private static String mb(long bytes) {
        return String.format(Locale.ROOT, "%.1f MB", bytes / (1024.0 * 1024.0));
    }

    private static String vmHwm() throws IOException {
        Path status = Path.of("/proc/self/status");
        if (!Files.isReadable(status)) {
            return "n/a";
        }
        for (String line : Files.readAllLines(status)) {
            if (line.startsWith("VmHWM:")) {
                return line.substring("VmHWM:".length()).trim();
            }
        }
        return "n/a";
    }
}
