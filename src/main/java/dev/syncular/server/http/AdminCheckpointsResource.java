package dev.syncular.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.ops.Backfills;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredCheckpoint;
import dev.syncular.server.errors.ErrorCode;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Admin API for backfill checkpoints (§2.4): list, declare, claim, advance and activate. Behind
 * {@link AdminAccess} like every admin route: enabled only when {@code syncular.admin.token} is set, every call
 * carries {@code Authorization: Bearer <token>} and leaves an audit line.
 */
@Path("/admin/checkpoints")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = AdminResource.TAG)
@SecurityRequirement(name = AdminResource.SECURITY_SCHEME)
public class AdminCheckpointsResource {
    private static final ObjectMapper JSON = new ObjectMapper();

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
                ArrayNode out = JSON.createArrayNode();
                list.forEach(c -> out.add(render(c)));
                return Response.ok(out).build();
            });
        });
    }

    @POST
    @Path("/declare")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Declare a backfill checkpoint (idempotent)")
    public Uni<Response> declare(@HeaderParam("Authorization") String auth, JsonNode body) {
        return guarded("POST /admin/checkpoints/declare", auth, () -> backfills.declare(text(body, "partition"), text(body, "name"), integer(body, "schemaVersion"))
                .map(c -> Response.ok(render(c)).build()));
    }

    @POST
    @Path("/claim")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Claim a checkpoint's backfill: a fresh owner epoch")
    public Uni<Response> claim(@HeaderParam("Authorization") String auth, JsonNode body) {
        return guarded("POST /admin/checkpoints/claim", auth, () -> backfills.claim(text(body, "partition"), text(body, "name"), integer(body, "schemaVersion"))
                .map(c -> Response.ok(render(c)).build()));
    }

    @POST
    @Path("/advance")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Advance the watermark (compare-and-set on the owner epoch)")
    public Uni<Response> advance(@HeaderParam("Authorization") String auth, JsonNode body) {
        return guarded("POST /admin/checkpoints/advance", auth, () -> backfills.advance(text(body, "partition"), text(body, "name"), number(body, "ownerEpoch"),
                number(body, "watermark"), number(body, "observedRows"))
                .map(ok -> Response.ok(JSON.createObjectNode().put("advanced", ok)).build()));
    }

    @POST
    @Path("/activate")
    @Consumes(MediaType.APPLICATION_JSON)
    @Operation(summary = "Activate the checkpoint once no source table changed above the watermark")
    public Uni<Response> activate(@HeaderParam("Authorization") String auth, JsonNode body) {
        return guarded("POST /admin/checkpoints/activate", auth, () -> {
            List<String> sources = new ArrayList<>();
            JsonNode s = body == null ? null : body.get("sourceTables");
            if (s == null || !s.isArray()) {
                return Uni.createFrom().item(AdminAccess.bad("sourceTables must be an array of table names"));
            }
            s.forEach(n -> sources.add(n.asText()));
            return backfills.activate(text(body, "partition"), text(body, "name"), number(body, "ownerEpoch"),
                    number(body, "watermark"), sources)
                    .map(r -> Response.ok(JSON.createObjectNode().put("result", r.name().toLowerCase())).build());
        });
    }

    private static ObjectNode render(StoredCheckpoint c) {
        ObjectNode o = JSON.createObjectNode();
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

    private static Response storageError(StorageException e) {
        if (StorageException.CHECKPOINT_NOT_FOUND.equals(e.code())) {
            return AdminAccess.error(404, ErrorCode.NOT_FOUND, "checkpoint not found", Map.of("reason", e.code()));
        }
        if (StorageException.CHECKPOINT_OWNER_CHANGED.equals(e.code())) {
            return AdminAccess.error(409, ErrorCode.VERSION_CONFLICT, "checkpoint claimed by another owner",
                    Map.of("reason", e.code()));
        }
        return AdminAccess.internalError(e);
    }

    private static String text(JsonNode body, String field) {
        JsonNode n = body == null ? null : body.get(field);
        if (n == null || !n.isTextual() || n.asText().isEmpty()) {
            throw new IllegalArgumentException(field);
        }
        return n.asText();
    }

    private static long number(JsonNode body, String field) {
        JsonNode n = body == null ? null : body.get(field);
        if (n == null || !n.canConvertToExactIntegral()) {
            throw new IllegalArgumentException(field);
        }
        return n.asLong();
    }

    private static int integer(JsonNode body, String field) {
        return Math.toIntExact(number(body, field));
    }
}
