package dev.syncular.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.policy.ReactionDelivery;
import dev.syncular.server.storage.Reaction;
import dev.syncular.server.wire.Json;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * Admin API for durable reactions (§6.9): list them with their delivery state (paged by id, filtered by partition
 * and status) and put a dead-lettered one back in the queue (attempts and failure cleared, due now). Behind
 * {@link AdminAccess} like every admin route.
 */
@Path("/admin/reactions")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = AdminResource.TAG)
@SecurityRequirement(name = AdminResource.SECURITY_SCHEME)
public class AdminReactionsResource {
    private static final List<String> STATUSES =
            List.of(Reaction.PENDING, Reaction.LEASED, Reaction.COMPLETED, Reaction.DEAD_LETTER);

    @Inject
    AdminAccess access;

    @Inject
    ReactionDelivery delivery;

    @GET
    @Operation(
            summary = "Reactions by id after `after`, of one partition and status when given (pending, leased,"
                    + " completed, dead-letter), at most `limit` (default 100, at most 1000)")
    public Uni<Response> list(
            @HeaderParam("Authorization") String auth,
            @QueryParam("partition") String partition,
            @QueryParam("status") String status,
            @QueryParam("after") String after,
            @QueryParam("limit") String limit) {
        return access.guarded("GET /admin/reactions", auth, AdminAccess::internalError, () -> {
            int n = AdminResource.limit(limit, AdminResource.MAX_PAGE);
            long afterId = after == null || after.isBlank()
                    ? 0
                    : after.trim().matches("\\d{1,18}") ? Long.parseLong(after.trim()) : -1;
            if (n < 0 || afterId < 0) {
                return AdminResource.badLimit(AdminResource.MAX_PAGE);
            }
            if (status != null && !STATUSES.contains(status)) {
                return Uni.createFrom()
                        .item(AdminAccess.error(
                                400,
                                ErrorCode.INVALID_REQUEST,
                                "unknown reaction status",
                                Map.of("statuses", STATUSES)));
            }
            return delivery.store()
                    .list(AdminAccess.storable(partition), status, afterId, n)
                    .map(rows -> {
                        ArrayNode out = Json.array();
                        rows.forEach(r -> out.add(render(r)));
                        return Response.ok(out).build();
                    });
        });
    }

    @POST
    @Path("/{id}/retry")
    @Operation(summary = "Put a dead-lettered reaction back in the queue, due now")
    public Uni<Response> retry(@HeaderParam("Authorization") String auth, @PathParam("id") String id) {
        return access.guarded("POST /admin/reactions/{id}/retry", auth, AdminAccess::internalError, () -> {
            long reactionId;
            try {
                reactionId = Long.parseLong(id);
            } catch (NumberFormatException e) {
                return Uni.createFrom()
                        .item(AdminAccess.error(404, ErrorCode.NOT_FOUND, "reaction not found", Map.of()));
            }
            return delivery.store()
                    .retryDeadLetter(reactionId, System.currentTimeMillis())
                    .flatMap(reset -> delivery.store().find(reactionId).map(r -> {
                        if (r == null) {
                            return AdminAccess.error(
                                    404, ErrorCode.NOT_FOUND, "reaction not found", Map.of("id", reactionId));
                        }
                        if (!reset) {
                            return AdminAccess.error(
                                    409,
                                    ErrorCode.INVALID_REQUEST,
                                    "reaction is not dead-lettered",
                                    Map.of("id", reactionId, "status", r.status()));
                        }
                        return Response.ok(render(r)).build();
                    }));
        });
    }

    static ObjectNode render(Reaction r) {
        ObjectNode o = Json.object()
                .put("id", r.id())
                .put("partition", r.partition())
                .put("clientId", r.clientId())
                .put("clientCommitId", r.clientCommitId())
                .put("commitSeq", r.commitSeq())
                .put("key", r.key())
                .put("type", r.type())
                .put("version", r.version())
                .put("idempotencyKey", r.idempotencyKey())
                .put("status", r.status())
                .put("attempts", r.attempts())
                .put("maxAttempts", r.maxAttempts())
                .put("dueAtMs", r.dueAtMs())
                .put("leaseExpiresAtMs", r.leaseExpiresAtMs())
                .put("lastErrorCode", r.lastErrorCode())
                .put("failedAtMs", r.failedAtMs())
                .put("completedAtMs", r.completedAtMs())
                .put("createdAtMs", r.createdAtMs());
        try {
            o.set("payload", Json.readTree(r.payloadJson()));
            o.set(
                    "lastErrorDetails",
                    r.lastErrorDetailsJson() == null ? null : Json.readTree(r.lastErrorDetailsJson()));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored reaction JSON unreadable", e);
        }
        return o;
    }
}
