package dev.syncular.server.console;

import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Cookie;
import jakarta.ws.rs.core.Response;
import java.util.Map;
import org.jboss.resteasy.reactive.server.ServerRequestFilter;
import org.jboss.resteasy.reactive.server.SimpleResourceInfo;

/**
 * The door of the live event stream: a server-sent event stream has committed its 200 by the time its first
 * event is sent, so the session is checked before the route runs — 404 while the console is off, 401
 * {@code sync.auth_required} without a live session, with the audit line of every console request.
 */
public class EventStreamGate {
    @Inject
    ConsoleAccess access;

    @ServerRequestFilter
    @ConsoleRoute
    public Uni<Response> gate(SimpleResourceInfo resource, ContainerRequestContext request) {
        if (resource == null
                || resource.getResourceClass() != LiveEventsPage.class
                || !"stream".equals(resource.getMethodName())) {
            return null;
        }
        String route = "GET /console/events/stream";
        if (!access.enabled()) {
            access.audit(route, "-", 404, "sync.not_found");
            return Uni.createFrom().item(ConsoleAccess.disabled());
        }
        Cookie c = request.getCookies().get(ConsoleAccess.COOKIE);
        return access.session(c == null ? null : c.getValue()).map(s -> {
            if (s == null) {
                access.audit(route, "-", 401, "sync.auth_required");
                return ConsoleAccess.error(
                        401, dev.syncular.server.errors.ErrorCode.AUTH_REQUIRED, "console session required", Map.of());
            }
            access.audit(route, s.principal(), 200, "-");
            return null;
        });
    }
}
