package dev.syncular.server.console;

import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.Operation;

/**
 * The console's own style sheet and ES modules, served from the jar (classpath {@code console/}; in the native
 * image through {@code quarkus.native.resources.includes}): a fixed list, no CDN, no font, no build step. They
 * hold no operator data, so the sign-in form can use them before a session exists.
 */
@Path("/console/assets")
@ConsoleRoute
public class ConsoleAssets {
    private static final Map<String, String> TYPES = Map.of(
            "console.css", "text/css; charset=utf-8",
            "console.js", "text/javascript; charset=utf-8",
            "events.js", "text/javascript; charset=utf-8");

    @Inject
    ConsoleAccess access;

    @GET
    @Path("/{name}")
    @Operation(hidden = true)
    public Response asset(@PathParam("name") String name) {
        String type = TYPES.get(name);
        if (!access.enabled() || type == null) {
            return ConsoleAccess.error(404, dev.syncular.server.errors.ErrorCode.NOT_FOUND, "not found", Map.of());
        }
        try (InputStream in = ConsoleAssets.class.getClassLoader().getResourceAsStream("console/" + name)) {
            if (in == null) {
                throw new IllegalStateException("console asset missing from the build: " + name);
            }
            return Response.ok(in.readAllBytes())
                    .type(type)
                    .header("Cache-Control", "no-cache")
                    .build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
