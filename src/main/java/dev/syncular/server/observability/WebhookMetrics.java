package dev.syncular.server.observability;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * Micrometer meters of the outbound webhooks (the §6.8 validator webhook and the §6.9 reaction endpoints), by
 * {@code endpoint} — a name from the configuration ({@code validator}, {@code reactions} for the default reaction
 * webhook, or a {@code syncular.reactions.endpoints} name), so a closed set:
 *
 * <ul>
 *   <li>{@code syncular.webhook.calls} by {@code endpoint} and {@code outcome}: {@code answered} (any status below
 *       500), {@code server_error} (5xx), {@code timeout} (the read or the whole-call timeout),
 *       {@code connect_timeout} (TCP connect, or no pooled connection in time), {@code connect_error},
 *       {@code answer_too_large} (the answer cap), {@code io_error}, {@code circuit_open} (failed at once by the
 *       open breaker, no network call);
 *   <li>{@code syncular.webhook.call} (timer) by {@code endpoint}: every call that reached the network, from
 *       request to answer or failure;
 *   <li>{@code syncular.webhook.breaker.open} (gauge, 1 or 0) and {@code syncular.webhook.in.flight} (gauge) by
 *       {@code endpoint}, with {@code syncular.webhook.pool.size} (gauge) its configured connection bound.
 * </ul>
 */
@ApplicationScoped
public class WebhookMetrics {
    public static final String ANSWERED = "answered";
    public static final String SERVER_ERROR = "server_error";
    public static final String TIMEOUT = "timeout";
    public static final String CONNECT_TIMEOUT = "connect_timeout";
    public static final String CONNECT_ERROR = "connect_error";
    public static final String ANSWER_TOO_LARGE = "answer_too_large";
    public static final String IO_ERROR = "io_error";
    public static final String CIRCUIT_OPEN = "circuit_open";
    static final List<String> OUTCOMES = List.of(
            ANSWERED, SERVER_ERROR, TIMEOUT, CONNECT_TIMEOUT, CONNECT_ERROR, ANSWER_TOO_LARGE, IO_ERROR, CIRCUIT_OPEN);

    private final MeterRegistry registry;
    private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();

    @Inject
    public WebhookMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** An endpoint's gauges, and its counters at zero; {@code open} is read at scrape time (no I/O). */
    public void register(String endpoint, int poolSize, BooleanSupplier open) {
        Gauge.builder("syncular.webhook.breaker.open", open, o -> o.getAsBoolean() ? 1 : 0)
                .description("Whether the endpoint's circuit breaker is open (calls fail at once)")
                .tag("endpoint", endpoint)
                .strongReference(true)
                .register(registry);
        Gauge.builder("syncular.webhook.in.flight", inFlight(endpoint), AtomicInteger::get)
                .description("Webhook calls in flight")
                .tag("endpoint", endpoint)
                .strongReference(true)
                .register(registry);
        Gauge.builder("syncular.webhook.pool.size", () -> poolSize)
                .description("Connections to the endpoint, at most")
                .tag("endpoint", endpoint)
                .strongReference(true)
                .register(registry);
        for (String outcome : OUTCOMES) {
            counter(endpoint, outcome);
        }
    }

    public void started(String endpoint) {
        inFlight(endpoint).incrementAndGet();
    }

    public void finished(String endpoint) {
        inFlight(endpoint).decrementAndGet();
    }

    /** One call's outcome; {@code nanos} is timed unless the breaker failed it without a network call. */
    public void call(String endpoint, String outcome, long nanos) {
        counter(endpoint, outcome).increment();
        if (!CIRCUIT_OPEN.equals(outcome)) {
            timers.computeIfAbsent(
                            endpoint,
                            e -> Timer.builder("syncular.webhook.call")
                                    .description("Webhook calls, from request to answer or failure")
                                    .tag("endpoint", e)
                                    .register(registry))
                    .record(nanos, TimeUnit.NANOSECONDS);
        }
    }

    private AtomicInteger inFlight(String endpoint) {
        return inFlight.computeIfAbsent(endpoint, e -> new AtomicInteger());
    }

    private Counter counter(String endpoint, String outcome) {
        return counters.computeIfAbsent(
                endpoint + '\u0000' + outcome,
                k -> Counter.builder("syncular.webhook.calls")
                        .description("Webhook calls by outcome")
                        .tag("endpoint", endpoint)
                        .tag("outcome", outcome)
                        .register(registry));
    }
}
