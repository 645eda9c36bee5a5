package dev.syncular.server.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.syncular.server.storage.StoredCommit;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Context;
import org.junit.jupiter.api.Test;

/** The push span's context as stored with its commit, and read back by the fan-out of any pod (§8.2). */
class TracingTest {
    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String SPAN = "00f067aa0ba902b7";

    private static Context with(TraceFlags flags) {
        return Context.root().with(Span.wrap(SpanContext.create(TRACE, SPAN, flags, TraceState.getDefault())));
    }

    @Test
    void aSampledPushSpanIsStoredAsItsTraceparentAndReadBackAsARemoteContext() {
        String stored = Tracing.traceParent(with(TraceFlags.getSampled()));
        assertEquals("00-" + TRACE + "-" + SPAN + "-01", stored);
        SpanContext link = Tracing.linkOf(stored);
        assertEquals(TRACE, link.getTraceId());
        assertEquals(SPAN, link.getSpanId());
        assertEquals(true, link.isRemote());
    }

    @Test
    void nothingIsStoredWithoutASampledSpan() {
        assertEquals(StoredCommit.UNTRACED, Tracing.traceParent(Context.root()));
        assertEquals(StoredCommit.UNTRACED, Tracing.traceParent(with(TraceFlags.getDefault())));
    }

    @Test
    void anUntracedOrUnreadableValueLinksToNothing() {
        assertFalse(Tracing.linkOf(StoredCommit.UNTRACED).isValid());
        assertFalse(Tracing.linkOf("not-a-traceparent").isValid());
        assertFalse(Tracing.linkOf("00-" + TRACE + "-0000000000000000-01").isValid());
    }
}
