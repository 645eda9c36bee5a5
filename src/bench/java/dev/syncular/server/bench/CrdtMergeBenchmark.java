package dev.syncular.server.bench;

import dev.syncular.server.crdt.yjs.YjsDocMerger;
import java.io.ByteArrayOutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Merge throughput of the built-in {@code yjs-doc} merger (§5.10.2; not part of the test suite). Run with
 * {@code bench/crdt.sh}. Each merge applies the stored state and the incoming update to a fresh document and
 * encodes the state, as the reference merger does.
 *
 * <ul>
 * <li>(a) keystrokes into a growing document, as the server sees a typing client: {@code N} one-character
 * Yjs updates (one struct each, chained by origin) pushed one after another, each merged into the stored
 * state ({@code stored = merge(stored, keystroke)}); the stored state grows with every merge (the typed run
 * stays one item);</li>
 * <li>(b) two large documents: two clients' states of {@code N} keystrokes each, typed concurrently,
 * merged into one;</li>
 * <li>(c) re-delivery: the merged (b) state merged with itself (idempotent replay);</li>
 * <li>(d) a fragmented document: {@code M} keystrokes of one client at seeded random positions, so that most
 * keystrokes stay items of their own, and one more keystroke merged into it (the cost of integrating a
 * document of many items).</li>
 * </ul>
 * The updates are written here byte by byte in the Yjs v1 update format the fixtures test against
 * ({@code src/test/resources/crdt/yjs}). MB/s counts the input bytes of each merge (stored + incoming),
 * 10^6 bytes. System properties: {@code bench.keystrokes} (default 5000), {@code bench.docChars} (default
 * 20000), {@code bench.fragments} (default 5000), {@code bench.iterations} (default 11), {@code bench.warmup}
 * (default 5).
 */
public final class CrdtMergeBenchmark {
    private static final int KEYSTROKES = Integer.getInteger("bench.keystrokes", 5000);
    private static final int DOC_CHARS = Integer.getInteger("bench.docChars", 20_000);
    private static final int FRAGMENTS = Integer.getInteger("bench.fragments", 5000);
    private static final int ITERATIONS = Integer.getInteger("bench.iterations", 11);
    private static final int WARMUP = Integer.getInteger("bench.warmup", 5);
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final YjsDocMerger MERGER = new YjsDocMerger();
    private static long sink;

    private CrdtMergeBenchmark() {}

    public static void main(String[] args) {
        System.out.printf(
                "load average before run: %.2f (%d CPUs); JVM %s%n",
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.vm.version"));
        byte[][] keys = keystrokes(1001, KEYSTROKES);
        byte[] docA = fold(keystrokes(1001, DOC_CHARS));
        byte[] docB = fold(keystrokes(2002, DOC_CHARS));
        byte[] merged = MERGER.merge(docA, docB);
        System.out.printf(
                "inputs: %d keystroke updates of %d-%d bytes; (a) final state %,d bytes; (b) docs of %,d chars: "
                        + "%,d + %,d bytes -> %,d bytes%n",
                KEYSTROKES,
                keys[0].length,
                keys[KEYSTROKES - 1].length,
                fold(keys).length,
                DOC_CHARS,
                docA.length,
                docB.length,
                merged.length);

        measure("(a) keystrokes into a growing doc", KEYSTROKES, () -> {
            byte[] stored = null;
            long bytes = 0;
            for (byte[] k : keys) {
                bytes += (stored == null ? 0 : stored.length) + k.length;
                stored = MERGER.merge(stored, k);
            }
            sink += stored.length;
            return bytes;
        });
        int reps = 10;
        measure("(b) two large docs merged", reps, () -> {
            long bytes = 0;
            for (int i = 0; i < reps; i++) {
                sink += MERGER.merge(docA, docB).length;
                bytes += docA.length + docB.length;
            }
            return bytes;
        });
        measure("(c) merged doc re-delivered into itself", reps, () -> {
            long bytes = 0;
            for (int i = 0; i < reps; i++) {
                byte[] again = MERGER.merge(merged, merged);
                if (!Arrays.equals(again, merged)) {
                    throw new IllegalStateException("re-delivery changed the state");
                }
                bytes += 2L * merged.length;
            }
            return bytes;
        });
        byte[][] scattered = scatteredKeystrokes(3003, FRAGMENTS + 1, 42);
        byte[] fragmented = fold(Arrays.copyOf(scattered, FRAGMENTS));
        byte[] last = scattered[FRAGMENTS];
        System.out.printf(
                "(d) fragmented doc: %,d keystrokes at random positions, %,d bytes%n", FRAGMENTS, fragmented.length);
        measure("(d) keystroke into a fragmented doc", reps, () -> {
            long bytes = 0;
            for (int i = 0; i < reps; i++) {
                sink += MERGER.merge(fragmented, last).length;
                bytes += fragmented.length + last.length;
            }
            return bytes;
        });
        System.out.println("sink " + (sink & 1));
    }

    @FunctionalInterface
    private interface Work {
        /** Runs the merges; returns the input bytes they read. */
        long run();
    }

    private static void measure(String name, int merges, Work work) {
        for (int i = 0; i < WARMUP; i++) {
            work.run();
        }
        double[] wall = new double[ITERATIONS];
        double[] cpu = new double[ITERATIONS];
        long bytes = 0;
        for (int i = 0; i < ITERATIONS; i++) {
            long c0 = THREADS.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            bytes = work.run();
            wall[i] = (System.nanoTime() - t0) / 1e9;
            cpu[i] = (THREADS.getCurrentThreadCpuTime() - c0) / 1e9;
        }
        Arrays.sort(wall);
        Arrays.sort(cpu);
        double median = wall[ITERATIONS / 2];
        System.out.printf(
                "%-42s merges/s median %,12.0f  best %,12.0f  MB/s median %8.1f  merges/s (thread CPU) %,12.0f%n",
                name, merges / median, merges / wall[0], bytes / median / 1e6, merges / cpu[ITERATIONS / 2]);
    }

    private static byte[] fold(byte[][] updates) {
        byte[] stored = null;
        for (byte[] u : updates) {
            stored = MERGER.merge(stored, u);
        }
        return stored;
    }

    /**
     * {@code n} single-character updates of one client typing at the end of its own text in root text
     * {@code "t"}: the first has no origin and names its parent, each later one has the previous character
     * as origin. Each is {@code groups=1, structs=1, client, clock, struct, deleteSet=0}.
     */
    static byte[][] keystrokes(long client, int n) {
        byte[][] out = new byte[n][];
        for (int clock = 0; clock < n; clock++) {
            ByteArrayOutputStream b = new ByteArrayOutputStream(24);
            varUint(b, 1);
            varUint(b, 1);
            varUint(b, client);
            varUint(b, clock);
            byte[] ch = {(byte) ('a' + clock % 26)};
            if (clock == 0) {
                b.write(0x04); // string content, no origins: the parent follows
                varUint(b, 1); // parent is a root type, by name
                varString(b, "t");
            } else {
                b.write(0x84); // string content with an origin
                varUint(b, client);
                varUint(b, clock - 1);
            }
            varString(b, new String(ch, StandardCharsets.UTF_8));
            varUint(b, 0); // empty delete set
            out[clock] = b.toByteArray();
        }
        return out;
    }

    /**
     * {@code n} single-character updates of one client typing at seeded random positions of root text
     * {@code "t"}: each names the characters left and right of where it goes as origin and right origin.
     */
    static byte[][] scatteredKeystrokes(long client, int n, long seed) {
        Random random = new Random(seed);
        List<Long> order = new ArrayList<>(n); // clocks in document order
        byte[][] out = new byte[n][];
        for (int clock = 0; clock < n; clock++) {
            int at = random.nextInt(order.size() + 1);
            Long left = at > 0 ? order.get(at - 1) : null;
            Long right = at < order.size() ? order.get(at) : null;
            ByteArrayOutputStream b = new ByteArrayOutputStream(32);
            varUint(b, 1);
            varUint(b, 1);
            varUint(b, client);
            varUint(b, clock);
            b.write(0x04 | (left != null ? 0x80 : 0) | (right != null ? 0x40 : 0));
            if (left != null) {
                varUint(b, client);
                varUint(b, left);
            }
            if (right != null) {
                varUint(b, client);
                varUint(b, right);
            }
            if (left == null && right == null) {
                varUint(b, 1);
                varString(b, "t");
            }
            varString(b, String.valueOf((char) ('a' + clock % 26)));
            varUint(b, 0);
            out[clock] = b.toByteArray();
            order.add(at, (long) clock);
        }
        return out;
    }

    private static void varUint(ByteArrayOutputStream b, long n) {
        while (n > 0x7f) {
            b.write((int) (0x80 | (n & 0x7f)));
            n >>>= 7;
        }
        b.write((int) n);
    }

    private static void varString(ByteArrayOutputStream b, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        varUint(b, bytes.length);
        b.write(bytes, 0, bytes.length);
    }
}
