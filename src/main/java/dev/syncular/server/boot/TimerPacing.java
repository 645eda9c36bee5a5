package dev.syncular.server.boot;

import dev.syncular.server.sync.RefusalPacing;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@link RefusalPacing} on Vert.x timers ({@code syncular.fairness.refusal-hold}): a refusal is held for its wait, at
 * most {@code maxMs}, and completed on the context of the request it refuses (its logs and answer keep their request).
 * Only rounds whose pushes carry at most {@link #MAX_HELD_BYTES} are held, and at most {@link #MAX_HELD} at once per
 * pod, so held requests take at most about 8 MiB of the buffer budget; past either, the refusal is answered at once.
 */
final class TimerPacing implements RefusalPacing {
    /** Refusals held at once on a pod. */
    static final int MAX_HELD = 128;
    /** Pushed bytes of a round that is still held when refused. */
    static final long MAX_HELD_BYTES = 64 * 1024;

    private final Vertx vertx;
    private final long maxMs;
    private final AtomicInteger held = new AtomicInteger();

    TimerPacing(Vertx vertx, long maxMs) {
        this.vertx = vertx;
        this.maxMs = maxMs;
    }

    @Override
    public long holdMs(long retryAfterMs, long pushedBytes) {
        if (maxMs <= 0 || retryAfterMs <= 0 || pushedBytes > MAX_HELD_BYTES) {
            return 0;
        }
        if (held.incrementAndGet() > MAX_HELD) {
            held.decrementAndGet();
            return 0;
        }
        return Math.min(maxMs, retryAfterMs); // its place is given back by hold()
    }

    @Override
    public Uni<Void> hold(long ms) {
        Context caller = Vertx.currentContext();
        return Uni.createFrom().emitter(em -> {
            Runnable done = () -> {
                held.decrementAndGet();
                em.complete(null);
            };
            if (caller != null) {
                caller.runOnContext(v -> vertx.setTimer(ms, id -> done.run()));
            } else {
                vertx.setTimer(ms, id -> done.run());
            }
        });
    }
}
