package dev.syncular.server.boot;

import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.observability.HttpUriTags;
import dev.syncular.server.sync.Tracing;
import io.micrometer.core.instrument.config.MeterFilter;
import io.opentelemetry.api.trace.Tracer;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The pod's observability beans: the {@code uri} tag filter of the HTTP server meters ({@link HttpUriTags}) and the
 * server's {@link Tracing} over the Quarkus OpenTelemetry tracer. Tracing is off by default
 * ({@code quarkus.otel.sdk.disabled=true}): the tracer is then a no-op and no span is recorded or exported; with
 * {@code quarkus.otel.sdk.disabled=false} spans go to the configured exporter (OTLP by default).
 */
public class ObservabilityProducer {
    /**
     * {@link Tracing#OFF} while the SDK is disabled: the extension then still hands out an SDK tracer (without
     * processors), whose spans would be built and dropped on every round.
     */
    @Produces
    @Singleton
    Tracing tracing(Tracer tracer, @ConfigProperty(name = "quarkus.otel.sdk.disabled") boolean disabled) {
        return disabled ? Tracing.OFF : new Tracing(tracer);
    }

    /** The {@code uri} tag of {@code http_server_requests_*}: a route template under the mount, or {@code UNKNOWN}. */
    @Produces
    @Singleton
    MeterFilter templatedUris(SyncularConfig config) {
        return HttpUriTags.filter(config.mountPrefix());
    }
}
