package dev.syncular.server.http;

import dev.syncular.server.config.LimitsConfig;
import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.round.BodyIntake;
import dev.syncular.server.round.RequestIntake;
import io.vertx.core.http.HttpServerRequest;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * Where every route gets its {@link RequestBody} — the one way a request body is read: the pod's {@link BufferBudget} and the slow-body limits
 * ({@code syncular.limits.body-timeout}, {@code syncular.limits.body-min-rate}) applied to each body.
 */
@ApplicationScoped
public class RequestBodies {
    private final BufferBudget budget;
    private final Duration timeout;
    private final long minRate;

    @Inject
    public RequestBodies(BufferBudget budget, LimitsConfig config) {
        this.budget = budget;
        this.timeout = config.bodyTimeout();
        this.minRate = config.bodyMinRate().asLongValue();
    }

    /**
     * The body of {@code request} under {@code cap}: 413 {@code tooLarge} for a larger declared length, 429
     * {@code sync.rate_limited} when the buffer budget is spent — both before any body byte is read.
     */
    public RequestBody open(HttpServerRequest request, long cap, Supplier<? extends RuntimeException> tooLarge) {
        BodyIntake intake = BodyIntake.declared(RequestBody.declaredLength(request), cap, tooLarge, budget::open);
        return new RequestBody(request, intake, timeout, minRate);
    }

    /**
     * The body of {@code request} for a sync round's intake ({@link RequestBody#feed}): the intake was opened from
     * the declared length (its cap, its lease; {@code round.SyncRound#bodyIntake}) and counts each chunk fed to it;
     * the body gets the slow-body limits.
     */
    public RequestBody round(HttpServerRequest request, RequestIntake intake) {
        return new RequestBody(request, intake.bytes(), timeout, minRate);
    }

    /**
     * The body of {@code request} under {@code cap}, to be spooled as it arrives ({@link RequestBody#stream}),
     * never held: 413 {@code tooLarge} for a larger declared length. Holding no memory, it is counted by neither
     * the buffer budget nor the minimum rate (both guard held bytes); a body that stops arriving for
     * {@code syncular.limits.body-timeout} is still cut off with 408.
     */
    public RequestBody spooled(HttpServerRequest request, long cap, Supplier<? extends RuntimeException> tooLarge) {
        BodyIntake intake =
                BodyIntake.declared(RequestBody.declaredLength(request), cap, tooLarge, declared -> budget.unmetered());
        return new RequestBody(request, intake, timeout, 0);
    }

    public BufferBudget budget() {
        return budget;
    }
}
