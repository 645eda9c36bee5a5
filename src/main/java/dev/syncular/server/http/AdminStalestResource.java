package dev.syncular.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.realtime.Staleness;
import dev.syncular.server.realtime.Stalest;
import dev.syncular.server.realtime.StalestClients;
import dev.syncular.server.wire.Json;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * Admin API: the stalest connected clients of the pod that answers ({@link StalestClients}) — the top
 * {@code syncular.slo.stalest} clients and partitions by the age of the oldest commit they are owed, with the part of
 * the path that holds them ({@code fanout_backlog}, {@code socket_backpressure}, {@code pull_interval}), and the
 * clients behind by more than {@code syncular.slo.visibility} by reason. Behind {@link AdminAccess} like every admin
 * route.
 */
@Path("/admin/stalest")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = AdminResource.TAG)
@SecurityRequirement(name = AdminResource.SECURITY_SCHEME)
public class AdminStalestResource {
    @Inject
    AdminAccess access;

    @Inject
    StalestClients stalest;

    @GET
    @Operation(
            summary = "This pod's stalest connected clients and partitions now (syncular.slo.stalest of each), with"
                    + " what holds them, and the clients behind by more than syncular.slo.visibility by reason")
    public Uni<Response> stalest(@HeaderParam("Authorization") String auth) {
        return access.guarded(
                "GET /admin/stalest",
                auth,
                AdminAccess::internalError,
                () -> Uni.createFrom().item(Response.ok(render(stalest)).build()));
    }

    static ObjectNode render(StalestClients stalest) {
        Stalest s = stalest.now();
        ObjectNode out = Json.object()
                .put("podId", stalest.podId())
                .put("objectiveMs", stalest.objectiveMs())
                .put("connections", s.connections());
        ObjectNode over = out.putObject("overObjective");
        for (Staleness r : Staleness.values()) {
            over.put(r.wire, s.overObjective().getOrDefault(r, 0));
        }
        ArrayNode clients = out.putArray("clients");
        for (Stalest.StaleClient c : s.clients()) {
            clients.addObject()
                    .put("partition", c.partition())
                    .put("clientId", c.clientId())
                    .put("actorId", c.actorId())
                    .put("lagMs", c.lagMs())
                    .put("reason", c.reason().wire);
        }
        ArrayNode partitions = out.putArray("partitions");
        for (Stalest.StalePartition p : s.partitions()) {
            partitions
                    .addObject()
                    .put("partition", p.partition())
                    .put("lagMs", p.lagMs())
                    .put("reason", p.reason().wire)
                    .put("clientsBehind", p.clientsBehind());
        }
        return out;
    }
}
