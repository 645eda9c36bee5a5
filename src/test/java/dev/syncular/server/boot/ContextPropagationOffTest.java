package dev.syncular.server.boot;

import static org.junit.jupiter.api.Assertions.assertSame;

import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The running app propagates no thread context through Mutiny ({@code mp.context.ThreadContext.propagated=None} in
 * the packaged configuration, and {@link StartupSequence}): a callback or a future is used as it is, not wrapped
 * in a capture of the CDI, OpenTelemetry and MDC state taken when the operator was built and restored around every
 * call (a third of the server's samples in a
 * profile of bench/tenants.sh at one partition). The request's Vert.x context carries what the round needs: traces
 * (TracesTest), the request scope and the log's trace ids.
 */
@QuarkusTest
class ContextPropagationOffTest {

    @Test
    void mutinyCallbacksAreNotWrapped() {
        Function<Integer, Integer> f = i -> i + 1;
        Supplier<String> s = () -> "x";
        Runnable r = () -> {};
        assertSame(f, Infrastructure.decorate(f), "a function is used as it is");
        assertSame(s, Infrastructure.decorate(s), "a supplier is used as it is");
        assertSame(r, Infrastructure.decorate(r), "a runnable is used as it is");
        CompletableFuture<String> future = new CompletableFuture<>();
        assertSame(future, Infrastructure.wrapCompletableFuture(future), "a future is used as it is");
    }
}
