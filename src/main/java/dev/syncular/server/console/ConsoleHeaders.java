package dev.syncular.server.console;

import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.core.MultivaluedMap;
import org.jboss.resteasy.reactive.server.ServerResponseFilter;

/**
 * The security headers of every console response: a strict Content-Security-Policy (everything from the
 * server itself, no inline script or style, no framing, forms post back only to the console), no MIME sniffing,
 * no referrer, and no caching of pages that show operator data. Bound to the console's pages ({@link ConsoleRoute}).
 */
public class ConsoleHeaders {
    public static final String CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self';"
            + " connect-src 'self'; font-src 'none'; object-src 'none'; base-uri 'none'; form-action 'self';"
            + " frame-ancestors 'none'";

    @ServerResponseFilter
    @ConsoleRoute
    public void secure(ContainerResponseContext response) {
        MultivaluedMap<String, Object> h = response.getHeaders();
        h.putSingle("Content-Security-Policy", CSP);
        h.putSingle("X-Content-Type-Options", "nosniff");
        h.putSingle("Referrer-Policy", "no-referrer");
        h.putSingle("X-Frame-Options", "DENY");
        if (!h.containsKey("Cache-Control")) {
            h.putSingle("Cache-Control", "no-store");
        }
    }
}
