package dev.syncular.server.http;

import io.vertx.ext.web.Router;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Every error answer (status ≥ 400) to a request whose body was not read to its end — thrown, returned or mapped,
 * on any route — discards the rest of that body, bounded, and closes the connection
 * ({@link RequestBody#closeUnread}). A route handler right after {@link RequestIds}, watching each response's
 * headers as they are written, rather than a REST response filter run on every resource: one filter handler less
 * in every sync round, and Quarkus's own refusals (before any resource) are covered too.
 */
@ApplicationScoped
public class UnreadBodies {

    void install(@Observes Router router) {
        router.route().order(-999).handler(rc -> {
            Runnable[] after = {RequestBody.NOTHING_AFTER};
            rc.addHeadersEndHandler(v -> {
                int status = rc.response().getStatusCode();
                if (status >= 400) {
                    after[0] = RequestBody.closeUnread(rc, status);
                }
            });
            // registered now: once the response is being written, no end handler can be added any more
            rc.addEndHandler(v -> after[0].run());
            rc.next();
        });
    }
}
