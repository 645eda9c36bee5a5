package dev.syncular.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.config.SyncularConfig;
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
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Admin API for backfill checkpoints (§2.4): list, declare, claim, advance and activate. Enabled only when
 * {@code syncular.admin.token} is set; every call carries {@code Authorization: Bearer <token>}.
 */
@Path("/admin/checkpoints")
@Produces(MediaType.APPLICATION_JSON)
public class AdminCheckpointsResource {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Inject
    Backfills backfills;

    @Inject
    SyncularConfig config;

    @GET
    public Uni<Response> list(@HeaderParam("Authorization") String auth, @QueryParam("partition") String partition) {
        return guarded(auth, () -> {
            if (partition == null || partition.isBlank()) {
                return bad("partition query parameter required");
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
    public Uni<Response> declare(@HeaderParam("Authorization") String auth, JsonNode body) {
        return guarded(auth, () -> backfills.declare(text(body, "partition"), text(body, "name"), integer(body, "schemaVersion"))
                .map(c -> Response.ok(render(c)).build()));
    }

    @POST
    @Path("/claim")
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<Response> claim(@HeaderParam("Authorization") String auth, JsonNode body) {
        return guarded(auth, () -> backfills.claim(text(body, "partition"), text(body, "name"), integer(body, "schemaVersion"))
                .map(c -> Response.ok(render(c)).build()));
    }

    @POST
    @Path("/advance")
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<Response> advance(@HeaderParam("Authorization") String auth, JsonNode body) {
        return guarded(auth, () -> backfills.advance(text(body, "partition"), text(body, "name"), number(body, "ownerEpoch"),
                number(body, "watermark"), number(body, "observedRows"))
                .map(ok -> Response.ok(JSON.createObjectNode().put("advanced", ok)).build()));
    }

    @POST
    @Path("/activate")
    @Consumes(MediaType.APPLICATION_JSON)
    public Uni<Response> activate(@HeaderParam("Authorization") String auth, JsonNode body) {
        return guarded(auth, () -> {
            List<String> sources = new ArrayList<>();
            JsonNode s = body == null ? null : body.get("sourceTables");
            if (s == null || !s.isArray()) {
                return bad("sourceTables must be an array of table names");
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

    private Uni<Response> guarded(String auth, Supplier<Uni<Response>> call) {
        String token = config.admin().token().orElse("");
        if (token.isEmpty()) {
            return Uni.createFrom().item(error(404, ErrorCode.NOT_FOUND, "admin API disabled", Map.of()));
        }
        String presented = auth != null && auth.startsWith("Bearer ") ? auth.substring(7).trim() : "";
        if (!MessageDigest.isEqual(token.getBytes(StandardCharsets.UTF_8), presented.getBytes(StandardCharsets.UTF_8))) {
            return Uni.createFrom().item(error(401, ErrorCode.AUTH_REQUIRED, "admin credential required", Map.of()));
        }
        try {
            return call.get().onFailure(StorageException.class).recoverWithItem(e -> storageError((StorageException) e));
        } catch (IllegalArgumentException e) {
            return bad("invalid request body");
        }
    }

    private static Response storageError(StorageException e) {
        if (StorageException.CHECKPOINT_NOT_FOUND.equals(e.code())) {
            return error(404, ErrorCode.NOT_FOUND, "checkpoint not found", Map.of("reason", e.code()));
        }
        if (StorageException.CHECKPOINT_OWNER_CHANGED.equals(e.code())) {
            return error(409, ErrorCode.VERSION_CONFLICT, "checkpoint claimed by another owner", Map.of("reason", e.code()));
        }
        return error(500, ErrorCode.INTERNAL_ERROR, "internal server error", Map.of());
    }

    private static Uni<Response> bad(String message) {
        return Uni.createFrom().item(error(400, ErrorCode.INVALID_REQUEST, message, Map.of()));
    }

    private static Response error(int status, ErrorCode code, String message, Map<String, Object> details) {
        return Response.status(status).type(MediaType.APPLICATION_JSON).entity(ErrorBodies.body(code, message, details))
                .build();
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
