package dev.syncular.server.round;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.http.Ssp2;
import dev.syncular.server.wire.ErrorFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageEncoder;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionStatus;
import io.vertx.core.buffer.Buffer;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResponseBodyTest {

    private static byte[] collect(List<Frame> frames, ContentCoding coding, List<Integer> chunkSizes) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Buffer b : ResponseBody.of(frames, coding)) {
            assertTrue(b.length() > 0, "no empty chunks");
            chunkSizes.add(b.length());
            out.writeBytes(b.getBytes());
        }
        return out.toByteArray();
    }

    @Test
    void aSmallResponseIsOneChunkOfTheCanonicalEncoding() {
        List<Frame> frames = List.of(new RespHeader(null, null, "epoch", true));
        List<Integer> chunks = new ArrayList<>();
        byte[] body = collect(frames, ContentCoding.IDENTITY, chunks);
        assertEquals(List.of(8 + MessageEncoder.encodeFrame(frames.get(0)).length + 5), chunks);
        assertEquals(
                HexFormat.of().formatHex(MessageEncoder.encode(Message.response(frames))),
                HexFormat.of().formatHex(body));
    }

    @Test
    void aLargeResponseLeavesInBoundedChunks() {
        // §1.2 envelope, §1.4 frames: RESP_HEADER, SUB_START, 40 inline segments of 4 KiB, SUB_END.
        List<Frame> frames = new ArrayList<>();
        frames.add(new RespHeader(null, null, "epoch", false));
        frames.add(new SubStart("s1", SubscriptionStatus.ACTIVE, "", Map.of(), false));
        for (int i = 0; i < 40; i++) {
            frames.add(new SegmentInline(new byte[4096]));
        }
        frames.add(new SubEnd(5, null));
        List<Integer> chunks = new ArrayList<>();
        byte[] body = collect(frames, ContentCoding.IDENTITY, chunks);
        assertEquals(
                HexFormat.of().formatHex(MessageEncoder.encode(Message.response(frames))),
                HexFormat.of().formatHex(body));
        assertTrue(chunks.size() >= 4, "several chunks: " + chunks);
        for (int i = 0; i < chunks.size(); i++) {
            int size = chunks.get(i);
            assertTrue(size < ResponseBody.CHUNK_BYTES + 4096 + 64, "bounded: " + chunks);
            assertTrue(i == chunks.size() - 1 || size >= ResponseBody.CHUNK_BYTES, "only the last is short: " + chunks);
        }
    }

    @Test
    void compressedBodiesDecodeToTheSameMessage() {
        List<Frame> frames = List.of(new RespHeader(null, null, "epoch", true));
        byte[] plain = MessageEncoder.encode(Message.response(frames));
        for (ContentCoding c : List.of(ContentCoding.GZIP, ContentCoding.ZSTD)) {
            byte[] body = collect(frames, c, new ArrayList<>());
            assertEquals(HexFormat.of().formatHex(plain), HexFormat.of().formatHex(Ssp2.inflate(body, c.token)));
        }
    }

    @Test
    void aFrameTheGrammarForbidsBecomesAnInBandError() {
        // Two RESP_HEADERs: the encoder refuses the second after the first went out.
        List<Frame> frames =
                List.of(new RespHeader(null, null, "epoch", false), new RespHeader(null, null, "epoch", false));
        Message m = Ssp2.decodeResponse(collect(frames, ContentCoding.IDENTITY, new ArrayList<>()), null);
        assertEquals(2, m.frames().size());
        ErrorFrame e = assertInstanceOf(ErrorFrame.class, m.frames().get(1));
        assertEquals("sync.internal_error", e.code());
        assertEquals("internal server error", e.message());
    }
}
