package dev.syncular.server.http;

import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.hamcrest.Matchers.notNullValue;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.round.ContentCoding;
import dev.syncular.server.round.RoundResponse;
import dev.syncular.server.round.SyncRound;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.LogCapture;
import dev.syncular.server.testsupport.RawHttp;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.FrameType;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageEncoder;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.ReqHeader;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.restassured.response.ValidatableResponse;
import jakarta.inject.Inject;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

@QuarkusTest
class SyncResourceTest {
    @TestHTTPResource("/")
    URI base;

    @Inject
    SchemaWindow window;

    private static String client() {
        return "client-" + UUID.randomUUID();
    }

    private static ValidatableResponse assertCatalogueError(
            ValidatableResponse r, int status, String code, String category, boolean retryable, String action) {
        return r.statusCode(status)
                .contentType(startsWith("application/json"))
                .body("code", equalTo(code))
                .body("category", equalTo(category))
                .body("retryable", equalTo(retryable))
                .body("recommendedAction", equalTo(action))
                .body("message", notNullValue());
    }

    private static ValidatableResponse invalidRequest(ValidatableResponse r, int status) {
        return assertCatalogueError(r, status, "sync.invalid_request", "invalid-request", false, "fixRequest");
    }

    @Test
    void wrongContentTypeIs415Json() {
        invalidRequest(
                Ssp2.raw()
                        .header("x-actor-id", "alice")
                        .contentType("application/octet-stream")
                        .body(Ssp2.pull(client(), "l1"))
                        .post("/sync")
                        .then(),
                415);
    }

    @Test
    void missingContentTypeIs415Json() {
        invalidRequest(
                Ssp2.raw()
                        .header("x-actor-id", "alice")
                        .body(Ssp2.pull(client(), "l1"))
                        .post("/sync")
                        .then(),
                415);
    }

    @Test
    void unsupportedRequestContentEncodingIs415() {
        invalidRequest(
                Ssp2.raw()
                        .header("x-actor-id", "alice")
                        .contentType(Ssp2.CT)
                        .header("Content-Encoding", "br")
                        .body(Ssp2.pull(client(), "l1"))
                        .post("/sync")
                        .then(),
                415);
    }

    @Test
    void malformedEnvelopeIs400InvalidRequest() {
        invalidRequest(
                Ssp2.raw()
                        .header("x-actor-id", "alice")
                        .contentType(Ssp2.CT)
                        .body("not an SSP2 envelope".getBytes())
                        .post("/sync")
                        .then(),
                400);
    }

    @Test
    void truncatedEnvelopeIs400() {
        byte[] full = Ssp2.pull(client(), "l1");
        invalidRequest(
                Ssp2.raw()
                        .header("x-actor-id", "alice")
                        .contentType(Ssp2.CT)
                        .body(Arrays.copyOf(full, full.length - 5))
                        .post("/sync")
                        .then(),
                400);
    }

    @Test
    void wireVersion1Is400() {
        byte[] body = Ssp2.pull(client(), "l1");
        body[4] = 1; // wireVersion u16 LE
        body[5] = 0;
        invalidRequest(
                Ssp2.raw()
                        .header("x-actor-id", "alice")
                        .contentType(Ssp2.CT)
                        .body(body)
                        .post("/sync")
                        .then(),
                400);
    }

    /**
     * §1.2 / §9: a Syncular client before 0.21.0 writes wire version 2; its 400 {@code sync.invalid_request} says
     * which wire version this server reads and which client releases write it, the request's version in
     * {@code details}.
     */
    @Test
    void wireVersion2ClientIsToldToUpgradeToWire3() {
        byte[] body = Ssp2.pull(client(), "l1");
        body[4] = 2; // wireVersion u16 LE
        body[5] = 0;
        String message = invalidRequest(
                        Ssp2.raw()
                                .header("x-actor-id", "alice")
                                .contentType(Ssp2.CT)
                                .body(body)
                                .post("/sync")
                                .then(),
                        400)
                .body("message", containsString("wire version 3"))
                .body("message", containsString("Syncular clients 0.21.0 and later"))
                .body("details.wireVersion", equalTo(2))
                .body("details.supportedWireVersions", equalTo(List.of(3)))
                .body("details.minimumClientVersion", equalTo("0.21.0"))
                .extract()
                .path("message");
        try {
            assertTrue(
                    Files.readString(Path.of("docs/CLIENTS.md")).contains(message),
                    "docs/CLIENTS.md shows the refusal as sent: " + message);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void emptyCommitIs400EmptyCommit() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(MessageEncoder.envelopeHeader(FrameType.MSG_REQUEST));
        b.writeBytes(MessageEncoder.encodeFrame(new ReqHeader(client(), 1, "epoch")));
        b.writeBytes(MessageEncoder.encodeFrame(new PushCommit("commit-1", List.of())));
        b.writeBytes(new byte[] {0, 0, 0, 0, 0});
        assertCatalogueError(
                Ssp2.raw()
                        .header("x-actor-id", "alice")
                        .contentType(Ssp2.CT)
                        .body(b.toByteArray())
                        .post("/sync")
                        .then(),
                400,
                "sync.empty_commit",
                "invalid-request",
                false,
                "fixRequest");
    }

    @Test
    void missingActorIs401AuthRequired() {
        assertCatalogueError(
                Ssp2.raw()
                        .contentType(Ssp2.CT)
                        .body(Ssp2.pull(client(), "l1"))
                        .post("/sync")
                        .then(),
                401,
                "sync.auth_required",
                "auth-required",
                true,
                "refreshAuth");
    }

    @Test
    void engineRequestLevelErrorIsJsonBeforeAnyBodyByte() {
        // §1.5: the reserved server-command clientId namespace is rejected at request level.
        assertCatalogueError(
                Ssp2.raw()
                        .header("x-actor-id", "alice")
                        .contentType(Ssp2.CT)
                        .body(Ssp2.pull("[\"remote-command\",x", "l1"))
                        .post("/sync")
                        .then(),
                400,
                "sync.invalid_client_id",
                "invalid-request",
                false,
                "resetClientId");
    }

    @Test
    void identityResponseIsAnSsp2Message() {
        Response r = Ssp2.raw()
                .header("x-actor-id", "alice")
                .header("Accept-Encoding", "identity")
                .contentType(Ssp2.CT)
                .body(Ssp2.pull(client(), "l1"))
                .post("/sync");
        r.then()
                .statusCode(200)
                .contentType(startsWith(Ssp2.CT))
                .header("Content-Encoding", nullValue())
                .header("Vary", containsString("Accept-Encoding"));
        assertPullResponse(Ssp2.decodeResponse(r.asByteArray(), null));
    }

    /** A list holding {@code rows} todos with 100-character titles, pushed through {@code POST /sync}. */
    private String listOf(int rows) {
        String list = "big-" + UUID.randomUUID();
        SyncTestClient seeder =
                new SyncTestClient(window.current(), new HttpTransport(base.toString(), null), "alice", client());
        for (int i = 0; i < rows; i++) {
            seeder.upsert(
                    "todos",
                    Map.of(
                            "id",
                            list + "-" + i,
                            "list_id",
                            list,
                            "title",
                            "t".repeat(100),
                            "done",
                            false,
                            "position",
                            (long) i,
                            "updated_at_ms",
                            1L),
                    null);
        }
        seeder.syncUntilIdle();
        return list;
    }

    @Test
    void gzipResponseWhenAccepted() {
        Response r = Ssp2.raw()
                .header("x-actor-id", "alice")
                .header("Accept-Encoding", "gzip")
                .contentType(Ssp2.CT)
                .body(Ssp2.pull(client(), listOf(20)))
                .post("/sync");
        r.then()
                .statusCode(200)
                .contentType(startsWith(Ssp2.CT))
                .header("Content-Encoding", equalTo("gzip"))
                .header("Vary", containsString("Accept-Encoding"));
        assertPullResponse(Ssp2.decodeResponse(r.asByteArray(), "gzip"));
        // a response over 16 KiB is compressed on a worker thread: the same bytes arrive, in order
        Response big = Ssp2.raw()
                .header("x-actor-id", "alice")
                .header("Accept-Encoding", "gzip")
                .contentType(Ssp2.CT)
                .body(Ssp2.pull(client(), listOf(150)))
                .post("/sync");
        big.then().statusCode(200).header("Content-Encoding", equalTo("gzip"));
        byte[] plain = Ssp2.inflate(big.asByteArray(), "gzip");
        assertTrue(plain.length > RoundResponse.OFFLOAD_BYTES, plain.length + " bytes");
        assertPullResponse(Ssp2.decodeResponse(big.asByteArray(), "gzip"));
    }

    /** §1.3 honoured where it pays: a response under 1 KiB goes identity-coded even when gzip is accepted. */
    @Test
    void smallResponsesAreNotCompressed() {
        Response r = Ssp2.raw()
                .header("x-actor-id", "alice")
                .header("Accept-Encoding", "zstd, gzip")
                .contentType(Ssp2.CT)
                .body(Ssp2.pull(client(), "l1"))
                .post("/sync");
        r.then()
                .statusCode(200)
                .header("Content-Encoding", nullValue())
                .header("Vary", containsString("Accept-Encoding"));
        assertTrue(r.asByteArray().length < ContentCoding.MIN_COMPRESSED_BYTES, r.asByteArray().length + " bytes");
        assertPullResponse(Ssp2.decodeResponse(r.asByteArray(), null));
        // unless the client refuses identity
        Ssp2.raw()
                .header("x-actor-id", "alice")
                .header("Accept-Encoding", "gzip, identity;q=0")
                .contentType(Ssp2.CT)
                .body(Ssp2.pull(client(), "l1"))
                .post("/sync")
                .then()
                .statusCode(200)
                .header("Content-Encoding", equalTo("gzip"));
    }

    @Test
    void zstdResponseWhenPreferredOrLarge() {
        String list = listOf(60); // over 4 KiB: zstd on a tie
        Response r = Ssp2.raw()
                .header("x-actor-id", "alice")
                .header("Accept-Encoding", "gzip, zstd")
                .contentType(Ssp2.CT)
                .body(Ssp2.pull(client(), list))
                .post("/sync");
        r.then().statusCode(200).header("Content-Encoding", equalTo("zstd"));
        assertPullResponse(Ssp2.decodeResponse(r.asByteArray(), "zstd"));
        Ssp2.raw()
                .header("x-actor-id", "alice")
                .header("Accept-Encoding", "zstd")
                .contentType(Ssp2.CT)
                .body(Ssp2.pull(client(), listOf(20)))
                .post("/sync")
                .then()
                .statusCode(200)
                .header("Content-Encoding", equalTo("zstd"));
    }

    @Test
    void gzipWinsBelowFourKibOrWithHigherQ() {
        String small = listOf(8); // 1 to 4 KiB: gzip on a tie
        Ssp2.raw()
                .header("x-actor-id", "alice")
                .header("Accept-Encoding", "zstd, gzip")
                .contentType(Ssp2.CT)
                .body(Ssp2.pull(client(), small))
                .post("/sync")
                .then()
                .statusCode(200)
                .header("Content-Encoding", equalTo("gzip"));
        Ssp2.raw()
                .header("x-actor-id", "alice")
                .header("Accept-Encoding", "zstd;q=0.5, gzip;q=0.9")
                .contentType(Ssp2.CT)
                .body(Ssp2.pull(client(), listOf(60)))
                .post("/sync")
                .then()
                .statusCode(200)
                .header("Content-Encoding", equalTo("gzip"));
    }

    @Test
    void gzipRequestBodyIsInflatedAndReachesTheEngine() {
        Response r = Ssp2.raw()
                .header("x-actor-id", "alice")
                .header("Accept-Encoding", "identity")
                .header("Content-Encoding", "gzip")
                .contentType(Ssp2.CT)
                .body(Ssp2.gzip(Ssp2.pull(client(), "l1")))
                .post("/sync");
        r.then().statusCode(200);
        assertPullResponse(Ssp2.decodeResponse(r.asByteArray(), null));
    }

    /**
     * §1.1, §1.3: a request larger than the part decoded on the event loop
     * ({@value SyncRound#INLINE_DECODE_BYTES} bytes) arrives in many chunks and is decoded as they arrive, the rest on
     * a worker; a gzip one is inflated as it arrives. Either way the engine gets the request a whole body was.
     */
    @Test
    void aLargeRequestIsDecodedAsItsChunksArrive() {
        for (String coding : List.of("identity", "gzip")) {
            String list = "chunks-" + UUID.randomUUID();
            SyncTestClient c =
                    new SyncTestClient(window.current(), new HttpTransport(base.toString(), null), "alice", client());
            c.sync(); // learns the log epoch: the next request carries the pushes
            for (int i = 0; i < 400; i++) {
                c.upsert(
                        "todos",
                        Map.of(
                                "id",
                                list + "-" + i,
                                "list_id",
                                list,
                                "title",
                                "t".repeat(300),
                                "done",
                                false,
                                "position",
                                (long) i,
                                "updated_at_ms",
                                1L),
                        null);
            }
            byte[] request = c.buildRequest().encode();
            assertTrue(request.length > 2 * SyncRound.INLINE_DECODE_BYTES, request.length + " bytes");
            Response r = Ssp2.raw()
                    .header("x-actor-id", "alice")
                    .header("Accept-Encoding", "identity")
                    .header("Content-Encoding", coding)
                    .contentType(Ssp2.CT)
                    .body(coding.equals("gzip") ? Ssp2.gzip(request) : request)
                    .post("/sync");
            assertEquals(200, r.statusCode(), coding + ": " + r.asString());
            List<PushResult> results = Ssp2.decodeResponse(r.asByteArray(), null).frames().stream()
                    .filter(f -> f instanceof PushResult)
                    .map(f -> (PushResult) f)
                    .toList();
            assertEquals(400, results.size(), coding);
            assertTrue(results.stream().allMatch(SyncTestClient::applied), coding + ": " + results.get(0));
        }
    }

    @Test
    void corruptGzipRequestBodyIs400() {
        invalidRequest(
                Ssp2.raw()
                        .header("x-actor-id", "alice")
                        .header("Content-Encoding", "gzip")
                        .contentType(Ssp2.CT)
                        .body(Ssp2.pull(client(), "l1"))
                        .post("/sync")
                        .then(),
                400);
    }

    @Test
    void oversizedBodyIs413Json() {
        invalidRequest(
                Ssp2.raw()
                        .header("x-actor-id", "alice")
                        .contentType(Ssp2.CT)
                        .body(oversizedBody())
                        .post("/sync")
                        .then(),
                413);
    }

    @Test
    void oversizedChunkedBodyIs413Json() {
        // no Content-Length (a stream of unknown length goes chunked): the cap applies to the bytes received
        invalidRequest(
                Ssp2.raw()
                        .header("x-actor-id", "alice")
                        .contentType(Ssp2.CT)
                        .body(new ByteArrayInputStream(oversizedBody()))
                        .post("/sync")
                        .then(),
                413);
    }

    /** A valid request's head followed by zeros, one byte over the 16 MiB default cap. */
    private static byte[] oversizedBody() {
        byte[] body = new byte[16 * 1024 * 1024 + 1];
        byte[] head = Ssp2.pull(client(), "l1");
        System.arraycopy(head, 0, body, 0, head.length);
        return body;
    }

    @Test
    void gzipBombIs413Json() {
        byte[] bomb = bomb();
        assertTrue(bomb.length < 100_000);
        invalidRequest(
                Ssp2.raw()
                        .header("x-actor-id", "alice")
                        .header("Content-Encoding", "gzip")
                        .contentType(Ssp2.CT)
                        .body(bomb)
                        .post("/sync")
                        .then(),
                413);
    }

    /**
     * A REQ_HEADER frame declaring a 2 GiB payload, then 17 MiB of zeros, gzipped: decodes as "frame still
     * incomplete" all the way, and inflates past the 16 MiB cap from ~17 KiB on the wire.
     */
    private static byte[] bomb() {
        byte[] inflated = new byte[17 * 1024 * 1024];
        byte[] head = MessageEncoder.envelopeHeader(FrameType.MSG_REQUEST);
        System.arraycopy(head, 0, inflated, 0, head.length);
        inflated[8] = FrameType.REQ_HEADER;
        inflated[9] = (byte) 0xff;
        inflated[10] = (byte) 0xff;
        inflated[11] = (byte) 0xff;
        inflated[12] = (byte) 0x7f;
        return Ssp2.gzip(inflated);
    }

    /** A {@code POST /sync} of {@code body} as {@code alice}, with its length and content coding, on {@code http}. */
    private static void postSync(RawHttp http, byte[] body, String coding) throws IOException {
        http.head(
                "POST",
                "/sync",
                Map.of(
                        "Content-Type",
                        Ssp2.CT,
                        "x-actor-id",
                        "alice",
                        "Content-Encoding",
                        coding,
                        "Content-Length",
                        String.valueOf(body.length)));
        http.write(body);
    }

    @Test
    void aBodyWithBadBytesIsAnsweredOnceItEndedOnAConnectionKeptOpen() throws IOException {
        byte[] garbage = new byte[4 * 1024 * 1024];
        Arrays.fill(garbage, (byte) 'x');
        try (RawHttp http = RawHttp.open("localhost", base.getPort())) {
            for (Object[] bad : new Object[][] {{garbage, "identity", 400}, {bomb(), "gzip", 413}}) {
                byte[] body = (byte[]) bad[0];
                postSync(http, body, (String) bad[1]);
                RawHttp.Answer a = http.read();
                assertEquals((int) bad[2], a.status(), a.body());
                assertTrue(a.body().contains("\"sync.invalid_request\""), a.body());
                assertTrue(
                        !"close".equalsIgnoreCase(a.headers().getOrDefault("connection", "")),
                        bad[1] + ": " + a.headers());
            }
            byte[] pull = Ssp2.pull(client(), "l1");
            postSync(http, pull, "identity");
            assertEquals(200, http.read().status(), "the connection serves the next round");
        }
    }

    @Test
    void internalErrorsNeverLeakTheExceptionText() {
        Ssp2.raw()
                .get("/test-only/boom")
                .then()
                .statusCode(500)
                .contentType(startsWith("application/json"))
                .body("code", equalTo("sync.internal_error"))
                .body("category", equalTo("internal"))
                .body("retryable", equalTo(true))
                .body("recommendedAction", equalTo("retryLater"))
                .body("message", not(containsString(ThrowingTestResource.SECRET)))
                .body(not(containsString(ThrowingTestResource.SECRET)));
    }

    /** Every 5xx answer is logged once, with its stack trace and the request id, which the response carries. */
    @Test
    void everyInternalErrorIsLoggedOnceWithItsRequestId() {
        try (LogCapture log = LogCapture.of(ErrorMapper.class.getName(), Level.INFO, RequestIds.MDC_KEY)) {
            Ssp2.raw()
                    .header("X-Request-Id", "req-17-a")
                    .get("/test-only/boom")
                    .then()
                    .statusCode(500)
                    .header("X-Request-Id", equalTo("req-17-a"));
            String generated = Ssp2.raw()
                    .get("/test-only/boom")
                    .then()
                    .statusCode(500)
                    .extract()
                    .header("X-Request-Id");
            assertTrue(
                    generated != null && generated.length() >= 32, "an id is generated when none came: " + generated);
            for (String id : new String[] {"req-17-a", generated}) {
                List<LogCapture.Line> mine =
                        log.lines.stream().filter(l -> id.equals(l.mdc())).toList();
                assertEquals(1, mine.size(), "logged once: " + id + " " + log.lines);
                assertTrue(
                        mine.get(0).message().contains(id)
                                && mine.get(0).message().contains("sync.internal_error"),
                        mine.get(0).message());
                assertInstanceOf(IllegalStateException.class, mine.get(0).thrown(), "with its stack trace");
            }
        }
    }

    /**
     * A transient storage failure is not a 500: lock timeouts and a full connection pool answer 429
     * {@code sync.rate_limited} (retryable) with {@code Retry-After} and the reason in the details (§10.2 mapping).
     */
    @Test
    void transientStorageFailuresAreRateLimited() {
        for (String[] c : new String[][] {
            {"/test-only/lock-timeout", "lock_timeout"}, {"/test-only/pool-busy", "pool_wait_queue_full"}
        }) {
            Ssp2.raw()
                    .get(c[0])
                    .then()
                    .statusCode(429)
                    .header("Retry-After", equalTo("1"))
                    .contentType(startsWith("application/json"))
                    .body("code", equalTo("sync.rate_limited"))
                    .body("retryable", equalTo(true))
                    .body("recommendedAction", equalTo("retryLater"))
                    .body("details.reason", equalTo(c[1]))
                    .body("details.retryAfterMs", equalTo(1000));
        }
    }

    @Test
    void unknownRouteIsJsonNotFound() {
        Ssp2.raw()
                .get("/no-such-route")
                .then()
                .statusCode(404)
                .contentType(startsWith("application/json"))
                .body("code", equalTo("sync.not_found"));
    }

    @Test
    void healthStaysAtItsUsualPlace() {
        Ssp2.raw().get("/q/health/live").then().statusCode(200);
    }

    private static void assertPullResponse(Message m) {
        assertEquals(FrameType.MSG_RESPONSE, m.msgKind());
        assertInstanceOf(RespHeader.class, m.frames().get(0));
        assertTrue(m.frames().stream().anyMatch(f -> f instanceof SubStart), "SUB_START present: " + m.frames());
        assertTrue(m.frames().stream().anyMatch(f -> f instanceof SubEnd), "SUB_END present: " + m.frames());
    }
}
