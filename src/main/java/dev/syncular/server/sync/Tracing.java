package dev.syncular.server.sync;

import dev.syncular.server.storage.StoredCommit;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.smallrye.mutiny.Uni;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.function.Function;

/**
 * The spans of the server's work (OpenTelemetry's API, vendor-neutral): a round, its push and pull, segment
 * builds and downloads, webhooks, remote operations and the realtime fanout of a commit. Parents are passed
 * explicitly as {@link Context}s, never read from a thread: a round hops between the event loop and workers.
 * {@link #OFF} is the no-op tracer (what the server uses unless {@code quarkus.otel.sdk.disabled=false}): its
 * spans are not recorded and cost an allocation-free call.
 *
 * <p>Attribute values are ids and counts; never a credential, a row value or a full client id (the client id
 * is hashed, {@link #clientIdHash}).
 */
public final class Tracing {
    /** No spans: the tracer of a server without tracing, and of every test that does not ask for one. */
    public static final Tracing OFF = new Tracing(OpenTelemetry.noop().getTracer("syncular"));

    public static final AttributeKey<String> PARTITION = AttributeKey.stringKey("syncular.partition");
    public static final AttributeKey<String> CLIENT_ID_HASH = AttributeKey.stringKey("syncular.client_id_hash");
    public static final AttributeKey<String> BINDING = AttributeKey.stringKey("syncular.binding");
    public static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("syncular.outcome");
    public static final AttributeKey<Long> PUSH_COMMITS = AttributeKey.longKey("syncular.push.commits");
    public static final AttributeKey<Long> PUSH_OPERATIONS = AttributeKey.longKey("syncular.push.operations");
    public static final AttributeKey<Long> SUBSCRIPTIONS = AttributeKey.longKey("syncular.pull.subscriptions");
    public static final AttributeKey<Long> FRAMES = AttributeKey.longKey("syncular.response.frames");
    public static final AttributeKey<String> OUTCOME_STATUS = AttributeKey.stringKey("syncular.push.status");
    public static final AttributeKey<Long> COMMIT_SEQ = AttributeKey.longKey("syncular.commit_seq");
    public static final AttributeKey<String> TABLE = AttributeKey.stringKey("syncular.table");
    public static final AttributeKey<String> SEGMENT = AttributeKey.stringKey("syncular.segment_id");
    public static final AttributeKey<String> OPERATION = AttributeKey.stringKey("syncular.operation_id");
    public static final AttributeKey<Long> SOCKETS = AttributeKey.longKey("syncular.realtime.sockets");
    public static final AttributeKey<String> WEBHOOK = AttributeKey.stringKey("syncular.webhook");
    /** What one socket got of a fanned-out commit: {@code delta}, {@code wake} or {@code none}. */
    public static final AttributeKey<String> DELIVERY = AttributeKey.stringKey("syncular.realtime.delivery");

    private static final String TRACEPARENT = "traceparent";

    /** Reads a stored {@code traceparent} (one key) for the W3C propagator. */
    private static final TextMapGetter<Map<String, String>> STORED = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    /** How many sockets of a fan-out get a {@code realtime.delivery} span of their own (the first ones served). */
    public static final int SAMPLED_DELIVERIES = 8;

    private final Tracer tracer;

    public Tracing(Tracer tracer) {
        this.tracer = tracer;
    }

    /**
     * The W3C {@code traceparent} of the span of {@code context} when it is sampled (a push stores it with its
     * commit), else {@link StoredCommit#UNTRACED}: with tracing off nothing is stored.
     */
    public static String traceParent(Context context) {
        SpanContext span = Span.fromContext(context).getSpanContext();
        if (!span.isValid() || !span.isSampled()) {
            return StoredCommit.UNTRACED;
        }
        Map<String, String> carrier = new HashMap<>(2);
        W3CTraceContextPropagator.getInstance().inject(context, carrier, Map::put);
        return carrier.getOrDefault(TRACEPARENT, StoredCommit.UNTRACED);
    }

    /**
     * The span context a stored {@code traceParent} names (the push of a commit, on whichever pod it ran), or an
     * invalid context for {@link StoredCommit#UNTRACED} or a value that is not a {@code traceparent}.
     */
    public static SpanContext linkOf(String traceParent) {
        if (traceParent.isEmpty()) {
            return SpanContext.getInvalid();
        }
        Context extracted = W3CTraceContextPropagator.getInstance()
                .extract(Context.root(), Map.of(TRACEPARENT, traceParent), STORED);
        return Span.fromContext(extracted).getSpanContext();
    }

    /** A started span named {@code name} under {@code parent}; the caller ends it. */
    public Span start(String name, Context parent, SpanKind kind) {
        return tracer.spanBuilder(name).setParent(parent).setSpanKind(kind).startSpan();
    }

    /**
     * Runs {@code work} in a span named {@code name} under {@code parent}: {@code work} gets the span's context
     * (to parent what it starts, and made current while {@code work} assembles its {@code Uni}, so a webhook call
     * assembled there sends its {@code traceparent}). The span ends when the {@code Uni} ends or is cancelled; a
     * failure marks it with the failure's §10 code ({@link #OUTCOME}) and an error status.
     */
    public <T> Uni<T> span(String name, Context parent, SpanKind kind, Function<Context, Uni<T>> work) {
        return Uni.createFrom().deferred(() -> {
            Span span = start(name, parent, kind);
            Context context = parent.with(span);
            Uni<T> running;
            try (Scope ignored = context.makeCurrent()) {
                running = work.apply(context);
            } catch (RuntimeException e) {
                running = Uni.createFrom().failure(e);
            }
            return running.onItemOrFailure()
                    .invoke((item, failure) -> end(span, failure))
                    .onCancellation()
                    .invoke(() -> end(span, null));
        });
    }

    /** Ends {@code span}: {@code "ok"}, or the failure's §10 code with an error status. */
    public static void end(Span span, Throwable failure) {
        if (failure == null) {
            if (span.isRecording()) {
                span.setAttribute(OUTCOME, "ok");
            }
        } else {
            span.setAttribute(OUTCOME, SyncEngine.outcome(failure));
            span.setStatus(StatusCode.ERROR, failure.getClass().getSimpleName());
        }
        span.end();
    }

    /**
     * The first 16 hex digits of the client id's SHA-256: enough to follow one client across spans, not its
     * id (a client id can be an app's device or user identifier).
     */
    public static String clientIdHash(String clientId) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(clientId.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is a required JDK algorithm", e);
        }
    }
}
