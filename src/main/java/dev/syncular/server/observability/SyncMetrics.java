package dev.syncular.server.observability;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.sync.SyncObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Micrometer meters of the sync engine, fed through {@link SyncObserver}. Every tag value comes from a closed
 * set — outcomes, lanes, deliveries and §10 catalogue codes (anything else is {@code other}) — never an actor,
 * client, partition or row id, so the series count stays bounded:
 *
 * <ul>
 *   <li>{@code syncular.sync.rounds} (timer, percentile histogram) by {@code outcome}: {@code ok} or the code;
 *   <li>{@code syncular.push.commits} by {@code outcome} ({@code applied}, {@code cached}, {@code conflicted},
 *       {@code rejected}) and {@code code} ({@code none} unless refused), and {@code syncular.push.commit.operations},
 *       the operations per applied commit;
 *   <li>{@code syncular.pull.rows} by {@code lane} ({@code commits}, {@code rows}, {@code image});
 *   <li>{@code syncular.segments.bytes} by {@code delivery} ({@code inline}, {@code direct}, {@code presigned});
 *   <li>{@code syncular.sqlite.images} by {@code result} ({@code built}, {@code reused}).
 * </ul>
 */
@Startup // meters exported from the start, at zero
@ApplicationScoped
public class SyncMetrics implements SyncObserver {
    private static final String NONE = "none";

    private final MeterRegistry registry;
    private final ConcurrentHashMap<String, Timer> rounds = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Counter> commits = new ConcurrentHashMap<>();
    private final DistributionSummary operations;
    private final Map<Lane, Counter> rows = new EnumMap<>(Lane.class);
    private final Map<Delivery, Counter> segmentBytes = new EnumMap<>(Delivery.class);
    private final Counter imagesBuilt;
    private final Counter imagesReused;
    private final Counter imagesDeferred;
    private final Counter readsShared;

    @Inject
    public SyncMetrics(MeterRegistry registry) {
        this.registry = registry;
        round("ok");
        for (CommitOutcome o : CommitOutcome.values()) {
            if (o == CommitOutcome.APPLIED || o == CommitOutcome.CACHED) {
                commit(o, null);
            }
        }
        operations = DistributionSummary.builder("syncular.push.commit.operations")
                .description("Operations per applied commit")
                .serviceLevelObjectives(1, 2, 5, 10, 20, 50, 100, 200, 500)
                .register(registry);
        for (Lane lane : Lane.values()) {
            rows.put(
                    lane,
                    Counter.builder("syncular.pull.rows")
                            .description("Rows released to clients, by lane")
                            .tag("lane", tagValue(lane))
                            .register(registry));
        }
        for (Delivery d : Delivery.values()) {
            segmentBytes.put(
                    d,
                    Counter.builder("syncular.segments.bytes")
                            .description("Segment bytes that reached clients, by delivery")
                            .tag("delivery", tagValue(d))
                            .register(registry));
        }
        imagesBuilt = images("built");
        imagesReused = images("reused");
        imagesDeferred = images("deferred");
        readsShared = Counter.builder("syncular.pull.shared.reads")
                .description("Snapshot pages and log windows a round's section took from another section naming the"
                        + " same table and effective scopes, instead of reading them again")
                .register(registry);
    }

    private Counter images(String result) {
        return Counter.builder("syncular.sqlite.images")
                .description(
                        "SQLite images served, built here or reused; or not built (deferred) while the partition had its share"
                                + " of builds running")
                .tag("result", result)
                .register(registry);
    }

    private Timer round(String outcome) {
        return rounds.computeIfAbsent(
                outcome,
                o -> Timer.builder("syncular.sync.rounds")
                        .description("Sync rounds (POST /sync and socket rounds) by outcome")
                        .tag("outcome", o)
                        .publishPercentileHistogram()
                        .minimumExpectedValue(Duration.ofMillis(1))
                        .maximumExpectedValue(Duration.ofSeconds(30))
                        .register(registry));
    }

    private Counter commit(CommitOutcome outcome, String code) {
        String c = code == null ? NONE : ErrorCode.of(code) != null ? code : "other";
        String o = tagValue(outcome);
        return commits.computeIfAbsent(
                o + ' ' + c,
                k -> Counter.builder("syncular.push.commits")
                        .description("Pushed commits by outcome and refusal code")
                        .tag("outcome", o)
                        .tag("code", c)
                        .register(registry));
    }

    private static String tagValue(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }

    @Override
    public void roundEnded(String partition, String outcome, Throwable failure, long nanos) {
        round(ErrorCode.of(outcome) != null || outcome.equals("ok") ? outcome : "other")
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void commitPushed(Commit commit) {
        commit(commit.outcome(), commit.code()).increment();
        if (commit.outcome() == CommitOutcome.APPLIED) {
            operations.record(commit.operations());
        }
    }

    @Override
    public void rowsPulled(Lane lane, long count) {
        rows.get(lane).increment(count);
    }

    @Override
    public void segmentBytes(Delivery delivery, long bytes) {
        segmentBytes.get(delivery).increment(bytes);
    }

    @Override
    public void readsShared(long reads) {
        readsShared.increment(reads);
    }

    @Override
    public void imageBuildDeferred() {
        imagesDeferred.increment();
    }

    @Override
    public void imageServed(boolean built) {
        (built ? imagesBuilt : imagesReused).increment();
    }
}
