package dev.syncular.server.console;

import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import jakarta.inject.Inject;
import jakarta.ws.rs.CookieParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;

/**
 * Signing in to the console and out of it: the form takes the admin token (or, where configured, a JWT carrying
 * the admin role, {@link ConsoleRole}); a match opens a session
 * ({@link ConsoleAccess#open}) and goes to the overview, a mismatch shows the form again (401). Sign-out needs the
 * session's CSRF token like every action.
 */
@Path("/console")
@ConsoleRoute
public class SignInPage {
    @CheckedTemplate
    static class Templates {
        static native TemplateInstance signIn(String base, boolean failed, boolean jwt);
    }

    @Inject
    ConsoleAccess access;

    @GET
    @Operation(hidden = true)
    public Uni<Response> root(@CookieParam(ConsoleAccess.COOKIE) String cookie) {
        return access.page(
                "GET /console",
                cookie,
                s -> Uni.createFrom()
                        .item(Response.seeOther(java.net.URI.create(access.base() + "/overview"))
                                .build()));
    }

    @GET
    @Path("/sign-in")
    @Produces(MediaType.TEXT_HTML)
    @Operation(hidden = true)
    public Response form() {
        if (!access.enabled()) {
            access.audit("GET /console/sign-in", "-", 404, "sync.not_found");
            return ConsoleAccess.disabled();
        }
        return html(
                200, Templates.signIn(access.base(), false, access.jwtSignIn()).render());
    }

    @POST
    @Path("/sign-in")
    @Operation(hidden = true)
    public Uni<Response> signIn(@Context HttpServerRequest request) {
        String route = "POST /console/sign-in";
        return access.signIn(
                route,
                request,
                form -> access.principalFor(form.get("token")).flatMap(grant -> {
                    if (grant == null) {
                        access.signInFailed(request);
                        access.audit(route, "-", 401, "sync.auth_required");
                        return Uni.createFrom()
                                .item(html(
                                        401,
                                        Templates.signIn(access.base(), true, access.jwtSignIn())
                                                .render()));
                    }
                    access.signInSucceeded(request);
                    access.audit(route, grant.principal(), 303, "-");
                    return access.open(grant, access.base() + "/overview");
                }));
    }

    @POST
    @Path("/sign-out")
    @Operation(hidden = true)
    public Uni<Response> signOut(@CookieParam(ConsoleAccess.COOKIE) String cookie, @Context HttpServerRequest request) {
        return access.action("POST /console/sign-out", cookie, request, (s, form) -> access.close(cookie));
    }

    static Response html(int status, String body) {
        return Response.status(status)
                .type(MediaType.TEXT_HTML_TYPE.withCharset("UTF-8"))
                .entity(body)
                .build();
    }
}
