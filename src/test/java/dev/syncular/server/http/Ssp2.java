package dev.syncular.server.http;

import com.github.luben.zstd.ZstdInputStream;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.MessageEncoder;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.ReqHeader;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.SubscriptionFrame;
import io.restassured.RestAssured;
import io.restassured.config.DecoderConfig;
import io.restassured.config.RestAssuredConfig;
import io.restassured.specification.RequestSpecification;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/** Test helpers: SSP2 request bodies, raw (undecoded) REST-assured requests, body decoding. */
public final class Ssp2 {
    static final String CT = "application/vnd.syncular.sync.v2";

    private Ssp2() {}

    /** REST-assured without transparent decompression, so tests see the bytes and Content-Encoding on the wire. */
    static RequestSpecification raw() {
        return RestAssured.given()
                .config(RestAssuredConfig.config()
                        .decoderConfig(DecoderConfig.decoderConfig().noContentDecoders()));
    }

    /** A pull of the quickstart {@code todos} table for one list, in the partition's live log epoch. */
    static byte[] pull(String clientId, String listId) {
        return pull(clientId, listId, logEpoch());
    }

    static byte[] pull(String clientId, String listId, String logEpoch) {
        List<Frame> frames = new ArrayList<>();
        frames.add(new ReqHeader(clientId, 1, logEpoch));
        frames.add(new PullHeader(100, 1000, 1, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS));
        frames.add(new SubscriptionFrame("sub-1", "todos", Map.of("list_id", List.of(listId)), null, -1, null));
        return MessageEncoder.encode(Message.request(frames));
    }

    /** §2.1 epoch acquisition: a request without {@code logEpoch}; the response header names the live epoch. */
    static String logEpoch() {
        byte[] req = MessageEncoder.encode(Message.request(List.of(
                new ReqHeader("epoch-probe", 1, null),
                new PullHeader(1, 1, 1, PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS))));
        byte[] body = raw().header("x-actor-id", "alice")
                .header("Accept-Encoding", "identity")
                .contentType(CT)
                .body(req)
                .post("/sync")
                .then()
                .statusCode(200)
                .extract()
                .asByteArray();
        return ((RespHeader) MessageDecoder.decodeResponse(body).frames().get(0)).logEpoch();
    }

    public static Message decodeResponse(byte[] body, String contentEncoding) {
        return MessageDecoder.decodeResponse(inflate(body, contentEncoding));
    }

    public static byte[] inflate(byte[] body, String contentEncoding) {
        try {
            InputStream in;
            if (contentEncoding == null) {
                return body;
            } else if (contentEncoding.equals("gzip")) {
                in = new GZIPInputStream(new ByteArrayInputStream(body));
            } else if (contentEncoding.equals("zstd")) {
                in = new ZstdInputStream(new ByteArrayInputStream(body));
            } else {
                throw new AssertionError("unexpected Content-Encoding " + contentEncoding);
            }
            try (in) {
                return in.readAllBytes();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] gzip(byte[] bytes) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }
}
