package dev.syncular.server.observability;

import dev.syncular.server.sync.SyncObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Micrometer meters of durable reactions (§6.9), by reaction {@code type} (a name the deployment's planners
 * choose — the policy document's rules or its own beans — so a closed set, never an id):
 *
 * <ul>
 *   <li>{@code syncular.reactions.planned}: reactions appended by committed pushes on this pod (fed through
 *       {@link SyncObserver#reactionPlanned});
 *   <li>{@code syncular.reactions.delivered}, {@code syncular.reactions.retried},
 *       {@code syncular.reactions.dead.lettered}: outcomes of this pod's delivery attempts;
 *   <li>{@code syncular.reactions.delivery} (timer) by {@code type} and {@code outcome} ({@code delivered},
 *       {@code retried}, {@code dead_lettered}): the webhook call, from request to answer or failure;
 *   <li>{@code syncular.reactions.pending} (gauge): reactions of every pod still to deliver (pending or leased),
 *       counted in the database by this pod's worker on each pass — no query at scrape time.
 * </ul>
 */
@Startup // meters exported from the start, at zero
@ApplicationScoped
public class ReactionMetrics implements SyncObserver {
    /** How a delivery attempt ended. */
    public enum Outcome {
        DELIVERED("syncular.reactions.delivered", "Reactions delivered (webhook answered 2xx)"),
        RETRIED("syncular.reactions.retried", "Reaction delivery attempts that failed and were rescheduled"),
        DEAD_LETTERED(
                "syncular.reactions.dead.lettered",
                "Reactions dead-lettered (permanent failure or attempts exhausted)");

        final String meter;
        final String description;

        Outcome(String meter, String description) {
            this.meter = meter;
            this.description = description;
        }

        String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final MeterRegistry registry;
    private final AtomicLong pending = new AtomicLong();
    private final ConcurrentHashMap<String, Counter> counters = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();

    @Inject
    public ReactionMetrics(MeterRegistry registry) {
        this.registry = registry;
        Gauge.builder("syncular.reactions.pending", pending, AtomicLong::get)
                .strongReference(true)
                .description("Reactions still to deliver (pending or leased), as of this pod's last delivery pass")
                .register(registry);
    }

    @Override
    public void reactionPlanned(String type) {
        counter("syncular.reactions.planned", "Reactions planned with committed pushes", type)
                .increment();
    }

    /** One delivery attempt of a reaction of {@code type} ended with {@code outcome} after {@code nanos}. */
    public void attempted(String type, Outcome outcome, long nanos) {
        counter(outcome.meter, outcome.description, type).increment();
        timers.computeIfAbsent(
                        type + '\u0000' + outcome.tag(),
                        k -> Timer.builder("syncular.reactions.delivery")
                                .description("Reaction webhook calls, request to answer or failure")
                                .tag("type", type)
                                .tag("outcome", outcome.tag())
                                .serviceLevelObjectives(
                                        Duration.ofMillis(10),
                                        Duration.ofMillis(50),
                                        Duration.ofMillis(100),
                                        Duration.ofMillis(250),
                                        Duration.ofMillis(500),
                                        Duration.ofSeconds(1),
                                        Duration.ofSeconds(5))
                                .register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    /** A reaction the worker found already past its attempts (its last worker died mid-call). */
    public void deadLettered(String type) {
        counter(Outcome.DEAD_LETTERED.meter, Outcome.DEAD_LETTERED.description, type)
                .increment();
    }

    /** The database's count of reactions still to deliver, read by the worker's pass. */
    public void pending(long count) {
        pending.set(count);
    }

    private Counter counter(String name, String description, String type) {
        return counters.computeIfAbsent(
                name + '\u0000' + type,
                k -> Counter.builder(name)
                        .description(description)
                        .tag("type", type)
                        .register(registry));
    }
}
