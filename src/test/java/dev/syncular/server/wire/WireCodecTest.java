package dev.syncular.server.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Rules of the Conventions, §1.2, §1.5–§1.7, §2.4, §5.2 and §11.2 that the golden vectors do not pin. */
class WireCodecTest {
    private static final ReqHeader HEADER = new ReqHeader("client-a", 1, "epoch-1");
    private static final PullHeader PULL = new PullHeader(0, 0, 0, 3);
    private static final SubscriptionFrame SUB =
            new SubscriptionFrame("s1", "notes", Map.of("project", List.of("p1")), null, -1, null);
    private static final RespHeader RESP = new RespHeader(null, null, "epoch-1", false);
    private static final SubStart START = new SubStart("s1", SubscriptionStatus.ACTIVE, "", Map.of(), false);
    private static final SubEnd END = new SubEnd(5, null);

    /** Frames assembled by hand, bypassing the encoder's own grammar checks. */
    private static byte[] raw(int kind, Frame... frames) {
        WireWriter w = new WireWriter();
        w.raw(MessageEncoder.envelopeHeader(kind));
        for (Frame f : frames) {
            w.raw(MessageEncoder.encodeFrame(f));
        }
        w.u8(0).u32(0);
        return w.toByteArray();
    }

    private static void invalid(byte[] bytes) {
        invalid(WireException.INVALID_REQUEST, bytes);
    }

    private static void invalid(String code, byte[] bytes) {
        WireException e = assertThrows(WireException.class, () -> MessageDecoder.decode(bytes));
        assertEquals(code, e.code());
    }

    private static CommitFrame commit(long seq) {
        return new CommitFrame(
                seq,
                1,
                "actor",
                List.of("notes"),
                List.of(new Change(0, "r", Op.DELETE, null, Map.of("project", "p1"), null)));
    }

    @Test
    void requestGrammar() {
        // §1.5 productions and the no-content rule.
        MessageDecoder.decode(raw(1, HEADER, PULL, SUB));
        invalid(raw(1, HEADER));
        invalid(raw(1, PULL, HEADER));
        invalid(raw(1, HEADER, PULL, PULL));
        invalid(raw(1, HEADER, SUB));
        invalid(raw(1, HEADER, HEADER, PULL));
        PushCommit push = new PushCommit("c1", List.of(new PushOperation("notes", "r", Op.DELETE, null, null)));
        MessageDecoder.decode(raw(1, HEADER, push, push, PULL));
        invalid(raw(1, HEADER, PULL, push));
        // A frame registered for the other message kind is not unknown (§1.2 rule 2).
        invalid(raw(1, HEADER, PULL, START));
        // An unknown frame may not come first, but may stand between header and END.
        invalid(raw(1, new UnknownFrame(0x17, new byte[0]), HEADER, PULL));
        MessageDecoder.decode(raw(1, HEADER, new UnknownFrame(0x2f, new byte[] {1}), PULL));
    }

    @Test
    void responseGrammar() {
        MessageDecoder.decode(raw(2, RESP, new Lease("l", 5), START, commit(4), END));
        invalid(raw(2, RESP, START, new Lease("l", 5), END));
        invalid(raw(2, RESP, new Lease("l", 5), new Lease("l", 6)));
        // Subscription sections never nest; body frames need an open section.
        invalid(raw(2, RESP, START, START, END, END));
        invalid(raw(2, RESP, commit(4)));
        invalid(raw(2, RESP, END));
        invalid(raw(2, RESP, START));
        // COMMIT and segment frames never mix in one section, in either order (§1.6).
        SegmentRef ref = new SegmentRef("sha256:00", MediaType.ROWS, "notes", 1, 1, 4, "d", null, null, null, null);
        invalid(raw(2, RESP, START, commit(4), ref, END));
        invalid(raw(2, RESP, START, ref, commit(4), END));
        MessageDecoder.decode(raw(2, RESP, START, ref, END, START, commit(4), END));
        // PUSH_RESULTs precede subscriptions.
        PushResult applied = new PushResult("c1", CommitStatus.APPLIED, 3L, List.of(new OpResult.Applied(0)));
        invalid(raw(2, RESP, START, END, applied));
        // ERROR: anything after it but END is a decode error, unknown frames included.
        ErrorFrame err = new ErrorFrame("sync.internal_error", "m", "internal", true, "retryLater", null);
        MessageDecoder.decode(raw(2, RESP, START, err));
        invalid(raw(2, RESP, err, new UnknownFrame(0x20, new byte[0])));
        invalid(raw(2, RESP, err, START));
    }

    @Test
    void pushResultDetailsFollowTheirRejectedResult() {
        PushResult rejected = new PushResult(
                "c1",
                CommitStatus.REJECTED,
                null,
                List.of(new OpResult.Error(0, "sync.reference_violation", "m", false)));
        PushResultDetails details =
                new PushResultDetails("c1", List.of(new PushResultDetails.Entry(0, "{\"reason\":\"missing_parent\"}")));
        Message m = MessageDecoder.decode(raw(2, RESP, rejected, details));
        assertEquals(3, m.frames().size());
        invalid(raw(2, RESP, details));
        invalid(raw(2, RESP, rejected, new PushResultDetails("c2", details.entries())));
        for (String bad : List.of(
                "{}",
                "{\"reason\":\"Bad Token\"}",
                "{\"other\":1}",
                "[1]",
                "{\"fieldPaths\":[]}",
                "{\"fieldPaths\":[\"a..b\"]}",
                "{\"reason\":\"a\",\"reason\":\"b\"}",
                "{\"references\":{\"k\":\" padded \"}}")) {
            invalid(raw(2, RESP, rejected, new PushResultDetails("c1", List.of(new PushResultDetails.Entry(0, bad)))));
        }
    }

    @Test
    void envelopeRules() {
        byte[] ok = raw(1, HEADER, PULL);
        MessageDecoder.decode(ok);
        // END with a non-zero length, bytes after END.
        byte[] endLen = ok.clone();
        endLen[endLen.length - 4] = 1;
        invalid(endLen);
        byte[] trailing = Arrays.copyOf(ok, ok.length + 1);
        invalid(trailing);
        // Trailing bytes inside a known frame (§1.2 rule 3).
        WireWriter w = new WireWriter();
        w.raw(MessageEncoder.envelopeHeader(1)).raw(MessageEncoder.encodeFrame(HEADER));
        w.u8(FrameType.PULL_HEADER).u32(14).i32(0).i32(0).i32(0).u8(3).u8(0);
        w.u8(0).u32(0);
        invalid(w.toByteArray());
        // Wire versions 1 and 2 are rejected before frames are read (§9); msgKind must be known.
        for (int version : new int[] {1, 2, 4}) {
            byte[] b = ok.clone();
            b[4] = (byte) version;
            invalid(b);
        }
        byte[] kind = ok.clone();
        kind[6] = 3;
        invalid(kind);
        assertThrows(WireException.class, () -> MessageDecoder.decodeResponse(ok));
    }

    @Test
    void fieldConstraintsOfSection17() {
        invalid(raw(1, new ReqHeader("", 1, null), PULL));
        invalid(raw(1, new ReqHeader("c", 0, null), PULL));
        invalid(raw(1, HEADER, new PullHeader(0, 0, 0, 0x13)));
        invalid(WireException.EMPTY_COMMIT, raw(1, HEADER, new PushCommit("c1", List.of())));
        invalid(raw(1, HEADER, new PushCommit("", List.of(new PushOperation("t", "r", Op.DELETE, null, null)))));
        CommitFrame outOfRange =
                new CommitFrame(1, 1, "a", List.of(), List.of(new Change(0, "r", Op.DELETE, null, Map.of(), null)));
        WireWriter w = new WireWriter();
        w.raw(MessageEncoder.envelopeHeader(2))
                .raw(MessageEncoder.encodeFrame(RESP))
                .raw(MessageEncoder.encodeFrame(START));
        WireWriter payload = new WireWriter();
        payload.i64(1)
                .i64(1)
                .str("a")
                .u32(0)
                .u32(1)
                .u16(0)
                .str("r")
                .u8(2)
                .u8(0)
                .u32(0)
                .u8(0);
        w.u8(FrameType.COMMIT).u32(payload.size()).raw(payload.toByteArray()).raw(MessageEncoder.encodeFrame(END));
        w.u8(0).u32(0);
        invalid(w.toByteArray());
        assertThrows(IllegalArgumentException.class, () -> MessageEncoder.encodeFrame(outOfRange));
        // The url / urlExpiresAtMs tie, and a SEGMENT_INLINE that is not a rows segment.
        WireWriter seg = new WireWriter();
        seg.str("sha256:00")
                .u8(1)
                .str("t")
                .i64(1)
                .i64(1)
                .i64(1)
                .str("d")
                .u8(0)
                .u8(0)
                .u8(1)
                .str("https://x")
                .u8(0);
        WireWriter m = new WireWriter();
        m.raw(MessageEncoder.envelopeHeader(2))
                .raw(MessageEncoder.encodeFrame(RESP))
                .raw(MessageEncoder.encodeFrame(START));
        m.u8(FrameType.SEGMENT_REF)
                .u32(seg.size())
                .raw(seg.toByteArray())
                .raw(MessageEncoder.encodeFrame(END))
                .u8(0)
                .u32(0);
        invalid(m.toByteArray());
        invalid(raw(2, RESP, START, new SegmentInline(new byte[] {1, 2, 3}), END));
    }

    @Test
    void primitives() {
        // i64 beyond ±(2^53−1) is rejected by readers and refused by writers.
        WireWriter w = new WireWriter();
        w.rawI64(1L << 53);
        assertThrows(WireException.class, () -> new WireReader(w.toByteArray()).i64());
        assertThrows(IllegalArgumentException.class, () -> new WireWriter().i64(1L << 53));
        assertEquals(
                -WireReader.MAX_SAFE_INTEGER,
                new WireReader(new WireWriter()
                                .i64(-WireReader.MAX_SAFE_INTEGER)
                                .toByteArray())
                        .i64());
        // Strict bool and option bytes.
        assertThrows(WireException.class, () -> new WireReader(new byte[] {2}).bool());
        assertThrows(WireException.class, () -> new WireReader(new byte[] {2}).present());
        // Ill-formed UTF-8: overlong, surrogate, truncated, out of range.
        for (byte[] bad : new byte[][] {
            {(byte) 0xc0, (byte) 0x80},
            {(byte) 0xed, (byte) 0xa0, (byte) 0x80},
            {(byte) 0xe2, (byte) 0x82},
            {(byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80},
            {(byte) 0xff}
        }) {
            byte[] s = new WireWriter().bytes(bad).toByteArray();
            assertThrows(WireException.class, () -> new WireReader(s).str());
        }
        String text = "déjà 𝄞 \uE000";
        assertEquals(text, new WireReader(new WireWriter().str(text).toByteArray()).str());
        assertThrows(IllegalArgumentException.class, () -> new WireWriter().str("\uD800x"));
    }

    /**
     * Conventions {@code str}: a u32 byte length, then UTF-8. An all-ASCII string is copied in bulk, any other char
     * (from U+0080 on, wherever it stands) takes the per-char encoding: both give exactly the JDK's UTF-8 bytes.
     */
    @Test
    void strIsUtf8WhetherAsciiOrNot() {
        for (String text : List.of(
                "",
                "a",
                "\u007f",
                "id-42_~.:",
                "abc\u0080",
                "\u00e9t\u00e9",
                "\u20ac10",
                "x".repeat(300) + "\u0100",
                "\uD834\uDD1E tail")) {
            byte[] expected = text.getBytes(StandardCharsets.UTF_8);
            byte[] out = new WireWriter().str(text).toByteArray();
            assertEquals(expected.length, (out[0] & 0xff) | (out[1] & 0xff) << 8 | (out[2] & 0xff) << 16, text);
            assertArrayEquals(expected, Arrays.copyOfRange(out, 4, out.length), text);
            assertEquals(text, new WireReader(out).str());
        }
    }

    @Test
    void mapKeysInUtf16CodeUnitOrder() {
        // U+E000 sorts after U+1D11E in UTF-8 bytes but before it in UTF-16 code units (Conventions).
        String bmp = "\uE000";
        String astral = "𝄞";
        byte[] encoded =
                new WireWriter().scopeValueMap(Map.of(bmp, "a", astral, "b")).toByteArray();
        Map<String, String> decoded = new WireReader(encoded).scopeValueMap();
        assertEquals(List.of(astral, bmp), new ArrayList<>(decoded.keySet()));
        WireWriter reversed = new WireWriter();
        reversed.u32(2).str(bmp).str("a").str(astral).str("b");
        assertThrows(WireException.class, () -> new WireReader(reversed.toByteArray()).scopeValueMap());
        WireWriter dup = new WireWriter();
        dup.u32(2).str("k").str("a").str("k").str("b");
        assertThrows(WireException.class, () -> new WireReader(dup.toByteArray()).scopeValueMap());
    }

    @Test
    void jsonFieldsValidatedAndPreservedVerbatim() {
        for (String ok : List.of(
                "true",
                "7",
                "\"x\"",
                "null",
                " { \"a\" : [1, -2.5e3, {}] } ",
                "[[[[]]]]",
                "\"\\u00e9\\n\"",
                "-0",
                "0.5")) {
            assertTrue(JsonText.isDocument(ok), ok);
        }
        for (String bad : List.of(
                "",
                "{",
                "[1,]",
                "{\"a\":1,}",
                "01",
                "1.",
                ".5",
                "+1",
                "'x'",
                "\"\t\"",
                "nul",
                "1 2",
                "{\"a\"}",
                "[1}",
                "\"\\x\"",
                "NaN")) {
            assertFalse(JsonText.isDocument(bad), bad);
        }
        String deep = "[".repeat(100_000) + "]".repeat(100_000);
        assertTrue(JsonText.isDocument(deep));
        String params = "{ \"keep\" :  \"spacing\" }";
        SubscriptionFrame sub = new SubscriptionFrame("s", "t", Map.of(), params, -1, null);
        Message m = MessageDecoder.decode(raw(1, HEADER, PULL, sub));
        assertEquals(params, ((SubscriptionFrame) m.frames().get(2)).params());
        invalid(raw(1, HEADER, PULL, new SubscriptionFrame("s", "t", Map.of(), "{bad", -1, null)));
    }

    @Test
    void rowCodecRules() {
        RowLayout layout = new RowLayout(
                List.of(
                        new ColumnDef("id", ColumnType.STRING, false),
                        new ColumnDef("n", ColumnType.INTEGER, true),
                        new ColumnDef("ref", ColumnType.BLOB_REF, true)),
                0);
        RowCodec codec = new RowCodec(layout);
        String blob = "{\"blobId\":\"sha256:" + "a".repeat(64) + "\",\"byteLength\":3,\"name\":\"x.png\"}";
        byte[] row = codec.encode(new Object[] {"r1", null, blob});
        assertArrayEquals(row, codec.encode(codec.decode(row)));
        // A set padding bit, a null for a non-nullable column.
        byte[] padding = row.clone();
        padding[0] |= (byte) 0x80;
        assertThrows(WireException.class, () -> codec.decode(padding));
        byte[] pkNull = row.clone();
        pkNull[0] |= 1;
        assertThrows(WireException.class, () -> codec.decode(pkNull));
        // blob_ref shape (§5.9.1): key order, whitespace, unknown keys, bad id.
        for (String bad : List.of(
                "{\"byteLength\":3,\"blobId\":\"sha256:" + "a".repeat(64) + "\"}",
                "{\"blobId\": \"sha256:" + "a".repeat(64) + "\",\"byteLength\":3}",
                "{\"blobId\":\"sha256:" + "a".repeat(64) + "\",\"byteLength\":3,\"x\":1}",
                "{\"blobId\":\"sha256:" + "A".repeat(64) + "\",\"byteLength\":3}",
                "{\"blobId\":\"sha256:" + "a".repeat(64) + "\",\"byteLength\":-1}",
                "{\"blobId\":\"sha256:" + "a".repeat(64) + "\",\"byteLength\":1.5}")) {
            byte[] b = codec.encode(new Object[] {"r1", null, bad});
            assertThrows(WireException.class, () -> codec.decode(b), bad);
        }
        assertThrows(IllegalArgumentException.class, () -> codec.encode(new Object[] {null, 1L, null}));
        assertThrows(IllegalArgumentException.class, () -> codec.encode(new Object[] {"r", "not a long", null}));
    }

    @Test
    void segmentWriterBlocksAndStreams() {
        RowLayout layout = RowLayout.of(List.of(new ColumnDef("id", ColumnType.STRING, false)));
        WireWriter out = new WireWriter();
        RowsSegmentWriter w = new RowsSegmentWriter("t", 1, layout, out::raw);
        for (int i = 0; i < 2500; i++) {
            w.addRow(i + 1, new Object[] {"row-" + i});
        }
        w.finish();
        RowsSegment seg = RowsSegment.decode(out.toByteArray());
        assertEquals(
                List.of(1000, 1000, 500), seg.blocks().stream().map(List::size).toList());
        assertArrayEquals(out.toByteArray(), seg.encode());
        byte[] truncated = Arrays.copyOf(out.toByteArray(), out.size() - 4);
        assertThrows(WireException.class, () -> RowsSegment.decode(truncated));
        assertThrows(IllegalStateException.class, () -> w.addRow(1, new Object[] {"x"}));
        RowsSegmentWriter fresh = new RowsSegmentWriter("t", 1, layout, new WireWriter()::raw);
        assertThrows(IllegalArgumentException.class, () -> fresh.addRow(0, new Object[] {"x"}));
    }

    @Test
    void encoderRefusesWhatDecodersReject() {
        assertThrows(IllegalArgumentException.class, () -> new UnknownFrame(FrameType.COMMIT, new byte[0]));
        assertThrows(
                IllegalStateException.class,
                () -> Message.request(List.of(HEADER)).encode());
        assertThrows(
                IllegalStateException.class,
                () -> Message.response(List.of(RESP, commit(1))).encode());
        assertThrows(
                IllegalArgumentException.class,
                () -> new PushResult("c", CommitStatus.REJECTED, 4L, List.of()).writePayload(new WireWriter()));
    }

    @Test
    void canonicalJsonAndNumbers() {
        assertEquals(
                "{\"a\":[\"x\",\"y\"],\"b\":[]}",
                CanonicalJson.write(
                        CanonicalJson.canonicalScopes(Map.of("b", List.of(), "a", List.of("y", "x", "y")))));
        assertEquals("\"\\u0001\\n\\\"é\\ud800\"", CanonicalJson.write("\u0001\n\"é\uD800"));
        assertEquals("0.1", JsNumber.json(0.1));
        assertEquals("100", JsNumber.json(100.0));
        assertEquals("1e+21", JsNumber.json(1e21));
        assertEquals("123456789012345680000", JsNumber.json(123456789012345678901.0));
        assertEquals("1e-7", JsNumber.json(1e-7));
        assertEquals("0.000001", JsNumber.json(1e-6));
        assertEquals("-1.5", JsNumber.json(-1.5));
        assertEquals("5e-324", JsNumber.json(Double.MIN_VALUE));
        assertEquals("1.7976931348623157e+308", JsNumber.json(Double.MAX_VALUE));
        assertEquals(64, CanonicalJson.scopeDigest(Map.of("p", List.of("1"))).length());
        assertEquals(
                "{\"k\":\"v\"}".getBytes(StandardCharsets.UTF_8).length,
                CanonicalJson.write(Map.of("k", "v")).length());
    }

    /** §11.1: the debug rendering's text prints float values as JavaScript does, not as Java's Double.toString. */
    @Test
    void debugJsonTextPrintsNumbersAsJavaScript() {
        ArrayNode a = JsonNodeFactory.instance.arrayNode();
        for (double d : new double[] {2.0, 12345678.5, 1e21, 1e-7, 0.000001, -0.0, 2.5e-5, Double.MIN_VALUE, 1e23}) {
            a.add(DebugJson.value(ColumnType.FLOAT, d));
        }
        a.add(DebugJson.value(ColumnType.FLOAT, Double.NaN));
        a.add(JsonNodeFactory.instance.numberNode(Double.POSITIVE_INFINITY));
        assertEquals(
                "[ 2, 12345678.5, 1e+21, 1e-7, 0.000001, 0, 0.000025, 5e-324, 1e+23, null, null ]",
                DebugJson.toText(a));
        assertEquals(
                "{\n  \"a\" : 1.5,\n  \"b\" : \"x\"\n}",
                DebugJson.toText(
                        JsonNodeFactory.instance.objectNode().put("a", 1.5).put("b", "x")));
    }

    /**
     * A frame that grew the streaming decoder's buffer to megabytes is decoded out of it (its payload copied), and
     * the buffer is let go at once: a round holding a 15 MiB row must not hold it twice until the round ends
     * (HostileMemoryIT, 16 parallel gzip pushes on a 192 MB heap). While it arrives, the buffer doubles no further
     * than the frame's declared end. The next frames decode as before.
     */
    @Test
    void aLargeFramesBufferIsLetGoOnceTheFrameIsDecoded() {
        byte[] payload = new byte[3 * 1024 * 1024];
        Arrays.fill(payload, (byte) 7);
        PushCommit big = new PushCommit("c1", List.of(new PushOperation("notes", "r", Op.UPSERT, null, payload)));
        byte[] message = raw(1, HEADER, big, PULL, SUB);
        MessageDecoder d = MessageDecoder.forRequests();
        List<Frame> frames = new ArrayList<>();
        int bigEnd = MessageEncoder.envelopeHeader(1).length
                + MessageEncoder.encodeFrame(HEADER).length
                + MessageEncoder.encodeFrame(big).length;
        for (int p = 0; p < message.length; p += 64 * 1024) {
            int len = Math.min(64 * 1024, message.length - p);
            frames.addAll(d.feed(Arrays.copyOfRange(message, p, p + len)));
            if (p + len >= bigEnd) {
                assertTrue(
                        d.heldBytes() <= MessageDecoder.RETAINED_BUFFER_BYTES,
                        "held " + d.heldBytes() + " bytes after the large frame was decoded");
            } else if (p + len > 2 * 1024 * 1024) {
                assertTrue(d.heldBytes() > 2 * 1024 * 1024, "the partial frame is buffered");
            }
            assertTrue(
                    d.heldBytes() <= MessageEncoder.encodeFrame(big).length,
                    "the buffer grows to the partial frame's end, not past it: " + d.heldBytes());
        }
        d.finish();
        assertEquals(4, frames.size());
        assertArrayEquals(
                payload, ((PushCommit) frames.get(1)).operations().get(0).payload());
        assertEquals(SUB, frames.get(3));
    }
}
