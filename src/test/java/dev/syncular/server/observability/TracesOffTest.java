package dev.syncular.server.observability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.sync.Tracing;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.SyncTestClient;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * Traces are off by default ({@code quarkus.otel.sdk.disabled=true} in the packaged configuration): the server's
 * tracer records nothing, and a sync round with a push and a pull leaves the app's span exporter empty.
 */
@QuarkusTest
class TracesOffTest {
    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    @Inject
    SchemaWindow window;

    @Inject
    Tracing tracing;

    @Inject
    InMemorySpanExporter spans;

    @Test
    void noSpanIsRecordedOrExported() {
        Span probe = tracing.start("probe", Context.root(), SpanKind.INTERNAL);
        assertFalse(probe.isRecording(), "the tracer of a server without tracing is a no-op");
        assertFalse(probe.getSpanContext().isValid(), "and its spans carry no trace context to propagate");
        probe.end();

        String partition = "traces-off-" + UUID.randomUUID();
        SyncTestClient c = new SyncTestClient(
                        window.current(),
                        new HttpTransport("http://localhost:" + port, partition),
                        "alice",
                        "alice-" + UUID.randomUUID())
                .subscribe("todos", "todos", Map.of("list_id", List.of("l1")));
        String commit = c.upsert(
                "todos",
                Map.of("id", "t1", "list_id", "l1", "title", "t", "done", false, "position", 1L, "updated_at_ms", 0L),
                null);
        c.syncUntilIdle();
        assertTrue(SyncTestClient.applied(c.result(commit)), String.valueOf(c.result(commit)));
        assertEquals(List.of(), spans.getFinishedSpanItems(), "nothing is exported");
    }
}
