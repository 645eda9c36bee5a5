package dev.syncular.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.jobs.Backfills;
import dev.syncular.server.storage.StorableText;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredCheckpoint;
import dev.syncular.server.wire.Json;
import dev.syncular.server.wire.WireReader;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import org.jboss.logging.Logger;

/**
 * Admin API for backfill checkpoints (§2.4): list, declare, abandon, claim, advance and activate. Behind
 * {@link AdminAccess} like every admin route: enabled only when {@code syncular.admin.token} is set, every call
 * carries {@code Authorization: Bearer <token>} and leaves an audit line. A body is read only after the token
 * check, under {@value #MAX_BODY} bytes ({@link RequestBody}); identifiers must be storable
 * ({@link StorableText}) and numbers in range, else 400 {@code sync.invalid_request}; activating on a partition
 * that never synced is 404 {@code sync.not_found}.
 */
@Path("/admin/checkpoints")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = AdminResource.TAG)
@SecurityRequirement(name = AdminResource.SECURITY_SCHEME)
public class AdminCheckpointsResource {
    private static final Logger LOG = Logger.getLogger(AdminCheckpointsResource.class);
    /** Body cap of the POST routes (their JSON is a few identifiers and numbers), read after the token check. */
    static final int MAX_BODY = 64 * 1024;

    @Inject
    Backfills backfills;

    @Inject
    AdminAccess access;

    @GET
    @Operation(summary = "The backfill checkpoints of a partition")
    public Uni<Response> list(@HeaderParam("Authorization") String auth, @QueryParam("partition") String partition) {
        return guarded("GET /admin/checkpoints", auth, () -> {
            if (partition == null || partition.isBlank()) {
                return Uni.createFrom().item(AdminAccess.bad("partition query parameter required"));
            }
            return backfills.list(partition).map(list -> {
                ArrayNode out = Json.array();
                list.forEach(c -> out.add(render(c)));
                return Response.ok(out).build();
            });
        });
    }

    @POST
    @Path("/declare")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Declare a backfill checkpoint (idempotent)")
    public Uni<Response> declare(@HeaderParam("Authorization") String auth, @Context HttpServerRequest request) {
        return guarded(
                "POST /admin/checkpoints/declare",
                auth,
                request,
                body -> backfills
                        .declare(text(body, "partition"), text(body, "name"), integer(body, "schemaVersion"))
                        .map(c -> Response.ok(render(c)).build()));
    }

    @POST
    @Path("/abandon")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Abandon a checkpoint that is not activated: the serve gate stops waiting for it")
    public Uni<Response> abandon(@HeaderParam("Authorization") String auth, @Context HttpServerRequest request) {
        return guarded(
                "POST /admin/checkpoints/abandon",
                auth,
                request,
                body -> backfills
                        .abandon(text(body, "partition"), text(body, "name"), integer(body, "schemaVersion"))
                        .map(c -> Response.ok(render(c).put("abandoned", true)).build()));
    }

    @POST
    @Path("/claim")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Claim a checkpoint's backfill: a fresh owner epoch")
    public Uni<Response> claim(@HeaderParam("Authorization") String auth, @Context HttpServerRequest request) {
        return guarded(
                "POST /admin/checkpoints/claim",
                auth,
                request,
                body -> backfills
                        .claim(text(body, "partition"), text(body, "name"), integer(body, "schemaVersion"))
                        .map(c -> Response.ok(render(c)).build()));
    }

    @POST
    @Path("/advance")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Advance the watermark (compare-and-set on the owner epoch)")
    public Uni<Response> advance(@HeaderParam("Authorization") String auth, @Context HttpServerRequest request) {
        return guarded(
                "POST /admin/checkpoints/advance",
                auth,
                request,
                body -> backfills
                        .advance(
                                text(body, "partition"),
                                text(body, "name"),
                                number(body, "ownerEpoch"),
                                number(body, "watermark"),
                                number(body, "observedRows"))
                        .map(ok ->
                                Response.ok(Json.object().put("advanced", ok)).build()));
    }

    @POST
    @Path("/activate")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Activate the checkpoint once no source table changed above the watermark")
    public Uni<Response> activate(@HeaderParam("Authorization") String auth, @Context HttpServerRequest request) {
        return guarded("POST /admin/checkpoints/activate", auth, request, body -> {
            List<String> sources = new ArrayList<>();
            JsonNode s = body == null ? null : body.get("sourceTables");
            if (s == null || !s.isArray()) {
                return Uni.createFrom().item(AdminAccess.bad("sourceTables must be an array of table names"));
            }
            for (JsonNode n : s) {
                if (!n.isTextual() || !StorableText.storableKey(n.asText())) {
                    return Uni.createFrom().item(AdminAccess.bad("sourceTables must be an array of table names"));
                }
                sources.add(n.asText());
            }
            String partition = text(body, "partition");
            return backfills
                    .activate(
                            partition,
                            text(body, "name"),
                            number(body, "ownerEpoch"),
                            number(body, "watermark"),
                            sources)
                    .onFailure(e ->
                            e instanceof StorageException se && StorageException.UNKNOWN_PARTITION.equals(se.code()))
                    .invoke(e -> LOG.infof("checkpoint activation refused: partition %s never synced", partition))
                    .map(r -> Response.ok(Json.object().put("result", r.name().toLowerCase()))
                            .build());
        });
    }

    private static ObjectNode render(StoredCheckpoint c) {
        ObjectNode o = Json.object();
        o.put("partition", c.partition());
        o.put("name", c.name());
        o.put("schemaVersion", c.schemaVersion());
        o.put("state", c.state().dbName);
        o.put("watermark", c.watermark());
        o.put("ownerEpoch", c.ownerEpoch());
        o.put("observedRows", c.observedRows());
        o.put("updatedAtMs", c.updatedAtMs());
        return o;
    }

    private Uni<Response> guarded(String route, String auth, Supplier<Uni<Response>> call) {
        return access.guarded(route, auth, AdminCheckpointsResource::storageError, call);
    }

    /** {@link AdminAccess#guardedJson}: the token, then a JSON body under {@value #MAX_BODY} bytes. */
    private Uni<Response> guarded(
            String route, String auth, HttpServerRequest request, Function<JsonNode, Uni<Response>> call) {
        return access.guardedJson(route, auth, request, MAX_BODY, AdminCheckpointsResource::storageError, call);
    }

    private static Response storageError(StorageException e) {
        if (StorageException.CHECKPOINT_NOT_FOUND.equals(e.code())) {
            return AdminAccess.error(404, ErrorCode.NOT_FOUND, "checkpoint not found", Map.of("reason", e.code()));
        }
        if (StorageException.CHECKPOINT_OWNER_CHANGED.equals(e.code())) {
            return AdminAccess.error(
                    409, ErrorCode.VERSION_CONFLICT, "checkpoint claimed by another owner", Map.of("reason", e.code()));
        }
        if (StorageException.CHECKPOINT_ACTIVATED.equals(e.code())) {
            return AdminAccess.error(
                    409, ErrorCode.VERSION_CONFLICT, "checkpoint already activated", Map.of("reason", e.code()));
        }
        if (StorageException.UNKNOWN_PARTITION.equals(e.code())) {
            // §2.1: a partition that never synced has no registry row, so nothing to activate against
            return AdminAccess.error(404, ErrorCode.NOT_FOUND, "partition not found", Map.of("reason", e.code()));
        }
        return AdminAccess.internalError(e);
    }

    /** A non-empty identifier the storage can key on ({@link StorableText#storableKey}). */
    private static String text(JsonNode body, String field) {
        JsonNode n = body == null ? null : body.get(field);
        if (n == null || !n.isTextual() || n.asText().isEmpty() || !StorableText.storableKey(n.asText())) {
            throw new IllegalArgumentException(field);
        }
        return n.asText();
    }

    /** A JSON integer in {@code [0, 2^53 - 1]}: a float such as {@code 1e19} or a wider integer is refused, never wrapped. */
    private static long number(JsonNode body, String field) {
        return integral(body, field, 0, WireReader.MAX_SAFE_INTEGER);
    }

    /** A schema version: a JSON integer in {@code [1, 2^31 - 1]}. */
    private static int integer(JsonNode body, String field) {
        return (int) integral(body, field, 1, Integer.MAX_VALUE);
    }

    private static long integral(JsonNode body, String field, long min, long max) {
        JsonNode n = body == null ? null : body.get(field);
        if (n == null || !n.isIntegralNumber() || !n.canConvertToLong() || n.asLong() < min || n.asLong() > max) {
            throw new IllegalArgumentException(field);
        }
        return n.asLong();
    }
}
