package dev.syncular.server.http;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.round.ErrorBodies;
import io.quarkus.runtime.configuration.MemorySize;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.util.Map;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * The server-wide body backstop ({@code quarkus.http.limits.max-body-size}) answered in the §10.1 shape: a request
 * on any path declaring a longer body gets 413 {@code sync.invalid_request} JSON before any route (the framework's
 * own answer has no body), and its HTTP/1.x connection is closed after the answer — the body is never read. Each
 * protocol route applies its own, lower cap after this ({@link RequestBody}).
 */
@ApplicationScoped
public class BodySizeBackstop {
    private final long maxBodySize;

    public BodySizeBackstop(@ConfigProperty(name = "quarkus.http.limits.max-body-size") MemorySize maxBodySize) {
        this.maxBodySize = maxBodySize.asLongValue();
    }

    void install(@Observes Router router) {
        router.route().order(Integer.MIN_VALUE).handler(rc -> {
            HttpServerRequest request = rc.request();
            String value = request.getHeader("Content-Length");
            long declared = -1;
            if (value != null) {
                try {
                    declared = Long.parseLong(value.trim());
                } catch (NumberFormatException e) {
                    declared = -1; // the route answers it (400)
                }
            }
            if (declared <= maxBodySize) {
                rc.next();
                return;
            }
            rc.response()
                    .setStatusCode(413)
                    .putHeader("Content-Type", "application/json")
                    .putHeader(RequestIds.HEADER, RequestIds.generate());
            if (request.version() != HttpVersion.HTTP_2) {
                rc.response().putHeader("Connection", "close");
            }
            rc.response()
                    .end(ErrorBodies.body(
                                    ErrorCode.INVALID_REQUEST, "request body exceeds the server's size limit", Map.of())
                            .toString())
                    .onComplete(done -> {
                        if (request.version() != HttpVersion.HTTP_2) {
                            request.connection().close();
                        }
                    });
        });
    }
}
