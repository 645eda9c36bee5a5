package dev.syncular.server.testsupport;

import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * The span exporter of the test app: the Quarkus OpenTelemetry extension exports to every {@code SpanExporter}
 * bean, so a test that turns the SDK on ({@code quarkus.otel.sdk.disabled=false}) reads the finished spans from
 * this in-memory one. With the SDK off (the default) nothing ever reaches it.
 */
@ApplicationScoped
public class InMemorySpans {
    @Produces
    @Singleton
    InMemorySpanExporter exporter() {
        return InMemorySpanExporter.create();
    }
}
