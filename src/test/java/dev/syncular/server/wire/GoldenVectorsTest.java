package dev.syncular.server.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The golden vectors (Appendix A, vectors/README.md) against the codec.
 *
 * <ul>
 * <li>{@code segment/}: .bin present — decode, render equals the .json, re-encode equals the .bin, and the
 * value built from the .json encodes to the .bin; invalid .bin files fail with the manifest's code.</li>
 * <li>{@code request/}, {@code response/}, {@code push/}: wire-v3 JSON renderings only — build the value from
 * the rendering, encode, decode, render again and compare, re-encode byte for byte. The layout is then
 * checked against the legacy v1/v2 bytes in {@code vectors-0.15.48-wire-v1v2/}: every frame after the header
 * whose rendering is identical in both versions has an unchanged layout, so its legacy bytes are transplanted
 * behind a v3 header and must decode, re-encode byte for byte and render as the v3 case. That covers
 * {@code PULL_HEADER}, {@code SUBSCRIPTION}, {@code SUB_START}, {@code COMMIT}, {@code SEGMENT_REF},
 * {@code SEGMENT_INLINE}, {@code SUB_END}, {@code LEASE}, {@code ERROR}, unknown frames, {@code PUSH_RESULT}
 * without conflicts and delete-only {@code PUSH_COMMIT}. Not compared: {@code REQ_HEADER}/{@code RESP_HEADER}
 * of wire v1 (v2 added {@code logEpoch}, {@code resetRequired}), upsert {@code PUSH_COMMIT}s (v3 sparse
 * payloads) and conflict records (v3 {@code conflictColumns}). The wire-v2 cases ({@code epoch-bound},
 * {@code epoch-reset}) equal the v3 bytes exactly but for the version field.</li>
 * <li>The v3 invalid cases the manifests name are constructed from their descriptions.</li>
 * <li>Every legacy v1/v2 message is rejected ({@code sync.invalid_request}, §1.2, §9).</li>
 * </ul>
 * Realtime vectors are covered by {@code RealtimeVectorsTest}; {@code crypto/} pins client-side E2EE (§5.11),
 * which a server never performs.
 */
class GoldenVectorsTest {
    private static final AtomicInteger CHECKED = new AtomicInteger();
    private static final AtomicInteger LEGACY_FRAMES = new AtomicInteger();

    private static final Path REF = Renderings.referenceDir();
    private static final Path V3 = REF.resolve("vectors");
    private static final Path LEGACY = REF.resolve("vectors-0.15.48-wire-v1v2");

    @AfterAll
    static void report() {
        System.out.println("golden vectors: " + CHECKED.get() + " cases checked, " + LEGACY_FRAMES.get()
                + " frames byte-compared against legacy v1/v2 layouts");
    }

    private static byte[] bytes(Path p) {
        try {
            return Files.readAllBytes(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void sameRendering(JsonNode expected, JsonNode actual) {
        assertTrue(
                Renderings.sameJson(expected, actual),
                () -> "rendering differs\nexpected: " + expected + "\nactual:   " + actual);
    }

    private static void rejects(String code, Runnable decode) {
        WireException e = assertThrows(WireException.class, decode::run);
        assertEquals(code, e.code());
    }

    // ---------------------------------------------------------------- segment (.bin present)

    @TestFactory
    Stream<DynamicTest> segmentVectors() {
        JsonNode manifest = Renderings.read(V3.resolve("segment/manifest.json"));
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode c : manifest.get("cases")) {
            tests.add(dynamicTest("segment/" + c.get("name").asText(), () -> {
                byte[] bin = bytes(V3.resolve("segment").resolve(c.get("bin").asText()));
                JsonNode json = Renderings.read(
                        V3.resolve("segment").resolve(c.get("json").asText()));
                RowsSegment decoded = RowsSegment.decode(bin);
                sameRendering(json, DebugJson.render(decoded));
                assertArrayEquals(bin, decoded.encode(), "re-encode");
                // Built from the rendering, the value renders the same (json column text is not
                // recoverable from a rendering, so bytes may differ in insignificant whitespace only).
                sameRendering(
                        json,
                        DebugJson.render(
                                RowsSegment.decode(Renderings.segment(json).encode())));
                // Streaming: the block-by-block reader sees the same rows with any prefix of the bytes.
                RowsSegmentReader reader = new RowsSegmentReader(new WireReader(bin));
                int rows = 0;
                List<SegmentRow> block;
                while ((block = reader.nextBlock()) != null) {
                    rows += block.size();
                }
                assertEquals(decoded.rowCount(), rows);
                CHECKED.incrementAndGet();
            }));
        }
        for (JsonNode c : manifest.get("invalid")) {
            tests.add(dynamicTest("segment/" + c.get("name").asText(), () -> {
                byte[] bin = bytes(V3.resolve("segment").resolve(c.get("bin").asText()));
                rejects(c.get("error").asText(), () -> RowsSegment.decode(bin));
                CHECKED.incrementAndGet();
            }));
        }
        return tests.stream();
    }

    // ---------------------------------------------------------------- request / response (JSON only)

    @TestFactory
    Stream<DynamicTest> requestVectors() {
        return messageVectors("request");
    }

    @TestFactory
    Stream<DynamicTest> responseVectors() {
        return messageVectors("response");
    }

    private Stream<DynamicTest> messageVectors(String kind) {
        JsonNode manifest = Renderings.read(V3.resolve(kind).resolve("manifest.json"));
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode c : manifest.get("cases")) {
            String name = c.get("name").asText();
            tests.add(dynamicTest(kind + "/" + name, () -> {
                JsonNode json =
                        Renderings.read(V3.resolve(kind).resolve(c.get("json").asText()));
                Message built = Renderings.message(json);
                byte[] bin = built.encode();
                Message decoded = MessageDecoder.decode(bin);
                sameRendering(json, DebugJson.render(decoded));
                assertArrayEquals(bin, decoded.encode(), "re-encode");
                assertStreamingDecode(bin, decoded);
                compareWithLegacy(kind, c, json, decoded, bin);
                CHECKED.incrementAndGet();
            }));
        }
        for (JsonNode c : manifest.get("invalid")) {
            String name = c.get("name").asText();
            tests.add(dynamicTest(kind + "/invalid/" + name, () -> {
                Supplier<byte[]> maker = INVALID.get(kind + "/" + name);
                assertTrue(maker != null, "no constructor for the v3 invalid case " + name);
                byte[] bin = maker.get();
                rejects(c.get("error").asText(), () -> MessageDecoder.decode(bin));
                CHECKED.incrementAndGet();
            }));
        }
        return tests.stream();
    }

    /** Feeding the bytes one at a time yields the same frames (§1.4 streaming reader). */
    private static void assertStreamingDecode(byte[] bin, Message expected) {
        MessageDecoder d = new MessageDecoder(0);
        List<Frame> frames = new ArrayList<>();
        for (int i = 0; i < bin.length; i++) {
            frames.addAll(d.feed(bin, i, 1));
        }
        d.finish();
        assertEquals(DebugJson.render(expected), DebugJson.render(new Message(3, d.msgKind(), frames)));
    }

    private static void compareWithLegacy(String kind, JsonNode c, JsonNode v3Json, Message v3, byte[] v3Bin) {
        Path legacyBin = LEGACY.resolve(kind).resolve(c.get("bin").asText());
        JsonNode legacyJson =
                Renderings.read(LEGACY.resolve(kind).resolve(c.get("json").asText()));
        byte[] legacy = bytes(legacyBin);
        int legacyVersion = (legacy[4] & 0xff) | (legacy[5] & 0xff) << 8;
        assertEquals(legacyVersion, legacyJson.get("wireVersion").asInt());
        // A legacy message is rejected before its frames are read (§1.2, §9).
        rejects(WireException.INVALID_REQUEST, () -> MessageDecoder.decode(legacy));
        if (legacyVersion == 2) {
            byte[] patched = legacy.clone();
            patched[4] = 3;
            assertArrayEquals(patched, v3Bin, "wire-v2 layout equals wire v3 but for the version");
        }
        // Transplant: the v3 header frame, then every legacy frame whose rendering is identical in v1/v2 and
        // v3 (its layout is unchanged), the v3 encoding of the others. The result must decode, re-encode
        // byte for byte (raw json text with its original whitespace included) and render as the v3 case.
        List<byte[]> legacyFrames = rawFrames(legacy);
        JsonNode legacyRendered = legacyJson.get("frames");
        assertEquals(legacyRendered.size(), legacyFrames.size());
        WireWriter t = new WireWriter();
        t.raw(MessageEncoder.envelopeHeader(v3.msgKind()));
        t.raw(MessageEncoder.encodeFrame(v3.frames().get(0)));
        for (int i = 1; i < v3.frames().size(); i++) {
            Frame f = v3.frames().get(i);
            if (Renderings.sameJson(legacyRendered.get(i), v3Json.get("frames").get(i))) {
                t.raw(legacyFrames.get(i));
                LEGACY_FRAMES.incrementAndGet();
            } else {
                t.raw(MessageEncoder.encodeFrame(f)); // PUSH_COMMIT sparse payloads, conflictColumns
            }
        }
        t.u8(FrameType.END).u32(0);
        byte[] transplanted = t.toByteArray();
        Message decoded = MessageDecoder.decode(transplanted);
        assertArrayEquals(transplanted, decoded.encode(), "legacy frame layouts re-encode byte for byte");
        sameRendering(v3Json, DebugJson.render(decoded));
    }

    /** Splits a message into raw frames (header + payload) without interpreting them. */
    private static List<byte[]> rawFrames(byte[] msg) {
        List<byte[]> out = new ArrayList<>();
        int p = 8;
        while (true) {
            int type = msg[p] & 0xff;
            int len = (msg[p + 1] & 0xff)
                    | (msg[p + 2] & 0xff) << 8
                    | (msg[p + 3] & 0xff) << 16
                    | (msg[p + 4] & 0xff) << 24;
            if (type == 0) {
                return out;
            }
            out.add(Arrays.copyOfRange(msg, p, p + 5 + len));
            p += 5 + len;
        }
    }

    // ---------------------------------------------------------------- push (sparse rows, JSON only)

    @TestFactory
    Stream<DynamicTest> pushVectors() {
        JsonNode manifest = Renderings.read(V3.resolve("push/manifest.json"));
        RowLayout layout = Renderings.columns(
                manifest.get("columns"), manifest.get("primaryKey").asText());
        SparseRowCodec codec = new SparseRowCodec(layout);
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode c : manifest.get("cases")) {
            tests.add(dynamicTest("push/" + c.get("name").asText(), () -> {
                JsonNode json =
                        Renderings.read(V3.resolve("push").resolve(c.get("json").asText()));
                assertEquals(
                        layout,
                        Renderings.columns(
                                json.get("columns"), manifest.get("primaryKey").asText()));
                byte[] bin = codec.encode(Renderings.sparseRow(layout, json.get("values")));
                SparseRow decoded = codec.decode(bin);
                sameRendering(json, DebugJson.render(layout, decoded));
                assertArrayEquals(bin, codec.encode(decoded));
                CHECKED.incrementAndGet();
            }));
        }
        for (JsonNode c : manifest.get("invalid")) {
            String name = c.get("name").asText();
            tests.add(dynamicTest("push/invalid/" + name, () -> {
                byte[] bin = invalidSparseRow(name, layout, codec);
                rejects(c.get("error").asText(), () -> codec.decode(bin));
                CHECKED.incrementAndGet();
            }));
        }
        return tests.stream();
    }

    /** The push/invalid cases, built from their manifest descriptions over the 9-column table. */
    private static byte[] invalidSparseRow(String name, RowLayout layout, SparseRowCodec codec) {
        JsonNode partial = Renderings.read(V3.resolve("push/sparse-row.json")).get("values");
        byte[] ok = codec.encode(Renderings.sparseRow(layout, partial)); // id, title (NULL), meta present
        byte[] b = ok.clone();
        switch (name) {
            case "presence-padding-bit" -> b[1] |= 0x02; // bit 9 of a 9-column table
            case "null-bit-for-absent-column" -> b[2] |= 0x08; // 3 present columns: bit 3 is padding
            case "null-bit-on-non-nullable" -> b[2] |= 0x01; // the first present column is the primary key
            case "absent-primary-key" -> b[0] &= ~0x01;
            default -> throw new AssertionError("no constructor for push/invalid/" + name);
        }
        return b;
    }

    // ---------------------------------------------------------------- v3 invalid messages

    private static final Map<String, Supplier<byte[]>> INVALID = Map.of(
            "request/truncated-no-end",
                    () -> {
                        byte[] ok = v3("request/pull-minimal.json");
                        return Arrays.copyOf(ok, ok.length - 5);
                    },
            "request/bad-magic",
                    () -> {
                        byte[] b = v3("request/pull-minimal.json");
                        b[3] = '1';
                        return b;
                    },
            "request/unsupported-wire-version",
                    () -> {
                        byte[] b = v3("request/pull-minimal.json");
                        b[4] = (byte) (999 & 0xff);
                        b[5] = (byte) (999 >> 8);
                        return b;
                    },
            "request/nonzero-flags",
                    () -> {
                        byte[] b = v3("request/pull-minimal.json");
                        b[7] = 1;
                        return b;
                    },
            "request/overlong-frame-length",
                    () -> {
                        byte[] b = v3("request/pull-minimal.json");
                        int headerLen = b[9] & 0xff; // REQ_HEADER length (small)
                        int pull = 8 + 5 + headerLen; // PULL_HEADER frame header
                        b[pull + 1] = (byte) 0xff;
                        b[pull + 2] = (byte) 0xff;
                        return b;
                    },
            "request/op-enum-out-of-range", () -> pushWithOperation(3, true),
            "request/upsert-without-payload", () -> pushWithOperation(1, false),
            "response/bool-byte-out-of-range",
                    () -> {
                        byte[] b = v3("response/pull-empty.json");
                        // pull-empty: RESP_HEADER, SUB_START, SUB_END; bootstrap is SUB_START's last payload byte.
                        List<byte[]> frames = rawFrames(b);
                        int subStartEnd = 8 + frames.get(0).length + frames.get(1).length;
                        b[subStartEnd - 1] = 0x02;
                        return b;
                    });

    private static byte[] v3(String rendering) {
        return Renderings.message(Renderings.read(V3.resolve(rendering))).encode();
    }

    /** A request whose one push operation has the given op byte and payload presence, framed by hand. */
    private static byte[] pushWithOperation(int op, boolean withPayload) {
        WireWriter commit = new WireWriter();
        commit.str("c-1").u32(1).str("notes").str("n-1").u8(op).u8(0);
        if (withPayload) {
            commit.u8(1).bytes(new byte[] {1, 0});
        } else {
            commit.u8(0);
        }
        WireWriter msg = new WireWriter();
        msg.raw(MessageEncoder.envelopeHeader(FrameType.MSG_REQUEST));
        msg.raw(MessageEncoder.encodeFrame(new ReqHeader("client-a", 1, "e")));
        msg.u8(FrameType.PUSH_COMMIT).u32(commit.size()).raw(commit.toByteArray());
        msg.u8(0).u32(0);
        return msg.toByteArray();
    }

    // ---------------------------------------------------------------- cross-checks between vector kinds

    /**
     * The row bytes inside the message vectors decode with the segment vectors' column tables and
     * re-encode identically: full rows in {@code COMMIT} and conflict {@code serverRow}s, sparse rows in
     * push payloads (§2.4).
     */
    @TestFactory
    Stream<DynamicTest> rowPayloadsInsideMessages() {
        RowLayout notes = withPk(RowsSegment.decode(bytes(V3.resolve("segment/rows-two-blocks.bin")))
                .columns());
        RowLayout docs = withPk(
                RowsSegment.decode(bytes(V3.resolve("segment/crdt-column.bin"))).columns());
        List<DynamicTest> tests = new ArrayList<>();
        for (String name : List.of(
                "response/commits-incremental",
                "response/commit-crdt-merge",
                "response/push-conflict",
                "request/push-multi-commit",
                "request/combined")) {
            tests.add(dynamicTest(name + " rows", () -> {
                Message m = Renderings.message(Renderings.read(V3.resolve(name + ".json")));
                int rows = 0;
                for (Frame f : m.frames()) {
                    if (f instanceof CommitFrame c) {
                        for (Change ch : c.changes()) {
                            if (ch.row() != null) {
                                RowCodec codec = new RowCodec(
                                        c.tables().get(ch.tableIndex()).equals("docs") ? docs : notes);
                                Object[] row = codec.decode(ch.row());
                                assertEquals(ch.rowId(), row[0]);
                                assertArrayEquals(ch.row(), codec.encode(row));
                                rows++;
                            }
                        }
                    } else if (f instanceof PushResult r) {
                        for (OpResult res : r.results()) {
                            if (res instanceof OpResult.Conflict conflict) {
                                RowCodec codec = new RowCodec(notes);
                                assertArrayEquals(
                                        conflict.serverRow(), codec.encode(codec.decode(conflict.serverRow())));
                                rows++;
                            }
                        }
                    } else if (f instanceof PushCommit pc) {
                        SparseRowCodec codec = new SparseRowCodec(notes);
                        for (PushOperation op : pc.operations()) {
                            if (op.payload() != null) {
                                SparseRow row = codec.decode(op.payload());
                                assertEquals(op.rowId(), row.value(0));
                                assertArrayEquals(op.payload(), codec.encode(row));
                                rows++;
                            }
                        }
                    }
                }
                assertTrue(rows > 0);
                CHECKED.incrementAndGet();
            }));
        }
        return tests.stream();
    }

    private static RowLayout withPk(RowLayout l) {
        return new RowLayout(l.columns(), l.indexOf("id"));
    }

    @TestFactory
    Stream<DynamicTest> scopeDigestOfTheBootstrapVector() {
        return Stream.of(dynamicTest("response/bootstrap-segments scopeDigest (§3.5)", () -> {
            JsonNode json = Renderings.read(V3.resolve("response/bootstrap-segments.json"));
            String expected = json.get("frames").get(2).get("scopeDigest").asText();
            assertEquals(expected, CanonicalJson.scopeDigest(Map.of("project", List.of("p1"))));
            assertEquals(expected, CanonicalJson.scopeDigest(Map.of("project", List.of("p1", "p1"))));
            CHECKED.incrementAndGet();
        }));
    }
}
