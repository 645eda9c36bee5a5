package dev.syncular.server.bench;

import dev.syncular.server.round.ContentCoding;
import dev.syncular.server.round.ResponseBody;
import dev.syncular.server.wire.Change;
import dev.syncular.server.wire.ColumnDef;
import dev.syncular.server.wire.ColumnType;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.FrameType;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.MessageEncoder;
import dev.syncular.server.wire.Op;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.RowCodec;
import dev.syncular.server.wire.RowLayout;
import dev.syncular.server.wire.RowsSegmentReader;
import dev.syncular.server.wire.RowsSegmentWriter;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRow;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionStatus;
import dev.syncular.server.wire.WireReader;
import dev.syncular.server.wire.WireWriter;
import io.vertx.core.buffer.Buffer;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * SSP2 codec micro-benchmark (not part of the test suite). Run with {@code bench/codec.sh}.
 *
 * <ul>
 * <li>(a) a response stream of {@code COMMIT} frames (100 commits × 100 changes = 10,000 changes) over an
 * 8-column notes table, row-codec encode/decode of every change's row included;</li>
 * <li>(b) a 100,000-row SSG2 rows segment through {@link RowsSegmentWriter} / {@link RowsSegmentReader};</li>
 * <li>(c) the streaming {@link MessageDecoder} fed in 64 KiB chunks: the (a) stream (rows decoded too),
 * and the (b) segment carried in a {@code SEGMENT_INLINE} frame.</li>
 * <li>(d) one pull response of 0 to 1,000 changes through the {@code POST /sync} response path
 * ({@link ResponseBody#of}) under identity, gzip and zstd: bytes on the wire and the benchmark thread's CPU per
 * response, so where compression starts to pay can be read off (the threshold in {@link ContentCoding}).</li>
 * </ul>
 * {@code bench.cases} picks the cases (default {@code abcd}).
 * Each case runs warm-up iterations, then measured iterations; median and best wall-clock throughput are
 * reported, plus the median by the benchmark thread's CPU time (robust when other processes share the CPUs;
 * excludes GC threads).
 * System properties: {@code bench.warmup} (default 15 iterations), {@code bench.warmupMs} (minimum warm-up
 * time per case, default 2000), {@code bench.iterations} (default 21).
 */
public final class CodecBenchmark {
    private static final int COMMITS = 100;
    private static final int CHANGES_PER_COMMIT = 100;
    private static final int SEGMENT_ROWS = 100_000;
    private static final int CHUNK = 64 * 1024;
    private static final int WARMUP = Integer.getInteger("bench.warmup", 15);
    private static final int ITERATIONS = Integer.getInteger("bench.iterations", 21);
    private static final long WARMUP_MS = Long.getLong("bench.warmupMs", 2000);

    static final RowLayout NOTES = new RowLayout(
            List.of(
                    new ColumnDef("id", ColumnType.STRING, false),
                    new ColumnDef("title", ColumnType.STRING, true),
                    new ColumnDef("body", ColumnType.STRING, false),
                    new ColumnDef("count", ColumnType.INTEGER, true),
                    new ColumnDef("score", ColumnType.FLOAT, false),
                    new ColumnDef("done", ColumnType.BOOLEAN, false),
                    new ColumnDef("meta", ColumnType.JSON, true),
                    new ColumnDef("blob", ColumnType.BYTES, true)),
            0);
    private static final Map<String, String> SCOPES = Map.of("project", "p1");

    private static long sink; // defeats dead-code elimination
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private CodecBenchmark() {}

    @FunctionalInterface
    private interface Op1 {
        /** One operation; returns the bytes processed (encoded or decoded). */
        long run();
    }

    private record Result(String name, long rows, long bytes, double medianSec, double bestSec, double medianCpuSec) {
        double rowsPerSec(double s) {
            return rows / s;
        }

        double mbPerSec(double s) {
            return bytes / s / 1e6;
        }
    }

    public static void main(String[] args) {
        System.out.printf(
                "load average before run: %.2f (%d CPUs); JVM %s%n",
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.vm.version"));
        Object[][] rows = rows(SEGMENT_ROWS, new Random(42));
        Object[][] changeRows = Arrays.copyOf(rows, COMMITS * CHANGES_PER_COMMIT);
        RowCodec codec = new RowCodec(NOTES);

        // Inputs for the decode paths (built once, outside the timed region).
        byte[] commitStream = encodeCommitStream(codec, changeRows, new WireWriter(2 << 20));
        byte[] segment = encodeSegment(rows, new WireWriter(16 << 20));
        byte[] inlineStream = inlineSegmentMessage(segment);
        System.out.printf(
                "inputs: commit stream %d changes = %,d bytes (%.1f B/change); segment %d rows = %,d bytes"
                        + " (%.1f B/row)%n",
                changeRows.length,
                commitStream.length,
                commitStream.length / (double) changeRows.length,
                SEGMENT_ROWS,
                segment.length,
                segment.length / (double) SEGMENT_ROWS);

        String cases = System.getProperty("bench.cases", "abcd");
        if (cases.contains("d")) {
            responseCodings(codec, changeRows);
        }
        if (!cases.matches(".*[abc].*")) {
            return;
        }
        WireWriter encodeBuf = new WireWriter(2 << 20);
        WireWriter segBuf = new WireWriter(16 << 20);
        List<Result> results = new ArrayList<>();
        results.add(measure("(a) COMMIT stream encode (10k changes, rows via RowCodec)", changeRows.length, () -> {
            encodeBuf.reset();
            encodeCommitStream(codec, changeRows, encodeBuf);
            return encodeBuf.size();
        }));
        results.add(measure("(a) COMMIT stream decode (one-shot + RowCodec)", changeRows.length, () -> {
            List<Frame> frames = decodeStreamed(commitStream, commitStream.length);
            return decodeRows(codec, frames, commitStream.length);
        }));
        results.add(measure("(b) SSG2 segment encode (100k rows, RowsSegmentWriter)", SEGMENT_ROWS, () -> {
            segBuf.reset();
            encodeSegment(rows, segBuf);
            return segBuf.size();
        }));
        results.add(measure("(b) SSG2 segment decode (RowsSegmentReader)", SEGMENT_ROWS, () -> {
            RowsSegmentReader reader = new RowsSegmentReader(new WireReader(segment));
            long n = 0;
            List<SegmentRow> block;
            while ((block = reader.nextBlock()) != null) {
                n += block.size();
                sink += block.get(block.size() - 1).serverVersion();
            }
            check(n == SEGMENT_ROWS);
            return segment.length;
        }));
        results.add(measure("(c) COMMIT stream decode, streaming 64 KiB chunks + RowCodec", changeRows.length, () -> {
            List<Frame> frames = decodeStreamed(commitStream, CHUNK);
            return decodeRows(codec, frames, commitStream.length);
        }));
        results.add(measure("(c) SEGMENT_INLINE 100k rows, streaming 64 KiB chunks", SEGMENT_ROWS, () -> {
            List<Frame> frames = decodeStreamed(inlineStream, CHUNK);
            sink += frames.size();
            return inlineStream.length;
        }));

        System.out.println();
        System.out.printf(
                "%-62s %14s %14s %10s %10s %16s%n",
                "case", "rows/s median", "rows/s best", "MB/s med", "MB/s best", "rows/s (thr CPU)");
        for (Result r : results) {
            System.out.printf(
                    "%-62s %,14.0f %,14.0f %10.1f %10.1f %,16.0f%n",
                    r.name,
                    r.rowsPerSec(r.medianSec),
                    r.rowsPerSec(r.bestSec),
                    r.mbPerSec(r.medianSec),
                    r.mbPerSec(r.bestSec),
                    r.rowsPerSec(r.medianCpuSec));
        }
        System.out.printf(
                "load average after run: %.2f (%d CPUs)%n",
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                Runtime.getRuntime().availableProcessors());
        System.out.println("(sink " + (sink & 0xff) + ", warm-up " + WARMUP + ", measured " + ITERATIONS + ")");
    }

    /** (d): per response size, the wire bytes and CPU of each coding through the response path. */
    private static void responseCodings(RowCodec codec, Object[][] rows) {
        System.out.printf("%n(d) pull responses through ResponseBody: bytes and CPU per response%n");
        System.out.printf(
                "%8s %10s %10s %10s %12s %12s %12s%n",
                "changes", "identity B", "gzip B", "zstd B", "identity us", "gzip us", "zstd us");
        for (int changes : new int[] {0, 1, 2, 4, 8, 16, 64, 256, 1000}) {
            List<Frame> frames = responseFrames(codec, rows, changes);
            long[] bytes = new long[3];
            double[] micros = new double[3];
            ContentCoding[] codings = {ContentCoding.IDENTITY, ContentCoding.GZIP, ContentCoding.ZSTD};
            int reps = Math.max(20, 20_000 / Math.max(1, changes));
            for (int c = 0; c < codings.length; c++) {
                ContentCoding coding = codings[c];
                Op1 one = () -> {
                    long n = 0;
                    for (Buffer b : ResponseBody.of(frames, coding)) {
                        n += b.length();
                    }
                    return n;
                };
                Result r = quietly(() -> {
                    long n = 0;
                    for (int i = 0; i < reps; i++) {
                        n = one.run();
                    }
                    return n;
                });
                bytes[c] = r.bytes();
                micros[c] = r.medianCpuSec() * 1e6 / reps;
            }
            System.out.printf(
                    "%8d %10d %10d %10d %12.1f %12.1f %12.1f%n",
                    changes, bytes[0], bytes[1], bytes[2], micros[0], micros[1], micros[2]);
        }
    }

    /** {@link #measure} without its line: warm-up, then the median of the measured iterations. */
    private static Result quietly(Op1 op) {
        long bytes = 0;
        long warmEnd = System.nanoTime() + 300_000_000L;
        for (int i = 0; i < 5 || System.nanoTime() < warmEnd; i++) {
            bytes = op.run();
        }
        double[] cpu = new double[ITERATIONS];
        for (int i = 0; i < ITERATIONS; i++) {
            long c0 = THREADS.getCurrentThreadCpuTime();
            bytes = op.run();
            cpu[i] = (THREADS.getCurrentThreadCpuTime() - c0) / 1e9;
        }
        Arrays.sort(cpu);
        return new Result("", 0, bytes, 0, 0, cpu[cpu.length / 2]);
    }

    /** A pull response carrying one commit of {@code changes} changes (none: an empty pull). */
    private static List<Frame> responseFrames(RowCodec codec, Object[][] rows, int changes) {
        List<Frame> frames = new ArrayList<>();
        frames.add(new RespHeader(null, null, "epoch-1", false));
        frames.add(new SubStart("sub-notes", SubscriptionStatus.ACTIVE, "ok", Map.of("project", List.of("p1")), false));
        if (changes > 0) {
            WireWriter rowBuf = new WireWriter(256);
            List<Change> list = new ArrayList<>(changes);
            for (int k = 0; k < changes; k++) {
                rowBuf.reset();
                codec.encode(rowBuf, rows[k]);
                list.add(new Change(
                        0,
                        (String) rows[k][0],
                        Op.UPSERT,
                        (long) (k + 1),
                        SCOPES,
                        Arrays.copyOf(rowBuf.array(), rowBuf.size())));
            }
            frames.add(new CommitFrame(1000, 1_700_000_000_000L, "actor-1", List.of("notes"), list));
        }
        frames.add(new SubEnd(1000, null));
        return frames;
    }

    private static Result measure(String name, long rows, Op1 op) {
        long bytes = 0;
        // Warm-up: at least WARMUP iterations and at least WARMUP_MS, so the JIT has compiled the hot paths.
        long warmEnd = System.nanoTime() + WARMUP_MS * 1_000_000L;
        for (int i = 0; i < WARMUP || System.nanoTime() < warmEnd; i++) {
            bytes = op.run();
        }
        double[] secs = new double[ITERATIONS];
        double[] cpu = new double[ITERATIONS];
        for (int i = 0; i < ITERATIONS; i++) {
            long c0 = THREADS.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            bytes = op.run();
            secs[i] = (System.nanoTime() - t0) / 1e9;
            cpu[i] = (THREADS.getCurrentThreadCpuTime() - c0) / 1e9;
        }
        Arrays.sort(secs);
        Arrays.sort(cpu);
        Result r = new Result(name, rows, bytes, secs[secs.length / 2], secs[0], cpu[cpu.length / 2]);
        System.out.printf(
                "%-62s median %8.2f ms  best %8.2f ms  %,12.0f rows/s  %7.1f MB/s%n",
                name, r.medianSec * 1e3, r.bestSec * 1e3, r.rowsPerSec(r.medianSec), r.mbPerSec(r.medianSec));
        return r;
    }

    // ---------------------------------------------------------------- workloads

    private static byte[] encodeCommitStream(RowCodec codec, Object[][] rows, WireWriter out) {
        MessageEncoder enc = new MessageEncoder(FrameType.MSG_RESPONSE, out::raw);
        enc.write(new RespHeader(null, null, "epoch-1", false));
        enc.write(new SubStart("sub-notes", SubscriptionStatus.ACTIVE, "ok", Map.of("project", List.of("p1")), false));
        List<String> tables = List.of("notes");
        WireWriter rowBuf = new WireWriter(256);
        int k = 0;
        for (int c = 0; c < COMMITS; c++) {
            List<Change> changes = new ArrayList<>(CHANGES_PER_COMMIT);
            for (int j = 0; j < CHANGES_PER_COMMIT; j++, k++) {
                rowBuf.reset();
                codec.encode(rowBuf, rows[k]);
                changes.add(new Change(
                        0,
                        (String) rows[k][0],
                        Op.UPSERT,
                        (long) (k + 1),
                        SCOPES,
                        Arrays.copyOf(rowBuf.array(), rowBuf.size())));
            }
            enc.write(new CommitFrame(1000 + c, 1_700_000_000_000L + c, "actor-1", tables, changes));
        }
        enc.write(new SubEnd(1000 + COMMITS - 1, null));
        enc.end();
        return out.toByteArray();
    }

    private static List<Frame> decodeStreamed(byte[] msg, int chunk) {
        MessageDecoder d = MessageDecoder.forResponses();
        List<Frame> frames = new ArrayList<>();
        for (int p = 0; p < msg.length; p += chunk) {
            frames.addAll(d.feed(msg, p, Math.min(chunk, msg.length - p)));
        }
        d.finish();
        return frames;
    }

    private static long decodeRows(RowCodec codec, List<Frame> frames, long bytes) {
        long n = 0;
        for (Frame f : frames) {
            if (f instanceof CommitFrame c) {
                for (Change ch : c.changes()) {
                    Object[] row = codec.decode(ch.row());
                    sink += row.length;
                    n++;
                }
            }
        }
        check(n == (long) COMMITS * CHANGES_PER_COMMIT);
        return bytes;
    }

    private static byte[] encodeSegment(Object[][] rows, WireWriter out) {
        RowsSegmentWriter w = new RowsSegmentWriter("notes", 3, NOTES, out::raw);
        for (int i = 0; i < rows.length; i++) {
            w.addRow(i + 1, rows[i]);
        }
        w.finish();
        return out.toByteArray();
    }

    private static byte[] inlineSegmentMessage(byte[] segment) {
        WireWriter out = new WireWriter(segment.length + 1024);
        MessageEncoder enc = new MessageEncoder(FrameType.MSG_RESPONSE, out::raw);
        enc.write(new RespHeader(null, null, "epoch-1", false));
        enc.write(new SubStart("sub-notes", SubscriptionStatus.ACTIVE, "ok", Map.of("project", List.of("p1")), true));
        enc.write(new SegmentInline(segment));
        enc.write(new SubEnd(1000, null));
        enc.end();
        return out.toByteArray();
    }

    /** Realistic notes rows: ids, ~1/5 NULL titles, 40–120 char bodies, JSON meta, some small blobs. */
    static Object[][] rows(int n, Random rnd) {
        String[] words = {
            "sync",
            "offline",
            "commit",
            "cursor",
            "scope",
            "segment",
            "lease",
            "row",
            "table",
            "merge",
            "conflict",
            "push",
            "pull",
            "snapshot",
            "bootstrap",
            "delta",
            "notes",
            "project",
            "é",
            "über"
        };
        Object[][] out = new Object[n][];
        for (int i = 0; i < n; i++) {
            StringBuilder body = new StringBuilder();
            int target = 40 + rnd.nextInt(80);
            while (body.length() < target) {
                body.append(words[rnd.nextInt(words.length)]).append(' ');
            }
            byte[] blob = null;
            if (rnd.nextInt(4) == 0) {
                blob = new byte[16 + rnd.nextInt(17)];
                rnd.nextBytes(blob);
            }
            out[i] = new Object[] {
                String.format("note-%08d", i),
                i % 5 == 0 ? null : "Title " + words[rnd.nextInt(words.length)] + " " + i,
                body.toString(),
                i % 3 == 0 ? null : (Object) (long) rnd.nextInt(1_000_000),
                rnd.nextDouble() * 100,
                rnd.nextBoolean(),
                i % 2 == 0
                        ? null
                        : "{\"tags\":[\"" + words[rnd.nextInt(words.length)] + "\",\"p1\"],\"rev\":" + rnd.nextInt(50)
                                + ",\"pinned\":" + rnd.nextBoolean() + "}",
                blob,
            };
        }
        return out;
    }

    private static void check(boolean ok) {
        if (!ok) {
            throw new AssertionError("benchmark self-check failed");
        }
    }
}
