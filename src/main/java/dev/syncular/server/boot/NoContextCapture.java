package dev.syncular.server.boot;

import io.quarkus.runtime.StartupEvent;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.function.UnaryOperator;

/**
 * Mutiny without thread-context capture. The packaged configuration propagates no thread context
 * ({@code mp.context.ThreadContext.propagated=None}): a request's callbacks run on its Vert.x context, which carries
 * its traces, request scope and log fields. The context-propagation hooks that Quarkus installs into Mutiny still
 * looked up the current thread context (a thread-local set and dropped each time) for every operator built and
 * every future completed, to capture nothing: 2–3 % of the server's samples under push-pull load. At start-up
 * they are removed: Mutiny's callback decorators (there are no others) and its {@code CompletableFuture} wrapper.
 */
@ApplicationScoped
public class NoContextCapture {

    void removeCaptures(@Observes @Priority(2) StartupEvent event) {
        Infrastructure.clearInterceptors();
        Infrastructure.setCompletableFutureWrapper(UnaryOperator.identity());
    }
}
