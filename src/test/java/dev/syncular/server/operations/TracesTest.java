package dev.syncular.server.operations;

import static dev.syncular.server.operations.OperationsResourceTest.CT;
import static dev.syncular.server.operations.OperationsResourceTest.str;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.http.ErrorMapper;
import dev.syncular.server.http.SyncResource;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.sync.Tracing;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.LogCapture;
import dev.syncular.server.testsupport.OperationsAppProfile;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestWebhook;
import dev.syncular.server.testsupport.WebhookResource;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.logging.Level;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * Traces with the OpenTelemetry SDK turned on ({@code quarkus.otel.sdk.disabled=false}), read from the test app's
 * in-memory exporter ({@code testsupport.InMemorySpans}), through the running app:
 * <ul>
 * <li>a {@code POST /sync} round with a push and a pull, whose commit a real validator webhook checks (§6.8): the
 * HTTP server span → {@code sync.round} (partition, client id hash, binding, frame counts, outcome) →
 * {@code sync.push} → {@code webhook}, and {@code sync.round} → {@code sync.pull}; the endpoint receives the W3C
 * {@code traceparent} of its call's span;</li>
 * <li>a remote command (REMOTE.md §3): {@code operation} → {@code sync.round} with binding {@code command};</li>
 * <li>the realtime fan-out of a commit to a socket of this pod (§8.2): {@code realtime.fanout}, linked to the
 * {@code sync.push} of its commit, with a {@code realtime.delivery} span per socket served;</li>
 * <li>a round over the realtime socket (§8.7): {@code sync.round} with binding {@code socket}.</li>
 * </ul>
 * The app is the remote-operations one ({@link OperationsAppProfile}), shared with other classes: spans are found by
 * this class's partition, their parents and trace ids, never by count.
 */
@QuarkusTest
@OwnApp
@TestProfile(OperationsAppProfile.class)
class TracesTest {
    private static final Duration DEADLINE = Duration.ofSeconds(20);
    private static final ObjectMapper JSON = new ObjectMapper();

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Inject
    SchemaWindow window;

    @Inject
    InMemorySpanExporter spans;

    private final String partition = "traces-" + UUID.randomUUID();

    /** The first finished span matching {@code match}, polled until {@link #DEADLINE}. */
    private SpanData awaitSpan(String what, Predicate<SpanData> match) {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (true) {
            for (SpanData s : spans.getFinishedSpanItems()) {
                if (match.test(s)) {
                    return s;
                }
            }
            assertTrue(System.nanoTime() < deadline, "no " + what + " span exported within " + DEADLINE);
            Thread.onSpinWait();
        }
    }

    private SyncTestClient client(String actor) {
        SyncTestClient c = new SyncTestClient(
                        window.current(),
                        new HttpTransport("http://localhost:" + port, partition),
                        actor,
                        actor + "-" + UUID.randomUUID())
                .subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
        c.syncUntilIdle();
        return c;
    }

    /** A whole {@code todos} row of list {@code l1} (every column, the nullable attachment too). */
    private static Map<String, Object> todo(String id, String title) {
        Map<String, Object> row = new HashMap<>(
                Map.of("id", id, "list_id", "l1", "title", title, "done", false, "position", 1L, "updated_at_ms", 0L));
        row.put("attachment", null);
        return row;
    }

    @Test
    void aRoundWithAPushAndAPullIsOneTreeAndItsWebhookJoinsIt() {
        WebhookResource.hook.reset();
        SyncTestClient c = client("tracer");
        String commit = c.upsert("todos", todo("t-" + UUID.randomUUID(), "traced"), null);
        c.sync();
        assertTrue(SyncTestClient.applied(c.result(commit)), "the validated commit applies: " + c.result(commit));

        SpanData push = awaitSpan(
                "sync.push",
                s -> s.getName().equals("sync.push")
                        && partition.equals(s.getAttributes().get(Tracing.PARTITION)));
        SpanData round = awaitSpan("sync.round", s -> s.getSpanId().equals(push.getParentSpanId()));
        assertEquals("sync.round", round.getName());
        assertEquals(partition, round.getAttributes().get(Tracing.PARTITION));
        assertEquals(Tracing.clientIdHash(c.clientId), round.getAttributes().get(Tracing.CLIENT_ID_HASH));
        assertEquals("http", round.getAttributes().get(Tracing.BINDING));
        assertEquals(1L, round.getAttributes().get(Tracing.PUSH_COMMITS));
        assertEquals(1L, round.getAttributes().get(Tracing.PUSH_OPERATIONS));
        assertEquals(1L, round.getAttributes().get(Tracing.SUBSCRIPTIONS));
        assertEquals("ok", round.getAttributes().get(Tracing.OUTCOME));
        assertNotNull(round.getAttributes().get(Tracing.FRAMES));
        assertEquals("APPLIED", push.getAttributes().get(Tracing.OUTCOME_STATUS));
        assertNotNull(push.getAttributes().get(Tracing.COMMIT_SEQ));

        // the round is a child of the HTTP server span of POST /sync
        SpanData server = awaitSpan("HTTP server", s -> s.getSpanId().equals(round.getParentSpanId()));
        assertEquals(SpanKind.SERVER, server.getKind());
        assertTrue(server.getName().contains("/sync"), server.getName());

        SpanData pull = awaitSpan(
                "sync.pull",
                s -> s.getName().equals("sync.pull") && s.getParentSpanId().equals(round.getSpanId()));
        assertEquals(round.getTraceId(), pull.getTraceId());

        SpanData webhook = awaitSpan(
                "webhook",
                s -> s.getName().equals("webhook") && s.getParentSpanId().equals(push.getSpanId()));
        assertEquals(SpanKind.CLIENT, webhook.getKind());
        assertEquals("validator", webhook.getAttributes().get(Tracing.WEBHOOK));

        // the endpoint received traceparent: version 00, the round's trace, the webhook span as parent, sampled
        String expected = "00-" + round.getTraceId() + "-" + webhook.getSpanId() + "-01";
        boolean seen = false;
        for (TestWebhook.Received r : WebhookResource.hook.received) {
            if (r.path().equals("/validate") && r.body().contains(commit)) {
                assertEquals(expected, r.header("traceparent"), "the validator call's traceparent");
                seen = true;
            }
        }
        assertTrue(seen, "the validator webhook was called for the commit");
    }

    @Test
    void aRemoteCommandIsAnOperationSpanOverItsCommandRound() throws Exception {
        String requestId = "trace-" + UUID.randomUUID();
        Response r = given().contentType(CT)
                .header("x-actor-id", "alice")
                .header("x-syncular-partition", partition)
                .body(JSON.writeValueAsBytes(CommandsTest.command(
                        "todos.create",
                        requestId,
                        OperationsResourceTest.obj(
                                "id",
                                str("c-" + requestId),
                                "list",
                                str("l1"),
                                "title",
                                str("by command"),
                                "position",
                                OperationsResourceTest.num(1)))))
                .post("/operations");
        assertEquals(200, r.statusCode(), r.asString());
        assertTrue(r.asString().contains("applied"), r.asString());

        SpanData operation = awaitSpan(
                "operation",
                s -> s.getName().equals("operation")
                        && partition.equals(s.getAttributes().get(Tracing.PARTITION)));
        assertEquals("todos.create", operation.getAttributes().get(Tracing.OPERATION));
        assertEquals("ok", operation.getAttributes().get(Tracing.OUTCOME));
        SpanData round = awaitSpan(
                "command round",
                s -> s.getName().equals("sync.round") && s.getParentSpanId().equals(operation.getSpanId()));
        assertEquals("command", round.getAttributes().get(Tracing.BINDING));
        awaitSpan(
                "command push",
                s -> s.getName().equals("sync.push") && s.getParentSpanId().equals(round.getSpanId()));
    }

    @Test
    void aCommitFannedOutToASocketOfThisPodIsARealtimeFanoutSpan() throws Exception {
        SyncTestClient listener = client("listener");
        RealtimeSocket socket =
                RealtimeSocket.connect("http://localhost:" + port + "/", partition, "listener", listener.clientId);
        try {
            socket.nextEvent("hello");
            SyncTestClient writer = client("writer");
            String commit = writer.upsert("todos", todo("f-" + UUID.randomUUID(), "fanned out"), null);
            writer.sync();
            long seq = writer.result(commit).commitSeq();
            SpanData fanout = awaitSpan(
                    "realtime.fanout",
                    s -> s.getName().equals("realtime.fanout")
                            && partition.equals(s.getAttributes().get(Tracing.PARTITION))
                            && Long.valueOf(seq).equals(s.getAttributes().get(Tracing.COMMIT_SEQ)));
            assertEquals(SpanKind.CONSUMER, fanout.getKind());
            assertEquals(1L, fanout.getAttributes().get(Tracing.SOCKETS));
            assertEquals("ok", fanout.getAttributes().get(Tracing.OUTCOME));
            // one trace from the write to the reader: the fan-out links to the push of its commit (pushed through
            // this pod), and the socket's delivery is a span under the fan-out
            SpanData push = awaitSpan(
                    "sync.push of the commit",
                    x -> x.getName().equals("sync.push")
                            && partition.equals(x.getAttributes().get(Tracing.PARTITION))
                            && Long.valueOf(seq).equals(x.getAttributes().get(Tracing.COMMIT_SEQ)));
            assertTrue(
                    fanout.getLinks().stream()
                            .anyMatch(l -> l.getSpanContext().getSpanId().equals(push.getSpanId())
                                    && l.getSpanContext().getTraceId().equals(push.getTraceId())),
                    "the fan-out links to the push: " + fanout.getLinks());
            SpanData delivery = awaitSpan(
                    "realtime.delivery",
                    x -> x.getName().equals("realtime.delivery")
                            && x.getParentSpanId().equals(fanout.getSpanId()));
            assertEquals(fanout.getTraceId(), delivery.getTraceId());
            assertEquals(SpanKind.PRODUCER, delivery.getKind());
            assertEquals("delta", delivery.getAttributes().get(Tracing.DELIVERY));
            assertEquals(
                    Tracing.clientIdHash(listener.clientId),
                    delivery.getAttributes().get(Tracing.CLIENT_ID_HASH));
        } finally {
            socket.ws.abort();
        }
    }

    /**
     * A round over the realtime socket (§8.7) is a {@code sync.round} span with binding {@code socket}, its push
     * below it, as over HTTP; no HTTP server span is its parent (the socket's upgrade request ended long before).
     */
    @Test
    void aSocketRoundIsASyncRoundSpanWithTheSocketBinding() throws Exception {
        SyncTestClient c = client("socketeer");
        RealtimeSocket socket =
                RealtimeSocket.connect("http://localhost:" + port + "/", partition, "socketeer", c.clientId);
        try {
            socket.nextEvent("hello");
            c.upsert("todos", todo("s-" + UUID.randomUUID(), "over the socket"), null);
            byte[] response = socket.round(c.buildRequest().encode(), 1 << 16);
            assertTrue(response.length > 0);
            SpanData round = awaitSpan(
                    "socket sync.round",
                    s -> s.getName().equals("sync.round")
                            && partition.equals(s.getAttributes().get(Tracing.PARTITION))
                            && "socket".equals(s.getAttributes().get(Tracing.BINDING)));
            assertEquals(Tracing.clientIdHash(c.clientId), round.getAttributes().get(Tracing.CLIENT_ID_HASH));
            assertEquals(1L, round.getAttributes().get(Tracing.PUSH_COMMITS));
            assertEquals("ok", round.getAttributes().get(Tracing.OUTCOME));
            SpanData push = awaitSpan(
                    "socket round's sync.push",
                    s -> s.getName().equals("sync.push") && s.getParentSpanId().equals(round.getSpanId()));
            assertEquals("APPLIED", push.getAttributes().get(Tracing.OUTCOME_STATUS));
            for (SpanData s : spans.getFinishedSpanItems()) {
                assertTrue(
                        !s.getSpanId().equals(round.getParentSpanId()) || s.getKind() != SpanKind.SERVER,
                        "a socket round hangs under no HTTP server span: " + s.getName());
            }
        } finally {
            socket.ws.abort();
        }
    }

    /**
     * The logs carry the trace: a refused {@code POST /sync} (here an empty body, 400) leaves its "request answered"
     * line with the request's trace id in the MDC ({@code traceId}, which the JSON log format prints), the trace of
     * the HTTP server span.
     */
    @Test
    void aRoundsLogLineCarriesItsTraceId() throws Exception {
        try (LogCapture log = LogCapture.of(ErrorMapper.class.getName(), Level.FINE, "traceId")) {
            Response r = given().contentType(SyncResource.CONTENT_TYPE)
                    .header("x-actor-id", "alice")
                    .header("x-syncular-partition", partition)
                    .body(new byte[0])
                    .post("/sync");
            assertEquals(400, r.statusCode(), r.asString());
            LogCapture.Line line = log.await(l -> l.message().startsWith("request answered 400"), DEADLINE);
            assertNotNull(line.mdc(), "the line carries a trace id");
            SpanData server = awaitSpan(
                    "HTTP server",
                    s -> s.getKind() == SpanKind.SERVER && s.getTraceId().equals(line.mdc()));
            assertTrue(server.getName().contains("/sync"), server.getName());
        }
    }
}
