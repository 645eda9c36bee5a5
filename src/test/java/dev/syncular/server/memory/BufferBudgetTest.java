package dev.syncular.server.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.RawHttp;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.ErrorFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.MessageDecoder;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.zip.GZIPOutputStream;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The pod-wide buffer budget (issue #26, item 1) through the running app, with an 8 MiB budget: bodies are counted
 * as their bytes arrive (never reserved from {@code Content-Length}); once the budget is spent, the next request is
 * answered 429 {@code sync.rate_limited} with {@code Retry-After} before its body is read (§10.2), a body whose bytes
 * stop fitting is cut off with the same answer, gzip bodies count their inflated bytes (§1.3), a socket round
 * (§8.7) is answered in-band with the same code, and every byte is given back once the requests are over.
 */
@QuarkusTest
@OwnApp
@TestProfile(BufferBudgetTest.Budget.class)
class BufferBudgetTest {
    static final long MIB = 1024 * 1024;
    static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    public static class Budget implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "syncular.schema.path",
                    Path.of("src/test/resources/schema/notes.json")
                            .toAbsolutePath()
                            .toString(),
                    "syncular.storage.pg-schema",
                    "sync_budget_"
                            + UUID.randomUUID().toString().replace("-", "").substring(0, 10),
                    "syncular.limits.buffer-budget",
                    "8M");
        }
    }

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Inject
    BufferBudget budget;

    private String partition;

    @BeforeEach
    void freshPartition() {
        partition = "p-" + UUID.randomUUID();
    }

    @AfterEach
    void everythingGivenBack() {
        awaitInUse(() -> budget.inUse(), 0);
    }

    /** Polls (every 2 ms) until the budget holds exactly {@code bytes}, or fails after {@link #WAIT}. */
    private static void awaitInUse(LongSupplier inUse, long bytes) {
        poll(() -> inUse.getAsLong() == bytes, () -> "budget in use " + inUse.getAsLong() + ", expected " + bytes);
    }

    private static void awaitAtLeast(LongSupplier inUse, long bytes) {
        poll(() -> inUse.getAsLong() >= bytes, () -> "budget in use " + inUse.getAsLong() + ", expected ≥ " + bytes);
    }

    private static void poll(BooleanSupplier condition, Supplier<String> failure) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, failure);
            LockSupport.parkNanos(2_000_000);
        }
    }

    private Map<String, String> syncHeaders(String lengthHeader, String length) {
        Map<String, String> h = new LinkedHashMap<>();
        h.put("Content-Type", HttpTransport.CONTENT_TYPE);
        h.put("x-actor-id", "alice");
        h.put("x-syncular-partition", partition);
        h.put(lengthHeader, length);
        return h;
    }

    private RawHttp open(long declared) throws IOException {
        RawHttp http = RawHttp.open("localhost", port);
        http.head("POST", "/sync", syncHeaders("Content-Length", String.valueOf(declared)));
        return http;
    }

    private static JsonNode assertRateLimited(RawHttp.Answer a) throws IOException {
        assertEquals(429, a.status(), a.body());
        assertTrue(
                a.headers().getOrDefault("content-type", "").startsWith("application/json"),
                a.headers().toString());
        assertEquals("1", a.headers().get("retry-after"), a.headers().toString());
        JsonNode n = JSON.readTree(a.body());
        assertEquals("sync.rate_limited", n.path("code").asText(), a.body());
        assertTrue(n.path("retryable").asBoolean());
        assertEquals("memory_budget", n.path("details").path("reason").asText(), a.body());
        return n;
    }

    private SyncTestClient small() {
        return new SyncTestClient(
                        SyncScenariosContract.SCHEMA,
                        new HttpTransport("http://localhost:" + port, partition),
                        "alice",
                        "c-" + UUID.randomUUID())
                .subscribe("s", "notes", Map.of("project_id", List.of("p1")));
    }

    /**
     * Two bodies being received hold 6 of 8 MiB: a third declaring 4 MiB is refused before its body, a small round
     * is served meanwhile, the first body growing past the budget is cut off with 429, and the second, which still
     * fits, is read to its end (and answered for what it is: zeros are no SSP2 request, 400).
     */
    @Test
    void bodiesCountAsTheyArriveAndTheNextOneIsRefusedOnceTheBudgetIsSpent() throws Exception {
        try (RawHttp a = open(6 * MIB);
                RawHttp b = open(4 * MIB)) {
            a.write(new byte[(int) (3 * MIB)]);
            awaitAtLeast(budget::inUse, 3 * MIB);
            b.write(new byte[(int) (3 * MIB)]);
            awaitInUse(budget::inUse, 6 * MIB);
            try (RawHttp c = open(4 * MIB)) {
                assertRateLimited(c.read()); // declared more than is left: refused before its body
            }
            small().syncUntilIdle(); // a small request fits what is left
            a.write(new byte[(int) (3 * MIB)]); // 9 MiB would be held: cut off while it arrives
            assertRateLimited(a.read());
            awaitInUse(budget::inUse, 3 * MIB);
            b.write(new byte[(int) MIB]);
            RawHttp.Answer served = b.read();
            assertEquals(400, served.status(), served.body());
            assertEquals(
                    "sync.invalid_request",
                    JSON.readTree(served.body()).path("code").asText());
        }
    }

    /**
     * While 7 MiB are held, eight parallel chunked 4 MiB bodies (no declared length) are each cut off with 429; the
     * pod keeps serving.
     */
    @Test
    void parallelLargeBodiesBeyondTheBudgetGet429AndThePodStaysUp() throws Exception {
        try (RawHttp holder = open(8 * MIB)) {
            holder.write(new byte[(int) (7 * MIB)]);
            awaitInUse(budget::inUse, 7 * MIB);
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<RawHttp.Answer>> answers = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    answers.add(pool.submit(() -> {
                        try (RawHttp http = RawHttp.open("localhost", port)) {
                            http.head("POST", "/sync", syncHeaders("Transfer-Encoding", "chunked"));
                            http.pump(4 * MIB, true);
                            return http.read();
                        }
                    }));
                }
                for (Future<RawHttp.Answer> f : answers) {
                    assertRateLimited(f.get(WAIT.toSeconds(), TimeUnit.SECONDS));
                }
            } finally {
                pool.shutdownNow();
            }
            awaitInUse(budget::inUse, 7 * MIB);
        }
        awaitInUse(budget::inUse, 0);
        small().syncUntilIdle();
    }

    /**
     * §1.3: a push whose note body is 9 MiB of one letter, sent gzip-compressed in a few KiB: its inflated bytes count
     * against the budget, so it is refused with 429 instead of being decoded into memory.
     */
    @Test
    void gzipBodiesCountTheirInflatedBytes() throws Exception {
        SyncTestClient c = small();
        c.syncUntilIdle(); // the log epoch: pushes ride the next request
        Map<String, Object> note = new LinkedHashMap<>();
        note.put("id", "big");
        note.put("project_id", "p1");
        StringBuilder block = new StringBuilder();
        SplittableRandom random = new SplittableRandom(26);
        for (int i = 0; i < 1024; i++) {
            block.append((char) ('a' + random.nextInt(26)));
        }
        note.put("body", block.toString().repeat(9 * 1024)); // 9 MiB that gzip's window folds to a few KiB
        c.upsert("notes", note, null);
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        byte[] request = c.buildRequest().encode();
        assertTrue(request.length > 9 * MIB, "the request holds the note: " + request.length);
        try (GZIPOutputStream out = new GZIPOutputStream(gz)) {
            out.write(request);
        }
        byte[] body = gz.toByteArray();
        assertTrue(body.length < 64 * 1024, "compressed to " + body.length);
        try (RawHttp http = RawHttp.open("localhost", port)) {
            Map<String, String> h = syncHeaders("Content-Length", String.valueOf(body.length));
            h.put("Content-Encoding", "gzip");
            http.head("POST", "/sync", h).write(body);
            assertRateLimited(http.read());
        }
    }

    /** §8.7: a socket round that does not fit the budget is answered RESP_HEADER, ERROR sync.rate_limited, END. */
    @Test
    void aSocketRoundBeyondTheBudgetIsAnsweredInBand() throws Exception {
        SyncTestClient c = small();
        c.syncUntilIdle();
        RealtimeSocket s = RealtimeSocket.connect("http://localhost:" + port + "/", partition, "alice", c.clientId);
        try {
            s.nextEvent("hello");
            byte[] request = c.buildRequest().encode();
            try (RawHttp holder = open(8 * MIB)) {
                holder.write(new byte[(int) (8 * MIB - 16)]);
                awaitInUse(budget::inUse, 8 * MIB - 16);
                List<Frame> frames =
                        MessageDecoder.decodeResponse(s.round(request, 64)).frames();
                ErrorFrame error = assertInstanceOf(ErrorFrame.class, frames.get(1));
                assertEquals("sync.rate_limited", error.code());
                assertTrue(error.retryable());
            }
            awaitInUse(budget::inUse, 0);
            // the same round once the budget has room
            assertTrue(MessageDecoder.decodeResponse(s.round(request, 64)).frames().stream()
                    .noneMatch(f -> f instanceof ErrorFrame));
        } finally {
            s.ws.abort();
        }
    }
}
