package dev.syncular.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.wire.ErrorFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageEncoder;
import dev.syncular.server.wire.RespHeader;
import io.vertx.core.buffer.Buffer;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
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
    void identityIsTheCanonicalEncodingOneChunkPerFrame() {
        List<Frame> frames = List.of(new RespHeader(null, null, "epoch", true));
        List<Integer> chunks = new ArrayList<>();
        byte[] body = collect(frames, ContentCoding.IDENTITY, chunks);
        assertEquals(List.of(8, MessageEncoder.encodeFrame(frames.get(0)).length, 5), chunks);
        assertEquals(HexFormat.of().formatHex(MessageEncoder.encode(Message.response(frames))),
                HexFormat.of().formatHex(body));
    }

    @Test
    void compressedBodiesDecodeToTheSameMessage() {
        List<Frame> frames = List.of(new RespHeader(null, null, "epoch", true));
        byte[] plain = MessageEncoder.encode(Message.response(frames));
        for (ContentCoding c : List.of(ContentCoding.GZIP, ContentCoding.ZSTD)) {
            byte[] body = collect(frames, c, new ArrayList<>());
            assertEquals(HexFormat.of().formatHex(plain),
                    HexFormat.of().formatHex(Ssp2.inflate(body, c.token)));
        }
    }

    @Test
    void aFrameTheGrammarForbidsBecomesAnInBandError() {
        // Two RESP_HEADERs: the encoder refuses the second after the first went out.
        List<Frame> frames = List.of(new RespHeader(null, null, "epoch", false), new RespHeader(null, null, "epoch", false));
        Message m = Ssp2.decodeResponse(collect(frames, ContentCoding.IDENTITY, new ArrayList<>()), null);
        assertEquals(2, m.frames().size());
        ErrorFrame e = assertInstanceOf(ErrorFrame.class, m.frames().get(1));
        assertEquals("sync.internal_error", e.code());
        assertEquals("internal server error", e.message());
    }
}
