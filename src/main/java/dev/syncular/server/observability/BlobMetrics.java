package dev.syncular.server.observability;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

/**
 * Micrometer meters of the blob routes (§5.9): {@code syncular.blobs.bytes} by {@code direction} — {@code in}
 * for verified uploads through {@code PUT <mount>/blobs/{id}}, {@code out} for downloads served by this server.
 * Bytes moved through presigned URLs go straight to and from the bucket and are not counted.
 */
@Startup // meters exported from the start, at zero
@ApplicationScoped
public class BlobMetrics {
    private final Counter in;
    private final Counter out;

    @Inject
    public BlobMetrics(MeterRegistry registry) {
        in = bytes(registry, "in");
        out = bytes(registry, "out");
    }

    private static Counter bytes(MeterRegistry registry, String direction) {
        return Counter.builder("syncular.blobs.bytes")
                .description("Blob bytes through this server, by direction")
                .tag("direction", direction)
                .register(registry);
    }

    public void uploaded(long bytes) {
        in.increment(bytes);
    }

    public void downloaded(long bytes) {
        out.increment(bytes);
    }
}
