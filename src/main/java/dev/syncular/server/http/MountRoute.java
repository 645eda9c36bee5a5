package dev.syncular.server.http;

import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.round.ErrorBodies;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.util.Map;

/**
 * The {@code <mount>} prefix of every protocol route (§1.1: {@code POST <mount>/sync}, segments, blobs, realtime,
 * operations, admin, console, the conformance host), read at start-up from {@code syncular.mount}: one image serves
 * any gateway path. The routes themselves live at the root (the REST application path is {@code /}); a request under
 * the mount is rerouted to its path below it, once, and marked; with a mount set, an application path outside it is
 * 404 (§10.1 JSON), as if it did not exist. {@code /q/*} (health, and in dev mode the dev UI) stays where Quarkus puts
 * it. Runs right after the request id and the unread-body handler, before every route.
 */
@ApplicationScoped
public class MountRoute {
    /** Set on a request rerouted from under the mount (routing-context data survives the reroute). */
    static final String MOUNTED = "syncular.mounted";

    private final String mount;

    @Inject
    public MountRoute(SyncularConfig config) {
        this.mount = config.mountPrefix();
    }

    void install(@Observes Router router) {
        if (mount.isEmpty()) {
            return;
        }
        router.route().order(-900).handler(this::route);
    }

    private void route(RoutingContext rc) {
        if (rc.get(MOUNTED) != null) {
            rc.next();
            return;
        }
        String path = rc.normalizedPath();
        if (path.startsWith(mount + "/")) {
            rc.put(MOUNTED, Boolean.TRUE);
            String query = rc.request().query();
            rc.reroute(path.substring(mount.length()) + (query == null ? "" : "?" + query));
        } else if (path.equals("/q") || path.startsWith("/q/")) {
            rc.next();
        } else {
            rc.response()
                    .setStatusCode(404)
                    .putHeader("Content-Type", "application/json")
                    .end(ErrorBodies.body(ErrorCode.NOT_FOUND, "not found", Map.of())
                            .toString());
        }
    }
}
