package dev.syncular.server.http;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.rollout.SchemaChangePlanner;
import dev.syncular.server.schema.SchemaException;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import jakarta.inject.Inject;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * {@code POST <mount>/admin/schema/plan}: the plan of a schema change against this deployment, before it runs
 * ({@link SchemaChangePlanner}; docs/SCHEMA.md "First, the plan"). The body is the new schema document (IR or short
 * form), whatever content type it declares; {@code days} (1 to {@value SchemaChangePlanner#MAX_DAYS}, default
 * {@value SchemaChangePlanner#DEFAULT_DAYS}) bounds the client records counted; each
 * {@code checkpoint=<partition>:<name>} is a backfill checkpoint the new build declares. Nothing is changed. Behind
 * {@link AdminAccess}; the body is read after the token check, under {@value #MAX_BODY} bytes (413 above). A body
 * that is no JSON object, or a bad parameter, is 400 {@code sync.invalid_request}; a document that does not compile
 * is a plan that is not allowed, naming the rule, table and column.
 */
@Path("/admin/schema")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = AdminResource.TAG)
@SecurityRequirement(name = AdminResource.SECURITY_SCHEME)
public class AdminSchemaResource {
    /** Body cap: a schema document of a few hundred tables. */
    static final int MAX_BODY = 1024 * 1024;

    @Inject
    SchemaChangePlanner planner;

    @Inject
    AdminAccess access;

    @POST
    @Path("/plan")
    @Operation(summary = "The plan of a schema change: allowed or why not, DDL, backfills, window, clients, serve gate")
    public Uni<Response> plan(
            @HeaderParam("Authorization") String auth,
            @QueryParam("days") String days,
            @QueryParam("checkpoint") List<String> checkpoints,
            @Context HttpServerRequest request) {
        return access.guardedJson(
                "POST /admin/schema/plan",
                auth,
                request,
                MAX_BODY,
                AdminAccess::internalError,
                // deferred: a document that does not compile throws while planning, and is answered below
                json -> Uni.createFrom()
                        .deferred(() -> planner.plan(
                                json, SchemaChangePlanner.checkpoints(checkpoints), SchemaChangePlanner.days(days)))
                        .map(plan -> Response.ok(plan).build())
                        .onFailure(SchemaException.class)
                        .recoverWithItem(e -> AdminAccess.error(
                                400,
                                ErrorCode.INVALID_REQUEST,
                                "the body is not a schema document",
                                Map.of("reason", ((SchemaException) e).reason()))));
    }
}
