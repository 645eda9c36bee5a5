package dev.syncular.server.observability;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.config.MeterFilter;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The {@code uri} tag of the HTTP server meters ({@code http_server_requests_*}) is a route template of this server
 * or one of Micrometer's fixed values ({@code root}, {@code NOT_FOUND}, {@code REDIRECTION}, {@code UNKNOWN}) —
 * never a raw path. A request refused before any route saw it (a 431, 414 or 400 from the HTTP codec, a 413 over
 * {@code quarkus.http.limits.max-body-size}) would otherwise turn whatever path it named into a new series, until
 * Micrometer's tag ceiling drops legitimate ones; such values become {@code UNKNOWN}.
 */
public final class HttpUriTags {
    private HttpUriTags() {}

    /**
     * Every route template of the server below the mount prefix ({@code HttpUriTagsTest} checks the list against the
     * JAX-RS resources and the socket endpoints).
     */
    public static final List<String> TEMPLATES = List.of(
            "/sync",
            "/segments/{segmentId}",
            "/blobs/{blobId}",
            "/blobs/{blobId}/upload-grant",
            "/realtime",
            "/admin/partitions",
            "/admin/partitions/{partition}",
            "/admin/partitions/{partition}/clients",
            "/admin/partitions/{partition}/tables/{table}/rows/{rowId}",
            "/admin/partitions/{partition}/rotate-epoch",
            "/admin/partitions/{partition}/leases/{leaseId}/revoke",
            "/admin/partitions/{partition}/actors/{actorId}/disconnect",
            "/admin/partitions/{partition}/clients/{clientId}/disconnect",
            "/admin/prune",
            "/admin/segments",
            "/admin/events",
            "/admin/checkpoints",
            "/admin/checkpoints/declare",
            "/admin/checkpoints/abandon",
            "/admin/checkpoints/claim",
            "/admin/checkpoints/advance",
            "/admin/checkpoints/activate",
            "/admin/reactions",
            "/admin/reactions/{id}/retry",
            "/__conformance/capabilities",
            "/__conformance/instances",
            "/__conformance/instances/{id}/sync",
            "/__conformance/instances/{id}/segments/{segmentId}",
            "/__conformance/instances/{id}/call/{method}",
            "/__conformance/instances/{id}/realtime");
    /** Micrometer's own values for requests without a template. */
    static final Set<String> FIXED = Set.of("root", "NOT_FOUND", "REDIRECTION", "UNKNOWN");

    static final String UNKNOWN = "UNKNOWN";

    /** The filter for routes under {@code mount} ({@code ""} at the root). */
    public static MeterFilter filter(String mount) {
        Set<String> allowed =
                TEMPLATES.stream().flatMap(t -> List.of(t, mount + t).stream()).collect(Collectors.toSet());
        return new MeterFilter() {
            @Override
            public Meter.Id map(Meter.Id id) {
                if (!id.getName().startsWith("http.server")) {
                    return id;
                }
                String uri = id.getTag("uri");
                if (uri == null || allowed.contains(uri) || FIXED.contains(uri)) {
                    return id;
                }
                List<Tag> tags = new ArrayList<>();
                for (Tag t : id.getTagsAsIterable()) {
                    tags.add("uri".equals(t.getKey()) ? Tag.of("uri", UNKNOWN) : t);
                }
                return id.replaceTags(tags);
            }
        };
    }
}
