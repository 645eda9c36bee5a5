package dev.syncular.server.observability;

import dev.syncular.server.sync.Tracing;
import io.opentelemetry.api.trace.Tracer;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The server's {@link Tracing} over the Quarkus OpenTelemetry tracer. Tracing is off by default
 * ({@code quarkus.otel.sdk.disabled=true}): the tracer is then a no-op and no span is recorded or exported; with
 * {@code quarkus.otel.sdk.disabled=false} spans go to the configured exporter (OTLP by default).
 */
public class TracingProducer {
    /**
     * {@link Tracing#OFF} while the SDK is disabled: the extension then still hands out an SDK tracer (without
     * processors), whose spans would be built and dropped on every round.
     */
    @Produces
    @Singleton
    Tracing tracing(Tracer tracer, @ConfigProperty(name = "quarkus.otel.sdk.disabled") boolean disabled) {
        return disabled ? Tracing.OFF : new Tracing(tracer);
    }
}
