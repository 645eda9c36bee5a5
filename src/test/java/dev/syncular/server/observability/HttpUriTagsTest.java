package dev.syncular.server.observability;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.syncular.server.conformance.ConformanceResource;
import dev.syncular.server.http.AdminCheckpointsResource;
import dev.syncular.server.http.AdminReactionsResource;
import dev.syncular.server.http.AdminResource;
import dev.syncular.server.http.BlobResource;
import dev.syncular.server.http.SegmentResource;
import dev.syncular.server.http.SyncResource;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** {@link HttpUriTags}: its template list is exactly the server's routes, and raw paths become {@code UNKNOWN}. */
class HttpUriTagsTest {
    @Test
    void theTemplatesAreExactlyTheRoutes() {
        Set<String> routes = new TreeSet<>(Set.of("/realtime", "/__conformance/instances/{id}/realtime"));
        for (Class<?> c : List.of(
                SyncResource.class,
                SegmentResource.class,
                BlobResource.class,
                AdminResource.class,
                AdminCheckpointsResource.class,
                AdminReactionsResource.class,
                ConformanceResource.class)) {
            String base = c.getAnnotation(Path.class).value();
            for (Method m : c.getDeclaredMethods()) {
                boolean route = m.isAnnotationPresent(GET.class)
                        || m.isAnnotationPresent(POST.class)
                        || m.isAnnotationPresent(PUT.class)
                        || m.isAnnotationPresent(DELETE.class);
                if (route) {
                    Path p = m.getAnnotation(Path.class);
                    routes.add(p == null ? base : base + p.value());
                }
            }
        }
        assertEquals(routes, new TreeSet<>(HttpUriTags.TEMPLATES));
    }

    @Test
    void rawPathsBecomeUnknownTemplatesStay() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        registry.config().meterFilter(HttpUriTags.filter("/api"));
        for (String uri : List.of("/sync", "/api/blobs/{blobId}", "/x/y/z", "NOT_FOUND", "/api/sync/../etc")) {
            Counter.builder("http.server.requests")
                    .tag("uri", uri)
                    .tag("status", "431")
                    .register(registry)
                    .increment();
        }
        Set<String> tags = new TreeSet<>();
        registry.find("http.server.requests")
                .counters()
                .forEach(c -> tags.add(c.getId().getTag("uri")));
        assertEquals(new TreeSet<>(Set.of("/sync", "/api/blobs/{blobId}", "NOT_FOUND", "UNKNOWN")), tags);
    }
}
