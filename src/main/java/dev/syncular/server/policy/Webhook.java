package dev.syncular.server.policy;

import dev.syncular.server.observability.WebhookMetrics;
import dev.syncular.server.sync.Tracing;
import io.netty.channel.ConnectTimeoutException;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.tracing.TracingPolicy;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.core.buffer.Buffer;
import io.vertx.mutiny.core.http.HttpClient;
import io.vertx.mutiny.core.http.HttpClientRequest;
import io.vertx.mutiny.core.http.HttpClientResponse;
import java.net.ConnectException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * One webhook endpoint: a JSON {@code POST} signed with {@code Syncular-Signature: t=<unix ms>,v1=<hex
 * HMAC-SHA256 of "<t>.<body>" under the shared secret>}. Runs on the Vert.x HTTP client: nothing blocks a thread
 * while the call is in flight.
 *
 * <p>Every call is bounded ({@link Limits}): at most {@code poolSize} connections, a connect timeout (the TCP
 * connect and the wait for a pooled connection), a read timeout (no byte for that long ends the call), a hard
 * timeout over the whole exchange, and a cap on the answer's size; a call cut by any of them is reset, never
 * left running. A circuit breaker counts consecutive failures (no answer, or a 5xx): at the threshold it opens
 * for {@code breakerOpenFor}, during which calls fail at once with {@link Failure} {@code circuit_open} without
 * touching the network; then one trial call is let through, which closes it on success or reopens it. Every
 * outcome, the latency, the open state and the in-flight count are metered by endpoint name
 * ({@link WebhookMetrics}).
 */
final class Webhook {
    static final String SIGNATURE_HEADER = "Syncular-Signature";
    private static final AttributeKey<Long> HTTP_STATUS = AttributeKey.longKey("http.response.status_code");
    private final HttpClient client;
    private final String name;
    private final String url;
    private final byte[] secret;
    private final Limits limits;
    private final WebhookMetrics metrics;
    private final Breaker breaker;
    /** A client span per call ({@code webhook}), whose W3C {@code traceparent} the endpoint receives. */
    private final Tracing tracing;

    /** The status and body of an answered call. */
    record Answer(int status, String body) {}

    /**
     * The bounds of one endpoint.
     *
     * @param timeout          hard limit of one whole call
     * @param connectTimeout   TCP connect, and the wait for a free pooled connection
     * @param readTimeout      the longest silence while the answer is awaited or read
     * @param poolSize         connections to the endpoint, at most
     * @param maxAnswerBytes   the answer's body, at most (a longer one fails the call)
     * @param breakerFailures  consecutive failures that open the breaker ({@code 0}: no breaker)
     * @param breakerOpenFor   how long an open breaker fails calls at once before a trial call
     */
    record Limits(
            Duration timeout,
            Duration connectTimeout,
            Duration readTimeout,
            int poolSize,
            long maxAnswerBytes,
            int breakerFailures,
            Duration breakerOpenFor) {
        Limits {
            if (poolSize < 1 || maxAnswerBytes < 1 || breakerFailures < 0) {
                throw new IllegalArgumentException("webhook pool size and answer cap must be positive,"
                        + " the breaker threshold 0 (off) or more");
            }
        }

        /** The bounds an endpoint's configuration group sets (validated with the mapping). */
        static Limits of(WebhookEndpoint config) {
            return new Limits(
                    config.timeout(),
                    config.connectTimeout(),
                    config.readTimeout(),
                    config.poolSize(),
                    config.maxAnswerSize().asLongValue(),
                    config.breakerFailures(),
                    config.breakerOpenFor());
        }
    }

    /** A call that got no usable answer; {@link #reason} is a closed token ({@link WebhookMetrics} outcomes). */
    static final class Failure extends RuntimeException {
        final String reason;

        Failure(String reason, Throwable cause) {
            super("webhook call failed: " + reason, cause, false, false);
            this.reason = reason;
        }

        /** A timeout of any kind (connect, read or the whole call). */
        boolean timeout() {
            return WebhookMetrics.TIMEOUT.equals(reason) || WebhookMetrics.CONNECT_TIMEOUT.equals(reason);
        }
    }

    Webhook(
            Vertx vertx,
            String name,
            String url,
            String secret,
            Limits limits,
            WebhookMetrics metrics,
            Tracing tracing) {
        this.tracing = tracing;
        if (secret == null || secret.isBlank()) {
            throw new IllegalArgumentException("a webhook needs a signing secret");
        }
        URI.create(url); // a malformed url fails at start-up
        this.client = vertx.createHttpClient(new HttpClientOptions()
                .setConnectTimeout((int) Math.max(1, limits.connectTimeout().toMillis()))
                .setMaxPoolSize(limits.poolSize())
                // the call's span is this class's own (below): no second, automatic one
                .setTracingPolicy(TracingPolicy.IGNORE)
                .setKeepAlive(true));
        this.name = name;
        this.url = url;
        this.secret = secret.getBytes(StandardCharsets.UTF_8);
        this.limits = limits;
        this.metrics = metrics;
        this.breaker =
                new Breaker(limits.breakerFailures(), limits.breakerOpenFor().toNanos());
        metrics.register(name, limits.poolSize(), breaker::isOpen);
    }

    /**
     * Posts {@code json}: the answer, or a {@link Failure} (connection error, a timeout, an answer above the cap,
     * or the breaker open). A 5xx answer is an answer, and counts as a failure for the breaker.
     */
    Uni<Answer> post(String json, Map<String, String> headers, long nowMs) {
        long started = System.nanoTime();
        // the caller's span (current while it assembles this call) is the parent: a validator's commit, a delivery
        Span span = tracing.start("webhook", Context.current(), SpanKind.CLIENT);
        span.setAttribute(Tracing.WEBHOOK, name);
        if (!breaker.tryAcquire(started)) {
            metrics.call(name, WebhookMetrics.CIRCUIT_OPEN, 0);
            Failure open = new Failure(WebhookMetrics.CIRCUIT_OPEN, null);
            Tracing.end(span, open);
            return Uni.createFrom().failure(open);
        }
        RequestOptions options = new RequestOptions()
                .setMethod(HttpMethod.POST)
                .setAbsoluteURI(url)
                .setConnectTimeout(Math.max(1, limits.connectTimeout().toMillis()))
                .setIdleTimeout(Math.max(1, limits.readTimeout().toMillis()))
                .putHeader("Content-Type", "application/json")
                .putHeader(SIGNATURE_HEADER, signature(nowMs, json));
        headers.forEach(options::putHeader);
        // W3C trace context, so a team's webhook joins the trace (nothing is added when tracing is off)
        W3CTraceContextPropagator.getInstance()
                .inject(Context.current().with(span), options, (o, key, value) -> o.putHeader(key, value));
        AtomicReference<HttpClientRequest> sent = new AtomicReference<>();
        metrics.started(name);
        return client.request(options)
                .invoke(sent::set)
                .flatMap(req -> req.send(Buffer.buffer(json)))
                .flatMap(this::capped)
                .ifNoItem()
                .after(limits.timeout())
                .failWith(() -> new Failure(WebhookMetrics.TIMEOUT, null))
                .onFailure()
                .transform(Webhook::classify)
                .onFailure()
                .invoke(f -> {
                    HttpClientRequest req = sent.get();
                    if (req != null) {
                        req.reset(); // the call is over for us: never left running on a pooled connection
                    }
                })
                .onItemOrFailure()
                .invoke((answer, failure) -> {
                    long nanos = System.nanoTime() - started;
                    metrics.finished(name);
                    if (answer != null) {
                        span.setAttribute(HTTP_STATUS, (long) answer.status());
                    }
                    Tracing.end(span, failure);
                    if (failure != null) {
                        breaker.onFailure(System.nanoTime());
                        metrics.call(name, ((Failure) failure).reason, nanos);
                    } else if (answer.status() >= 500) {
                        breaker.onFailure(System.nanoTime());
                        metrics.call(name, WebhookMetrics.SERVER_ERROR, nanos);
                    } else {
                        breaker.onSuccess();
                        metrics.call(name, WebhookMetrics.ANSWERED, nanos);
                    }
                });
    }

    /** The answer's body, read as it arrives and refused past the cap (by declared length first). */
    private Uni<Answer> capped(HttpClientResponse resp) {
        long max = limits.maxAnswerBytes();
        String declared = resp.getHeader("Content-Length");
        if (declared != null) {
            try {
                if (Long.parseLong(declared.trim()) > max) {
                    return Uni.createFrom().failure(new Failure(WebhookMetrics.ANSWER_TOO_LARGE, null));
                }
            } catch (NumberFormatException e) {
                return Uni.createFrom().failure(new Failure(WebhookMetrics.IO_ERROR, e));
            }
        }
        io.vertx.core.buffer.Buffer body = io.vertx.core.buffer.Buffer.buffer();
        return resp.toMulti()
                .onItem()
                .transformToUniAndConcatenate(chunk -> {
                    if (body.length() + chunk.length() > max) {
                        return Uni.createFrom().<Void>failure(new Failure(WebhookMetrics.ANSWER_TOO_LARGE, null));
                    }
                    body.appendBuffer(chunk.getDelegate());
                    return Uni.createFrom().voidItem();
                })
                .collect()
                .last()
                .map(v -> new Answer(resp.statusCode(), body.toString(StandardCharsets.UTF_8)));
    }

    private static Failure classify(Throwable f) {
        if (f instanceof Failure known) {
            return known;
        }
        for (Throwable t = f; t != null; t = t.getCause()) {
            if (t instanceof ConnectTimeoutException) {
                return new Failure(WebhookMetrics.CONNECT_TIMEOUT, f);
            }
            if (t instanceof TimeoutException) {
                // Vert.x: the read (idle) timeout, or no pooled connection within the connect timeout
                String m = String.valueOf(t.getMessage());
                return new Failure(
                        m.contains("connection") || m.contains("Connection")
                                ? WebhookMetrics.CONNECT_TIMEOUT
                                : WebhookMetrics.TIMEOUT,
                        f);
            }
            if (t instanceof ConnectException) {
                return new Failure(WebhookMetrics.CONNECT_ERROR, f);
            }
        }
        return new Failure(WebhookMetrics.IO_ERROR, f);
    }

    String signature(long nowMs, String body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            byte[] sig = mac.doFinal((nowMs + "." + body).getBytes(StandardCharsets.UTF_8));
            return "t=" + nowMs + ",v1=" + HexFormat.of().formatHex(sig);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    void close() {
        client.closeAndAwait();
    }

    /**
     * Consecutive-failure circuit breaker: closed → (threshold failures) → open for a while → one trial call
     * (half-open) → closed on its success, open again on its failure. A threshold of {@code 0} never opens.
     */
    static final class Breaker {
        private final int threshold;
        private final long openNanos;
        private int failures;
        private boolean open;
        private long openUntil;
        private boolean trial;

        Breaker(int threshold, long openNanos) {
            this.threshold = threshold;
            this.openNanos = openNanos;
        }

        synchronized boolean tryAcquire(long now) {
            if (!open) {
                return true;
            }
            if (now - openUntil < 0 || trial) {
                return false;
            }
            trial = true;
            return true;
        }

        synchronized void onSuccess() {
            failures = 0;
            open = false;
            trial = false;
        }

        synchronized void onFailure(long now) {
            trial = false;
            if (threshold == 0) {
                return;
            }
            if (open || ++failures >= threshold) {
                open = true;
                openUntil = now + openNanos;
            }
        }

        synchronized boolean isOpen() {
            return open;
        }
    }
}
