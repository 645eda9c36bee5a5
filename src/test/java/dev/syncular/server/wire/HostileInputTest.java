package dev.syncular.server.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.management.ThreadMXBean;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Hostile-input robustness of the SSP2 codec (Conventions, §1.2, §1.7, §2.4, §5.2).
 *
 * <p>Every valid vector — request/response messages built from their renderings (as
 * {@link GoldenVectorsTest} does), the segment .bin files, the push sparse rows over the push manifest's
 * layout, and the full rows carried inside {@code COMMIT} changes and conflict {@code serverRow}s — is
 * mutated deterministically (seeded {@link Random}): every truncation length, every single-bit flip,
 * random byte overwrites, random trailing bytes, inserted and deleted bytes, huge u32 values written at
 * every offset, and (for messages) frames dropped, duplicated, swapped or emptied. Messages are additionally fed through the streaming decoder in random chunkings.
 *
 * <p>The decoder must either succeed — and then re-encoding the decoded value reproduces the input
 * byte for byte (canonical encoding) — or throw {@link WireException} with {@code sync.invalid_request}
 * ({@code sync.empty_commit} only for a {@code PUSH_COMMIT} whose operation count became 0). Any other
 * throwable (IndexOutOfBounds, NegativeArraySize, OutOfMemoryError, IllegalArgumentException, …) fails.
 *
 * <p>Separately, tiny messages whose length prefixes claim ~2 GiB must fail fast as
 * {@code sync.invalid_request} while the decoding thread allocates well under 1 MiB.
 */
class HostileInputTest {
    private static final long SEED = Long.getLong("syncular.hostile.seed", 0x55503251_2025L);
    private static final Path V3 = Renderings.referenceDir().resolve("vectors");
    private static final int[] HUGE = {0x7fffffff, 0xffffffff, 0x80000000, 0xfffffff0};
    private static final int MAX_REPORTED_FAILURES = 20;

    /** A decode + re-encode round trip over one kind of input. */
    @FunctionalInterface
    private interface RoundTrip {
        /** Decodes {@code in} and returns the re-encoding of the decoded value (throws on decode errors). */
        byte[] apply(byte[] in);
    }

    private record Seed(String name, byte[] bytes, RoundTrip codec, boolean message) {}

    private static final class Tally {
        long mutations;
        long rejected;
        long accepted;
        long emptyCommit;
        long streamed;
        final List<String> failures = new ArrayList<>();

        void failure(String s) {
            if (failures.size() < MAX_REPORTED_FAILURES) {
                failures.add(s);
            } else if (failures.size() == MAX_REPORTED_FAILURES) {
                failures.add("…");
            }
        }
    }

    // ---------------------------------------------------------------- the mutation sweep

    @Test
    void mutatedVectorsFailOnlyWithWireException() {
        long t0 = System.nanoTime();
        List<Seed> seeds = seeds();
        Random rnd = new Random(SEED);
        Tally tally = new Tally();
        int[] perKind = new int[4];
        for (Seed s : seeds) {
            // The unmutated seed must round-trip (otherwise the sweep would prove nothing).
            assertArrayEquals(s.bytes, s.codec.apply(s.bytes), () -> s.name + ": seed does not round-trip");
            if (s.message) {
                for (int k = 0; k < 25; k++) {
                    assertArrayEquals(s.bytes, streamed(s.bytes, rnd), () -> s.name + ": streaming seed");
                }
            }
            mutate(s, rnd, tally);
        }
        for (Seed s : seeds) {
            perKind[
                    s.name.startsWith("request") || s.name.startsWith("response")
                            ? 0
                            : s.name.startsWith("segment") ? 1 : s.name.startsWith("push") ? 2 : 3]++;
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.printf(
                "hostile input: seed=0x%x, %d seeds (%d messages, %d segments, %d sparse rows, %d full rows)%n",
                SEED, seeds.size(), perKind[0], perKind[1], perKind[2], perKind[3]);
        System.out.printf(
                "hostile input: %d mutations, %d rejected (%d of them sync.empty_commit), %d accepted"
                        + " (canonical), %d streamed in random chunkings, %d ms%n",
                tally.mutations, tally.rejected, tally.emptyCommit, tally.accepted, tally.streamed, ms);
        if (!tally.failures.isEmpty()) {
            fail("hostile input: " + tally.failures.size() + " failure(s):\n" + String.join("\n", tally.failures));
        }
        assertEquals(tally.mutations, tally.rejected + tally.accepted);
        assertTrue(tally.rejected > 0 && tally.accepted > 0);
    }

    private static void mutate(Seed s, Random rnd, Tally t) {
        byte[] b = s.bytes;
        int n = b.length;
        // Every truncation length.
        for (int len = 0; len < n; len++) {
            check(s, Arrays.copyOf(b, len), "truncate@" + len, rnd, t);
        }
        // Single-bit flips at every byte (every bit for inputs up to 4 KiB, a sample beyond).
        if (n <= 4096) {
            for (int i = 0; i < n; i++) {
                for (int bit = 0; bit < 8; bit++) {
                    byte[] m = b.clone();
                    m[i] ^= (byte) (1 << bit);
                    check(s, m, "flip@" + i + "." + bit, rnd, t);
                }
            }
        } else {
            for (int k = 0; k < 32_768; k++) {
                byte[] m = b.clone();
                int i = rnd.nextInt(n);
                int bit = rnd.nextInt(8);
                m[i] ^= (byte) (1 << bit);
                check(s, m, "flip@" + i + "." + bit, rnd, t);
            }
        }
        // Random byte overwrites (1–4 positions).
        for (int k = 0; k < 4 * n + 256; k++) {
            byte[] m = b.clone();
            int count = 1 + rnd.nextInt(4);
            StringBuilder d = new StringBuilder("overwrite");
            for (int c = 0; c < count && n > 0; c++) {
                int i = rnd.nextInt(n);
                m[i] = (byte) rnd.nextInt(256);
                d.append('@').append(i).append('=').append(m[i] & 0xff);
            }
            check(s, m, d.toString(), rnd, t);
        }
        // Extension with random trailing bytes.
        for (int k = 0; k < 64; k++) {
            int extra = 1 + rnd.nextInt(k < 32 ? 4 : 64);
            byte[] m = Arrays.copyOf(b, n + extra);
            for (int i = n; i < m.length; i++) {
                m[i] = (byte) rnd.nextInt(256);
            }
            check(s, m, "extend+" + extra, rnd, t);
        }
        // Inserted bytes at random positions (and at every position for a single zero byte).
        for (int i = 0; i <= n; i++) {
            check(s, insert(b, i, new byte[] {0}), "insert0@" + i, rnd, t);
        }
        for (int k = 0; k < n + 64; k++) {
            int at = rnd.nextInt(n + 1);
            byte[] ins = new byte[1 + rnd.nextInt(8)];
            rnd.nextBytes(ins);
            check(s, insert(b, at, ins), "insert" + ins.length + "@" + at, rnd, t);
        }
        // Deleted byte ranges.
        for (int k = 0; k < n + 64 && n > 0; k++) {
            int at = rnd.nextInt(n);
            int len = Math.min(n - at, 1 + rnd.nextInt(16));
            byte[] m = new byte[n - len];
            System.arraycopy(b, 0, m, 0, at);
            System.arraycopy(b, at + len, m, at, n - at - len);
            check(s, m, "delete" + len + "@" + at, rnd, t);
        }
        if (s.message) {
            frameMutations(s, rnd, t);
        }
        // Huge length fields: each value written as a little-endian u32 at every offset.
        for (int i = 0; i + 4 <= n; i++) {
            for (int v : HUGE) {
                byte[] m = b.clone();
                m[i] = (byte) v;
                m[i + 1] = (byte) (v >>> 8);
                m[i + 2] = (byte) (v >>> 16);
                m[i + 3] = (byte) (v >>> 24);
                check(s, m, String.format("u32@%d=0x%08x", i, v), rnd, t);
            }
        }
    }

    /**
     * Structure-aware mutations of a message: every frame dropped, duplicated, swapped with its successor
     * (grammar, §1.5/§1.6), and every {@code PUSH_COMMIT} emptied to zero operations ({@code sync.empty_commit}).
     */
    private static void frameMutations(Seed s, Random rnd, Tally t) {
        byte[] b = s.bytes;
        List<byte[]> frames = new ArrayList<>();
        int p = FrameType.ENVELOPE_HEADER_BYTES;
        while (p < b.length) {
            int len = (b[p + 1] & 0xff) | (b[p + 2] & 0xff) << 8 | (b[p + 3] & 0xff) << 16 | (b[p + 4] & 0xff) << 24;
            frames.add(Arrays.copyOfRange(b, p, p + FrameType.FRAME_HEADER_BYTES + len));
            p += FrameType.FRAME_HEADER_BYTES + len;
        }
        byte[] head = Arrays.copyOf(b, FrameType.ENVELOPE_HEADER_BYTES);
        int last = frames.size() - 1; // END
        for (int i = 0; i < last; i++) {
            List<byte[]> drop = new ArrayList<>(frames);
            drop.remove(i);
            check(s, join(head, drop), "dropFrame" + i, rnd, t);
            List<byte[]> dup = new ArrayList<>(frames);
            dup.add(i, frames.get(i));
            check(s, join(head, dup), "dupFrame" + i, rnd, t);
            if (i + 1 < last) {
                List<byte[]> swap = new ArrayList<>(frames);
                swap.set(i, frames.get(i + 1));
                swap.set(i + 1, frames.get(i));
                check(s, join(head, swap), "swapFrames" + i, rnd, t);
            }
            byte[] f = frames.get(i);
            if ((f[0] & 0xff) == FrameType.PUSH_COMMIT) {
                WireReader r = new WireReader(f, FrameType.FRAME_HEADER_BYTES, f.length - FrameType.FRAME_HEADER_BYTES);
                String id = r.str();
                WireWriter payload = new WireWriter().str(id).u32(0);
                List<byte[]> empty = new ArrayList<>(frames);
                empty.set(
                        i,
                        new WireWriter()
                                .u8(FrameType.PUSH_COMMIT)
                                .u32(payload.size())
                                .raw(payload.toByteArray())
                                .toByteArray());
                check(s, join(head, empty), "emptyPushCommit" + i, rnd, t);
            }
        }
    }

    private static byte[] join(byte[] head, List<byte[]> frames) {
        WireWriter w = new WireWriter().raw(head);
        for (byte[] f : frames) {
            w.raw(f);
        }
        return w.toByteArray();
    }

    private static byte[] insert(byte[] b, int at, byte[] ins) {
        byte[] m = new byte[b.length + ins.length];
        System.arraycopy(b, 0, m, 0, at);
        System.arraycopy(ins, 0, m, at, ins.length);
        System.arraycopy(b, at, m, at + ins.length, b.length - at);
        return m;
    }

    /** One mutant: decode (one-shot, and for messages also streamed), classify, check canonical re-encode. */
    private static void check(Seed s, byte[] m, String what, Random rnd, Tally t) {
        t.mutations++;
        Outcome one = run(() -> s.codec.apply(m));
        if (one.other != null) {
            t.failure(s.name + " " + what + ": " + describe(one.other));
            t.rejected++; // keep the totals consistent; the failure list fails the test
            return;
        }
        if (one.error != null) {
            t.rejected++;
            String code = one.error.code();
            if (WireException.EMPTY_COMMIT.equals(code)) {
                t.emptyCommit++;
                if (!s.message) {
                    t.failure(s.name + " " + what + ": sync.empty_commit outside a message");
                }
            } else if (!WireException.INVALID_REQUEST.equals(code)) {
                t.failure(s.name + " " + what + ": unexpected code " + code);
            }
        } else {
            t.accepted++;
            if (!Arrays.equals(m, one.bytes)) {
                t.failure(s.name + " " + what + ": accepted but re-encoding differs (non-canonical)");
            }
        }
        if (s.message) {
            // The streaming decoder, fed in a random chunking, agrees with the one-shot decode.
            t.streamed++;
            Outcome st = run(() -> streamed(m, rnd));
            if (st.other != null) {
                t.failure(s.name + " " + what + " (streamed): " + describe(st.other));
            } else if ((st.error == null) != (one.error == null)) {
                t.failure(s.name + " " + what + ": streamed and one-shot decodes disagree");
            } else if (st.error != null && !st.error.code().equals(one.error.code())) {
                t.failure(s.name + " " + what + ": streamed code " + st.error.code() + " vs " + one.error.code());
            } else if (st.error == null && !Arrays.equals(m, st.bytes)) {
                t.failure(s.name + " " + what + ": streamed decode re-encodes differently");
            }
        }
    }

    private record Outcome(byte[] bytes, WireException error, Throwable other) {}

    private static Outcome run(Supplier<byte[]> f) {
        try {
            return new Outcome(f.get(), null, null);
        } catch (WireException e) {
            return new Outcome(null, e, null);
        } catch (Throwable e) { // deliberately everything: OOM, StackOverflow, IOOBE, IAE, ClassCast, …
            return new Outcome(null, null, e);
        }
    }

    private static String describe(Throwable e) {
        StackTraceElement[] st = e.getStackTrace();
        return e + (st.length > 0 ? " at " + st[0] : "");
    }

    /** Feeds {@code m} to a streaming decoder in random chunk sizes; returns the re-encoded message. */
    private static byte[] streamed(byte[] m, Random rnd) {
        MessageDecoder d = new MessageDecoder(0);
        List<Frame> frames = new ArrayList<>();
        int mode = rnd.nextInt(3);
        int p = 0;
        while (p < m.length) {
            int len = switch (mode) {
                case 0 -> 1 + rnd.nextInt(4); // tiny chunks, split headers
                case 1 -> 1 + rnd.nextInt(64);
                default -> 1 + rnd.nextInt(Math.max(1, m.length - p));
            };
            len = Math.min(len, m.length - p);
            // Chunks live in a larger array at an offset, as network buffers do.
            byte[] chunk = new byte[len + 8];
            System.arraycopy(m, p, chunk, 3, len);
            frames.addAll(d.feed(chunk, 3, len));
            p += len;
        }
        d.finish();
        return new Message(FrameType.WIRE_VERSION, d.msgKind(), frames).encode();
    }

    // ---------------------------------------------------------------- seeds

    private static byte[] bytes(Path p) {
        try {
            return Files.readAllBytes(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<Seed> seeds() {
        List<Seed> seeds = new ArrayList<>();
        RoundTrip messageCodec = in -> MessageDecoder.decode(in).encode();
        List<Message> messages = new ArrayList<>();
        for (String kind : List.of("request", "response")) {
            JsonNode manifest = Renderings.read(V3.resolve(kind).resolve("manifest.json"));
            for (JsonNode c : manifest.get("cases")) {
                Message m = Renderings.message(
                        Renderings.read(V3.resolve(kind).resolve(c.get("json").asText())));
                messages.add(m);
                seeds.add(new Seed(kind + "/" + c.get("name").asText(), m.encode(), messageCodec, true));
            }
        }
        JsonNode segManifest = Renderings.read(V3.resolve("segment/manifest.json"));
        for (JsonNode c : segManifest.get("cases")) {
            seeds.add(new Seed(
                    "segment/" + c.get("name").asText(),
                    bytes(V3.resolve("segment").resolve(c.get("bin").asText())),
                    in -> RowsSegment.decode(in).encode(),
                    false));
        }
        JsonNode pushManifest = Renderings.read(V3.resolve("push/manifest.json"));
        RowLayout pushLayout = Renderings.columns(
                pushManifest.get("columns"), pushManifest.get("primaryKey").asText());
        SparseRowCodec sparse = new SparseRowCodec(pushLayout);
        RoundTrip sparseCodec = in -> sparse.encode(sparse.decode(in));
        for (JsonNode c : pushManifest.get("cases")) {
            JsonNode json =
                    Renderings.read(V3.resolve("push").resolve(c.get("json").asText()));
            seeds.add(new Seed(
                    "push/" + c.get("name").asText(),
                    sparse.encode(Renderings.sparseRow(pushLayout, json.get("values"))),
                    sparseCodec,
                    false));
        }
        // Row payloads inside the messages: COMMIT change rows and conflict serverRows (full-row codec, with
        // the segment vectors' column tables as GoldenVectorsTest.rowPayloadsInsideMessages uses them), and
        // PUSH_COMMIT sparse payloads.
        RowLayout notes = withPk(RowsSegment.decode(bytes(V3.resolve("segment/rows-two-blocks.bin")))
                .columns());
        RowLayout docs = withPk(
                RowsSegment.decode(bytes(V3.resolve("segment/crdt-column.bin"))).columns());
        RowCodec notesCodec = new RowCodec(notes);
        RowCodec docsCodec = new RowCodec(docs);
        SparseRowCodec notesSparse = new SparseRowCodec(notes);
        RoundTrip notesRows = in -> notesCodec.encode(notesCodec.decode(in));
        RoundTrip docsRows = in -> docsCodec.encode(docsCodec.decode(in));
        RoundTrip notesSparseRows = in -> notesSparse.encode(notesSparse.decode(in));
        int row = 0;
        for (Message m : messages) {
            for (Frame f : m.frames()) {
                if (f instanceof CommitFrame c) {
                    for (Change ch : c.changes()) {
                        if (ch.row() != null) {
                            boolean isDocs = c.tables().get(ch.tableIndex()).equals("docs");
                            seeds.add(new Seed(
                                    "row/commit#" + row++ + (isDocs ? "(docs)" : "(notes)"),
                                    ch.row(),
                                    isDocs ? docsRows : notesRows,
                                    false));
                        }
                    }
                } else if (f instanceof PushResult r) {
                    for (OpResult res : r.results()) {
                        if (res instanceof OpResult.Conflict conflict) {
                            seeds.add(new Seed("row/serverRow#" + row++, conflict.serverRow(), notesRows, false));
                        }
                    }
                } else if (f instanceof PushCommit pc) {
                    for (PushOperation op : pc.operations()) {
                        if (op.payload() != null) {
                            seeds.add(new Seed("row/pushPayload#" + row++, op.payload(), notesSparseRows, false));
                        }
                    }
                }
            }
        }
        assertTrue(row > 0, "no row payloads found inside the message vectors");
        return seeds;
    }

    private static RowLayout withPk(RowLayout l) {
        return new RowLayout(l.columns(), l.indexOf("id"));
    }

    // ---------------------------------------------------------------- allocation bound

    private static final ThreadMXBean THREADS = (ThreadMXBean) ManagementFactory.getThreadMXBean();

    private static long allocated() {
        return THREADS.getThreadAllocatedBytes(Thread.currentThread().getId());
    }

    private static final long ALLOCATION_BOUND = 1L << 20;

    @Test
    void hugeLengthPrefixesFailFastWithoutAllocating() {
        assertTrue(
                THREADS.isThreadAllocatedMemorySupported() && THREADS.isThreadAllocatedMemoryEnabled(),
                "per-thread allocation accounting unavailable");
        // The probe works: a 4 MiB allocation is visible.
        long before = allocated();
        byte[] probe = new byte[4 << 20];
        long probed = allocated() - before;
        assertTrue(probed >= probe.length, "allocation probe saw only " + probed + " bytes");

        Map<String, Supplier<byte[]>> cases = new LinkedHashMap<>();
        int[] claims = {0x7fffffff, 0xffffffff, 0x80000000};
        for (int claim : claims) {
            String c = String.format("0x%08x", claim);
            cases.put(
                    "frame length " + c,
                    () -> message(
                            FrameType.MSG_REQUEST,
                            raw(FrameType.REQ_HEADER, claim, new byte[] {1, 2, 3, 4, 5, 6, 7, 8})));
            cases.put(
                    "unknown frame length " + c,
                    () -> message(
                            FrameType.MSG_RESPONSE,
                            MessageEncoder.encodeFrame(new RespHeader(null, null, "e", false)),
                            raw(0x7e, claim, new byte[16])));
            cases.put(
                    "REQ_HEADER clientId str " + c,
                    () -> message(
                            FrameType.MSG_REQUEST,
                            frame(
                                    FrameType.REQ_HEADER,
                                    new WireWriter().i32(claim).raw(new byte[9]))));
            cases.put(
                    "PUSH_COMMIT operations list " + c,
                    () -> request(frame(
                            FrameType.PUSH_COMMIT,
                            new WireWriter().str("c1").i32(claim).raw(new byte[24]))));
            cases.put(
                    "PUSH_COMMIT payload bytes " + c,
                    () -> request(frame(
                            FrameType.PUSH_COMMIT,
                            new WireWriter()
                                    .str("c1")
                                    .u32(1)
                                    .str("notes")
                                    .str("r1")
                                    .u8(1)
                                    .u8(0)
                                    .u8(1)
                                    .i32(claim)
                                    .raw(new byte[6]))));
            cases.put(
                    "SUBSCRIPTION scope map " + c,
                    () -> request(
                            MessageEncoder.encodeFrame(new PullHeader(10, 10, 1, 1)),
                            frame(
                                    FrameType.SUBSCRIPTION,
                                    new WireWriter()
                                            .str("s1")
                                            .str("notes")
                                            .i32(claim)
                                            .raw(new byte[32]))));
            cases.put(
                    "SUBSCRIPTION scope value list " + c,
                    () -> request(
                            MessageEncoder.encodeFrame(new PullHeader(10, 10, 1, 1)),
                            frame(
                                    FrameType.SUBSCRIPTION,
                                    new WireWriter()
                                            .str("s1")
                                            .str("notes")
                                            .u32(1)
                                            .str("project")
                                            .i32(claim)
                                            .raw(new byte[32]))));
            cases.put(
                    "COMMIT tables list " + c,
                    () -> responseInSub(frame(
                            FrameType.COMMIT,
                            new WireWriter().i64(5).i64(1).str("a").i32(claim).raw(new byte[40]))));
            cases.put(
                    "COMMIT changes list " + c,
                    () -> responseInSub(frame(
                            FrameType.COMMIT,
                            new WireWriter()
                                    .i64(5)
                                    .i64(1)
                                    .str("a")
                                    .u32(1)
                                    .str("notes")
                                    .i32(claim)
                                    .raw(new byte[40]))));
            cases.put(
                    "COMMIT change row bytes " + c,
                    () -> responseInSub(frame(
                            FrameType.COMMIT,
                            new WireWriter()
                                    .i64(5)
                                    .i64(1)
                                    .str("a")
                                    .u32(1)
                                    .str("notes")
                                    .u32(1)
                                    .u16(0)
                                    .str("r1")
                                    .u8(1)
                                    .u8(1)
                                    .i64(3)
                                    .u32(0)
                                    .u8(1)
                                    .i32(claim)
                                    .raw(new byte[8]))));
            cases.put(
                    "PUSH_RESULT results list " + c,
                    () -> message(
                            FrameType.MSG_RESPONSE,
                            MessageEncoder.encodeFrame(new RespHeader(null, null, "e", false)),
                            frame(
                                    FrameType.PUSH_RESULT,
                                    new WireWriter()
                                            .str("c1")
                                            .u8(1)
                                            .u8(1)
                                            .i64(4)
                                            .i32(claim)
                                            .raw(new byte[16]))));
            cases.put(
                    "SEGMENT_INLINE table str " + c,
                    () -> responseInSub(frame(
                            FrameType.SEGMENT_INLINE, segmentHead().i32(claim).raw(new byte[16]))));
            cases.put(
                    "SEGMENT_INLINE block rowCount " + c,
                    () -> responseInSub(frame(
                            FrameType.SEGMENT_INLINE,
                            segmentHead()
                                    .str("notes")
                                    .i32(1)
                                    .u16(1)
                                    .str("id")
                                    .u8(1)
                                    .u8(0)
                                    .i32(claim)
                                    .u32(16)
                                    .raw(new byte[16]))));
            cases.put(
                    "SEGMENT_INLINE block byteLength " + c,
                    () -> responseInSub(frame(
                            FrameType.SEGMENT_INLINE,
                            segmentHead()
                                    .str("notes")
                                    .i32(1)
                                    .u16(1)
                                    .str("id")
                                    .u8(1)
                                    .u8(0)
                                    .u32(1)
                                    .i32(claim)
                                    .raw(new byte[16]))));
            cases.put(
                    "SEGMENT_INLINE row str " + c,
                    () -> responseInSub(frame(
                            FrameType.SEGMENT_INLINE,
                            segmentHead()
                                    .str("notes")
                                    .i32(1)
                                    .u16(1)
                                    .str("id")
                                    .u8(1)
                                    .u8(0)
                                    .u32(1)
                                    .u32(13)
                                    .i64(1)
                                    .u8(0)
                                    .i32(claim)
                                    .u32(0))));
        }
        cases.put(
                "SEGMENT_INLINE column count 0xffff",
                () -> responseInSub(frame(
                        FrameType.SEGMENT_INLINE,
                        segmentHead().str("notes").i32(1).u16(0xffff).raw(new byte[24]))));

        // Warm-up pass: class loading and JIT bookkeeping allocate; the measured pass must not.
        for (Supplier<byte[]> make : cases.values()) {
            byte[] m = make.get();
            assertThrows(WireException.class, () -> MessageDecoder.decode(m));
        }
        int checked = 0;
        long worst = 0;
        for (Map.Entry<String, Supplier<byte[]>> e : cases.entrySet()) {
            byte[] m = e.getValue().get();
            assertTrue(m.length < 256, e.getKey() + ": not a tiny message");
            long t0 = System.nanoTime();
            long a0 = allocated();
            WireException ex = assertThrows(WireException.class, () -> MessageDecoder.decode(m), e.getKey());
            long used = allocated() - a0;
            long micros = (System.nanoTime() - t0) / 1000;
            assertEquals(WireException.INVALID_REQUEST, ex.code(), e.getKey());
            assertTrue(used < ALLOCATION_BOUND, e.getKey() + ": decoder allocated " + used + " bytes");
            assertTrue(micros < 1_000_000, e.getKey() + ": took " + micros + " µs");
            // Streaming: the claimed frame length buffers only what actually arrived.
            long s0 = allocated();
            WireException sx = assertThrows(
                    WireException.class,
                    () -> {
                        MessageDecoder d = new MessageDecoder(0);
                        for (int i = 0; i < m.length; i += 7) {
                            d.feed(m, i, Math.min(7, m.length - i));
                        }
                        d.finish();
                    },
                    e.getKey());
            long streamedUsed = allocated() - s0;
            assertEquals(WireException.INVALID_REQUEST, sx.code(), e.getKey());
            assertTrue(streamedUsed < ALLOCATION_BOUND, e.getKey() + ": streaming decoder allocated " + streamedUsed);
            worst = Math.max(worst, Math.max(used, streamedUsed));
            checked++;
        }

        // The row codecs and the standalone segment reader, directly.
        RowLayout layout = new RowLayout(
                List.of(
                        new ColumnDef("id", ColumnType.STRING, false),
                        new ColumnDef("blob", ColumnType.BYTES, true),
                        new ColumnDef("meta", ColumnType.JSON, true)),
                0);
        RowCodec rows = new RowCodec(layout);
        SparseRowCodec sparse = new SparseRowCodec(layout);
        for (int claim : claims) {
            List<Supplier<Object>> direct = List.of(
                    () -> rows.decode(
                            new WireWriter().u8(0).i32(claim).raw(new byte[8]).toByteArray()),
                    () -> rows.decode(new WireWriter()
                            .u8(0)
                            .str("r1")
                            .i32(claim)
                            .raw(new byte[8])
                            .toByteArray()),
                    () -> sparse.decode(new WireWriter()
                            .u8(7)
                            .u8(0)
                            .str("r1")
                            .i32(claim)
                            .raw(new byte[8])
                            .toByteArray()),
                    () -> RowsSegment.decode(
                            segmentHead().i32(claim).raw(new byte[16]).toByteArray()),
                    () -> RowsSegment.decode(segmentHead()
                            .str("t")
                            .i32(1)
                            .u16(1)
                            .str("id")
                            .u8(1)
                            .u8(0)
                            .i32(claim)
                            .u32(8)
                            .raw(new byte[8])
                            .toByteArray()));
            for (Supplier<Object> d : direct) {
                assertThrows(WireException.class, d::get); // warm
                long a0 = allocated();
                WireException ex = assertThrows(WireException.class, d::get);
                long used = allocated() - a0;
                assertEquals(WireException.INVALID_REQUEST, ex.code());
                assertTrue(used < ALLOCATION_BOUND, "row codec allocated " + used + " bytes");
                worst = Math.max(worst, used);
                checked++;
            }
        }
        System.out.printf(
                "hostile input: %d ~2 GiB length claims rejected as sync.invalid_request, worst"
                        + " allocation %d bytes (bound %d)%n",
                checked, worst, ALLOCATION_BOUND);
    }

    private static WireWriter segmentHead() {
        return new WireWriter()
                .raw(RowsSegment.MAGIC)
                .u16(RowsSegment.FORMAT_VERSION)
                .u16(0);
    }

    private static byte[] raw(int type, int claimedLength, byte[] payload) {
        return new WireWriter().u8(type).i32(claimedLength).raw(payload).toByteArray();
    }

    private static byte[] frame(int type, WireWriter payload) {
        return new WireWriter()
                .u8(type)
                .u32(payload.size())
                .raw(payload.array(), 0, payload.size())
                .toByteArray();
    }

    private static byte[] message(int kind, byte[]... frames) {
        WireWriter w = new WireWriter().raw(MessageEncoder.envelopeHeader(kind));
        for (byte[] f : frames) {
            w.raw(f);
        }
        return w.u8(FrameType.END).u32(0).toByteArray();
    }

    private static byte[] request(byte[]... frames) {
        byte[][] all = new byte[frames.length + 1][];
        all[0] = MessageEncoder.encodeFrame(new ReqHeader("c", 1, null));
        System.arraycopy(frames, 0, all, 1, frames.length);
        return message(FrameType.MSG_REQUEST, all);
    }

    private static byte[] responseInSub(byte[] frame) {
        return message(
                FrameType.MSG_RESPONSE,
                MessageEncoder.encodeFrame(new RespHeader(null, null, "e", false)),
                MessageEncoder.encodeFrame(
                        new SubStart("s1", SubscriptionStatus.ACTIVE, "ok", Map.of("project", List.of("p1")), false)),
                frame,
                MessageEncoder.encodeFrame(new SubEnd(5, null)));
    }

    // ---------------------------------------------------------------- boundary regressions

    /**
     * Records at their minimum encoded size decode: the count-versus-remaining guards that bound
     * allocation must use each record's true minimum size, or valid messages are rejected.
     */
    @Test
    void minimumSizedRecordsDecode() {
        // COMMIT with delete changes of the minimum 13 bytes: u16 + empty str + u8 + absent opt + empty map + absent
        // opt.
        CommitFrame commit = new CommitFrame(
                7,
                1,
                "a",
                List.of("notes"),
                List.of(
                        new Change(0, "", Op.DELETE, null, Map.of(), null),
                        new Change(0, "", Op.DELETE, null, Map.of(), null)));
        byte[] resp = Message.response(List.of(
                        new RespHeader(null, null, "e", false),
                        new SubStart("s1", SubscriptionStatus.ACTIVE, "ok", Map.of(), false),
                        commit,
                        new SubEnd(7, null)))
                .encode();
        assertArrayEquals(resp, MessageDecoder.decode(resp).encode());
        // PUSH_COMMIT delete operations of the minimum 11 bytes, PUSH_RESULT applied records of 5 bytes.
        byte[] req = Message.request(List.of(
                        new ReqHeader("c", 1, null),
                        new PushCommit(
                                "c1",
                                List.of(
                                        new PushOperation("", "", Op.DELETE, null, null),
                                        new PushOperation("", "", Op.DELETE, null, null)))))
                .encode();
        assertArrayEquals(req, MessageDecoder.decode(req).encode());
        byte[] res = Message.response(List.of(
                        new RespHeader(null, null, "e", false),
                        new PushResult(
                                "c1",
                                CommitStatus.APPLIED,
                                9L,
                                List.of(new OpResult.Applied(0), new OpResult.Applied(1)))))
                .encode();
        assertArrayEquals(res, MessageDecoder.decode(res).encode());
        // Lists of empty strings (4 bytes each) and scope maps of empty keys/lists (8 bytes per entry).
        byte[] sub = Message.request(List.of(
                        new ReqHeader("c", 1, null),
                        new PullHeader(1, 1, 1, 1),
                        new SubscriptionFrame("", "", Map.of("", List.of(), "a", List.of("", "")), null, -1, null)))
                .encode();
        assertArrayEquals(sub, MessageDecoder.decode(sub).encode());
        // SSG2 row records of the minimum size: 8-byte serverVersion + bitmap (none for a zero-column table),
        // 9 bytes for an all-NULL one-column row.
        for (RowLayout layout :
                List.of(RowLayout.of(List.of()), RowLayout.of(List.of(new ColumnDef("x", ColumnType.STRING, true))))) {
            List<SegmentRow> block = new ArrayList<>();
            for (int i = 1; i <= 40; i++) {
                block.add(new SegmentRow(i, new Object[layout.size()]));
            }
            byte[] seg = new RowsSegment("t", 1, layout, List.of(block)).encode();
            assertArrayEquals(seg, RowsSegment.decode(seg).encode());
        }
    }

    /** RFC 8259 {@code \\u} escapes take four ASCII hex digits — not other Unicode digits or fullwidth letters. */
    @Test
    void jsonUnicodeEscapeNeedsAsciiHexDigits() {
        assertTrue(JsonText.isDocument("\"\\u00e9\\uABCD\""));
        for (String bad : List.of(
                "\"\\u\u0661\u0662\u0663\u0664\"", "\"\\u\uff21\uff22\uff23\uff24\"", "\"\\u00\u0966\u0967\"")) {
            assertTrue(!JsonText.isDocument(bad), "accepted " + bad);
        }
    }
}
