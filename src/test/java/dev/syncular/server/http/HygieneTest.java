package dev.syncular.server.http;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.testsupport.LogCapture;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.RawHttp;
import io.quarkus.test.junit.QuarkusTest;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * Hygiene under hostile input (issue #26, item 7) through the running app: a body over the server-wide backstop
 * is 413 §10.1 JSON on any path; metrics and OpenAPI are not on the API port; a refusal on an arbitrary path adds
 * no series named after that path; a socket whose peer vanishes is one DEBUG line without a stack trace and a
 * counted disconnect.
 */
@QuarkusTest
class HygieneTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(30);

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private RawHttp.Answer send(String raw) throws IOException {
        try (RawHttp http = RawHttp.open("localhost", port)) {
            http.write(raw.getBytes(StandardCharsets.ISO_8859_1));
            return http.read();
        }
    }

    /** Over {@code quarkus.http.limits.max-body-size} (128M), on a route and on no route: 413 JSON, nothing read. */
    @Test
    void aBodyOverTheServerBackstopIs413Json() throws IOException {
        for (String path : List.of("/sync", "/nowhere/" + UUID.randomUUID(), "/blobs/x")) {
            RawHttp.Answer a = send("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
                    + SyncResource.CONTENT_TYPE + "\r\nContent-Length: 200000000\r\n\r\n");
            assertEquals(413, a.status(), path + ": " + a.body());
            assertTrue(
                    a.headers().getOrDefault("content-type", "").startsWith("application/json"),
                    a.headers().toString());
            JsonNode n = JSON.readTree(a.body());
            assertEquals("sync.invalid_request", n.path("code").asText(), a.body());
            assertEquals("fixRequest", n.path("recommendedAction").asText(), a.body());
            assertEquals("close", a.headers().get("connection"));
        }
    }

    /** {@code /q/metrics} and {@code /q/openapi} answer only on the management interface; health stays for probes. */
    @Test
    void metricsAndOpenApiAreNotOnTheApiPort() {
        given().get("/q/metrics").then().statusCode(404);
        given().get("/q/openapi").then().statusCode(404);
        given().get("/q/health/live").then().statusCode(200);
        int management = PrometheusScrape.managementTestPort();
        given().port(management).get("/q/metrics").then().statusCode(200);
        given().port(management).get("/q/openapi?format=json").then().statusCode(200);
    }

    /**
     * A 431 (headers over {@code quarkus.http.limits.max-header-size}) on a random path, answered by the HTTP codec
     * before any route: its {@code uri} tag is {@code UNKNOWN}, never the path.
     */
    @Test
    void aRefusalOnARandomPathCreatesNoSeriesNamedAfterIt() throws IOException {
        String marker = "h" + UUID.randomUUID().toString().replace("-", "");
        RawHttp.Answer a =
                send("GET /" + marker + " HTTP/1.1\r\nHost: localhost\r\nX-Big: " + "x".repeat(30_000) + "\r\n\r\n");
        assertEquals(431, a.status());
        given().get("/" + marker + "/404").then().statusCode(404); // a routed miss: NOT_FOUND
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            PrometheusScrape scrape = PrometheusScrape.scrape();
            boolean counted = scrape.samples.stream()
                    .anyMatch(s -> s.name().equals("http_server_requests_seconds_count")
                            && "431".equals(s.labels().get("status"))
                            && "UNKNOWN".equals(s.labels().get("uri")));
            List<PrometheusScrape.Sample> named = scrape.samples.stream()
                    .filter(s -> s.labels().values().stream().anyMatch(v -> v.contains(marker)))
                    .toList();
            assertTrue(named.isEmpty(), "series named after the path: " + named);
            if (counted) {
                break;
            }
            assertTrue(System.nanoTime() < deadline, "the 431 is counted under uri=UNKNOWN");
            LockSupport.parkNanos(20_000_000);
        }
    }

    private static double disconnects() {
        return PrometheusScrape.scrape().samples.stream()
                .filter(s -> s.name().equals("syncular_realtime_errors_total")
                        && "connection".equals(s.labels().get("kind")))
                .mapToDouble(PrometheusScrape.Sample::value)
                .sum();
    }

    /**
     * Peers that vanish (TCP reset right after the upgrade and the {@code hello}) are counted as disconnects and
     * logged at DEBUG in one line each, without a stack trace; nothing at WARN or ERROR.
     */
    @Test
    void abruptSocketDisconnectsAreCountedAndQuiet() throws Exception {
        double before = disconnects();
        try (LogCapture all = LogCapture.of("", Level.INFO, "requestId");
                LogCapture failures =
                        LogCapture.of("dev.syncular.server.realtime.RealtimeFailures", Level.FINE, "requestId")) {
            int sockets = 5;
            for (int i = 0; i < sockets; i++) {
                try (Socket s = new Socket("localhost", port)) {
                    s.setSoTimeout((int) WAIT.toMillis());
                    String key = Base64.getEncoder()
                            .encodeToString(UUID.randomUUID()
                                    .toString()
                                    .substring(0, 16)
                                    .getBytes(StandardCharsets.US_ASCII));
                    s.getOutputStream()
                            .write(("GET /realtime?clientId=c-" + UUID.randomUUID() + " HTTP/1.1\r\n"
                                            + "Host: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
                                            + key
                                            + "\r\nSec-WebSocket-Version: 13\r\nx-actor-id: alice\r\n\r\n")
                                    .getBytes(StandardCharsets.US_ASCII));
                    InputStream in = s.getInputStream();
                    byte[] buf = new byte[8192];
                    String head = new String(buf, 0, in.read(buf), StandardCharsets.ISO_8859_1);
                    assertTrue(head.startsWith("HTTP/1.1 101"), head);
                    if (!head.contains("\"hello\"")) {
                        assertTrue(in.read(buf) > 0, "hello");
                    }
                    s.setSoLinger(true, 0); // close = RST: the peer vanishes
                }
            }
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (disconnects() < before + sockets) {
                assertTrue(System.nanoTime() < deadline, "disconnects counted: " + (disconnects() - before));
                LockSupport.parkNanos(20_000_000);
            }
            List<LogCapture.Line> loud = all.lines.stream()
                    .filter(l -> l.level().intValue() >= Level.WARNING.intValue())
                    .toList();
            assertTrue(loud.isEmpty(), "no WARN/ERROR for vanished peers: " + loud);
            List<LogCapture.Line> lines = failures.lines.stream()
                    .filter(l -> l.message().contains("connection failed, the connection is gone"))
                    .toList();
            assertTrue(lines.size() >= sockets, "one DEBUG line each: " + failures.lines);
            assertTrue(
                    lines.stream().allMatch(l -> l.thrown() == null && l.level().intValue() < Level.INFO.intValue()),
                    "no stack traces");
        }
    }
}
