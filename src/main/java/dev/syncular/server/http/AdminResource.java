package dev.syncular.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.jobs.PruningJob;
import dev.syncular.server.observability.OperationalEvents;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.RealtimeSignals;
import dev.syncular.server.storage.SocketDisconnect;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.sync.AuthLeases;
import dev.syncular.server.sync.RowCoverage;
import dev.syncular.server.sync.SyncEngine;
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
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.enums.SecuritySchemeType;
import org.eclipse.microprofile.openapi.annotations.security.SecurityRequirement;
import org.eclipse.microprofile.openapi.annotations.security.SecurityScheme;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * The operator's admin API under {@code <mount>/admin} (the checkpoint routes are
 * {@link AdminCheckpointsResource}'s): partitions (§2.1 log epoch, newest commit, §4.6 horizon, rows per
 * table), a partition's client records (§4.5 cursor, last seen, §8.1 registered subscriptions, wire version),
 * one row with the registered subscriptions that cover it, a pruning pass now (§4.6), the segment store (§5.1)
 * and this pod's operational event tail; recovery: the §2.1 backup-restore log-epoch rotation (every client resets
 * on its next request, every pod's realtime sessions of the partition get {@code reset-required}) and the §7.3.4
 * auth lease revocation by {@code leaseId} (404 {@code sync.not_found} while leases are off); closing an actor's
 * or a client's realtime sockets on every pod (announced on the storage's control channel). Every route is behind {@link AdminAccess}: bearer token, audit line.
 * Requests carry no body; answers are JSON trees (no reflection over user types).
 */
@Path("/admin")
@Produces(MediaType.APPLICATION_JSON)
@Tag(name = AdminResource.TAG, description = "Operator API: enabled by syncular.admin.token")
@SecurityScheme(
        securitySchemeName = AdminResource.SECURITY_SCHEME,
        type = SecuritySchemeType.HTTP,
        scheme = "bearer",
        description = "The value of syncular.admin.token")
@SecurityRequirement(name = AdminResource.SECURITY_SCHEME)
public class AdminResource {
    static final String TAG = "admin";
    static final String SECURITY_SCHEME = "adminToken";
    static final int DEFAULT_PAGE = 100;
    static final int MAX_PAGE = 1000;

    @Inject
    AdminAccess access;

    @Inject
    SyncStorage storage;

    @Inject
    RealtimeSignals signals;

    @Inject
    SchemaWindow window;

    @Inject
    SegmentStore segments;

    @Inject
    PruningJob pruning;

    @Inject
    OperationalEvents events;

    @Inject
    SyncEngine engine;

    @GET
    @Path("/partitions")
    @Operation(summary = "Registered partitions, by id, paged with after and limit (default 100, at most 1000)")
    public Uni<Response> partitions(
            @HeaderParam("Authorization") String auth,
            @QueryParam("after") String after,
            @QueryParam("limit") String limit) {
        return guarded("GET /admin/partitions", auth, () -> {
            int n = limit(limit, MAX_PAGE);
            if (n < 0) {
                return badLimit(MAX_PAGE);
            }
            return storage.listPartitions(AdminAccess.storable(after), n).map(list -> {
                ArrayNode out = Json.array();
                list.forEach(p -> out.add(render(p)));
                return Response.ok(out).build();
            });
        });
    }

    @GET
    @Path("/partitions/{partition}")
    @Operation(summary = "One partition: log epoch, newest commit, pruning horizon and rows per table")
    public Uni<Response> partition(
            @HeaderParam("Authorization") String auth, @PathParam("partition") String partition) {
        return guarded(
                "GET /admin/partitions/{partition}",
                auth,
                () -> registered(
                        AdminAccess.storable(partition),
                        state -> storage.countRows(partition).map(counts -> {
                            ObjectNode o = render(state);
                            ObjectNode rows = o.putObject("rowCounts");
                            counts.forEach(rows::put);
                            return Response.ok(o).build();
                        })));
    }

    @GET
    @Path("/partitions/{partition}/clients")
    @Operation(summary = "The client records of a partition: cursor, last seen, registered subscriptions, wire version")
    public Uni<Response> clients(@HeaderParam("Authorization") String auth, @PathParam("partition") String partition) {
        return guarded(
                "GET /admin/partitions/{partition}/clients",
                auth,
                () -> registered(
                        AdminAccess.storable(partition),
                        state -> storage.listClients(partition).map(list -> {
                            ArrayNode out = Json.array();
                            list.forEach(c -> out.add(render(c)));
                            return Response.ok(out).build();
                        })));
    }

    @GET
    @Path("/partitions/{partition}/tables/{table}/rows/{rowId}")
    @Operation(
            summary =
                    "One row: values, version, column versions, stored scopes, the registered clients whose"
                            + " subscriptions reach it through their effective scopes, and for the others the scope that did not match")
    public Uni<Response> row(
            @HeaderParam("Authorization") String auth,
            @PathParam("partition") String partition,
            @PathParam("table") String table,
            @PathParam("rowId") String rowId) {
        return guarded("GET /admin/partitions/{partition}/tables/{table}/rows/{rowId}", auth, () -> {
            TableSchema schema = window.current().table(table);
            if (schema == null) {
                return Uni.createFrom()
                        .item(AdminAccess.error(404, ErrorCode.NOT_FOUND, "unknown table", Map.of("table", table)));
            }
            List<String> ids = List.of(AdminAccess.storable(rowId));
            return storage.readRows(AdminAccess.storable(partition), table, ids).flatMap(found -> {
                StoredRow row = found.get(rowId);
                if (row == null) {
                    return Uni.createFrom()
                            .item(AdminAccess.error(
                                    404,
                                    ErrorCode.NOT_FOUND,
                                    "row not found",
                                    Map.of("partition", partition, "table", table, "rowId", rowId)));
                }
                return storage.listClients(partition)
                        .map(clients ->
                                Response.ok(render(schema, row, clients)).build());
            });
        });
    }

    @POST
    @Path("/partitions/{partition}/rotate-epoch")
    @Operation(
            summary = "After restoring storage from a backup: rotate the partition's log epoch (§2.1), delete its"
                    + " client cursor records and send reset-required to its realtime sessions on every pod")
    public Uni<Response> rotateEpoch(
            @HeaderParam("Authorization") String auth, @PathParam("partition") String partition) {
        return guarded("POST /admin/partitions/{partition}/rotate-epoch", auth, () -> {
            String p = AdminAccess.storable(partition);
            return registered(p, before -> storage.rotateLogEpoch(p).map(after -> rotated(before, after)));
        });
    }

    @POST
    @Path("/partitions/{partition}/leases/{leaseId}/revoke")
    @Operation(
            summary = "Revoke an auth lease by its leaseId (§7.3.4): the next lease-authorized round of its client"
                    + " fails with sync.auth_lease_revoked; local data is untouched")
    public Uni<Response> revokeLease(
            @HeaderParam("Authorization") String auth,
            @PathParam("partition") String partition,
            @PathParam("leaseId") String leaseId) {
        return guarded("POST /admin/partitions/{partition}/leases/{leaseId}/revoke", auth, () -> {
            AuthLeases leases = engine.leases();
            if (!leases.enabled()) {
                return notFound("auth leases are not enabled", Map.of());
            }
            String p = AdminAccess.storable(partition);
            String id = AdminAccess.storable(leaseId);
            return leases.revoke(p, id)
                    .flatMap(found -> found
                            ? Uni.createFrom()
                                    .item(Response.ok(Json.object()
                                                    .put("partition", p)
                                                    .put("leaseId", id)
                                                    .put("revoked", true))
                                            .build())
                            : notFound("lease not found", Map.of("partition", p, "leaseId", id)));
        });
    }

    @POST
    @Path("/partitions/{partition}/actors/{actorId}/disconnect")
    @Operation(
            summary = "Close every realtime socket of an actor in the partition, on every pod (close code 4403);"
                    + " its clients reconnect and are authenticated again")
    public Uni<Response> disconnectActor(
            @HeaderParam("Authorization") String auth,
            @PathParam("partition") String partition,
            @PathParam("actorId") String actorId) {
        return guarded(
                "POST /admin/partitions/{partition}/actors/{actorId}/disconnect",
                auth,
                () -> disconnect(
                        SocketDisconnect.actor(AdminAccess.storable(partition), AdminAccess.storable(actorId))));
    }

    @POST
    @Path("/partitions/{partition}/clients/{clientId}/disconnect")
    @Operation(
            summary = "Close the realtime sockets of a client in the partition, on every pod (close code 4403);"
                    + " it reconnects and is authenticated again")
    public Uni<Response> disconnectClient(
            @HeaderParam("Authorization") String auth,
            @PathParam("partition") String partition,
            @PathParam("clientId") String clientId) {
        return guarded(
                "POST /admin/partitions/{partition}/clients/{clientId}/disconnect",
                auth,
                () -> disconnect(
                        SocketDisconnect.client(AdminAccess.storable(partition), AdminAccess.storable(clientId))));
    }

    /** 202: announced to every pod over the storage's control channel; each closes its matching sockets. */
    private Uni<Response> disconnect(SocketDisconnect d) {
        return signals.announce(d).map(v -> {
            ObjectNode o = Json.object().put("partition", d.partition());
            if (d.actorId() != null) {
                o.put("actorId", d.actorId());
            } else {
                o.put("clientId", d.clientId());
            }
            return Response.accepted(o.put("announced", true)).build();
        });
    }

    private static Response rotated(PartitionState before, PartitionState after) {
        return Response.ok(Json.object()
                        .put("partition", after.partition())
                        .put("previousLogEpoch", before.logEpoch())
                        .put("logEpoch", after.logEpoch())
                        .put("maxCommitSeq", after.maxCommitSeq()))
                .build();
    }

    private static Uni<Response> notFound(String message, Map<String, Object> details) {
        return Uni.createFrom().item(AdminAccess.error(404, ErrorCode.NOT_FOUND, message, details));
    }

    @POST
    @Path("/prune")
    @Operation(summary = "Run a pruning pass over every partition now, under the configured retention policy")
    public Uni<Response> prune(@HeaderParam("Authorization") String auth) {
        return guarded(
                "POST /admin/prune",
                auth,
                () -> pruning.pruneNow()
                        .map(pass -> Response.ok(Json.object()
                                        .put("removedCommits", pass.removedCommits())
                                        .put("horizonLagCommits", pass.horizonLagCommits()))
                                .build()));
    }

    @GET
    @Path("/segments")
    @Operation(summary = "Segment store statistics: entries, bytes, publications and unexpired publications")
    public Uni<Response> segmentStats(@HeaderParam("Authorization") String auth) {
        return guarded(
                "GET /admin/segments",
                auth,
                () -> segments.stats(System.currentTimeMillis())
                        .map(s -> Response.ok(Json.object()
                                        .put("store", s.store())
                                        .put("segments", s.segments())
                                        .put("bytes", s.bytes())
                                        .put("publications", s.publications())
                                        .put("livePublications", s.livePublications()))
                                .build()));
    }

    @GET
    @Path("/events")
    @Operation(
            summary = "The newest operational events of this pod (rejections, conflicts, gate refusals, prunes),"
                    + " newest first; limit default 100, at most syncular.admin.event-buffer")
    public Uni<Response> events(@HeaderParam("Authorization") String auth, @QueryParam("limit") String limit) {
        return guarded("GET /admin/events", auth, () -> {
            int n = limit(limit, events.capacity());
            if (n < 0) {
                return badLimit(events.capacity());
            }
            ArrayNode out = Json.array();
            for (OperationalEvents.Event e : events.tail(n)) {
                ObjectNode o = out.addObject();
                o.put("seq", e.seq());
                o.put("atMs", e.atMs());
                o.put("kind", e.kind());
                o.put("code", e.code());
                o.put("partition", e.partition());
                o.set("details", Json.valueToTree(e.details()));
            }
            return Uni.createFrom().item(Response.ok(out).build());
        });
    }

    private Uni<Response> guarded(String route, String auth, Supplier<Uni<Response>> call) {
        return access.guarded(route, auth, AdminAccess::internalError, call);
    }

    /** The {@code limit} query parameter: {@link #DEFAULT_PAGE} when absent, {@code -1} when not in 1..max. */
    static int limit(String raw, int max) {
        if (raw == null || raw.isBlank()) {
            return Math.min(DEFAULT_PAGE, max);
        }
        try {
            int n = Integer.parseInt(raw.trim());
            return n >= 1 && n <= max ? n : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    static Uni<Response> badLimit(int max) {
        return Uni.createFrom()
                .item(AdminAccess.error(
                        400,
                        ErrorCode.INVALID_REQUEST,
                        "limit must be a positive integer within the maximum",
                        Map.of("max", max)));
    }

    /** {@code answer} for a registered partition, else 404 {@code sync.not_found}. */
    private Uni<Response> registered(String partition, Function<PartitionState, Uni<Response>> answer) {
        return storage.readPartition(partition)
                .flatMap(state -> state != null
                        ? answer.apply(state)
                        : Uni.createFrom()
                                .item(AdminAccess.error(
                                        404,
                                        ErrorCode.NOT_FOUND,
                                        "partition not found",
                                        Map.of("partition", partition))));
    }

    private static ObjectNode render(PartitionState p) {
        return Json.object()
                .put("partition", p.partition())
                .put("logEpoch", p.logEpoch())
                .put("maxCommitSeq", p.maxCommitSeq())
                .put("horizonSeq", p.horizonSeq())
                .put("createdAtMs", p.createdAtMs())
                .put("lastSeenAtMs", p.lastSeenAtMs());
    }

    private static ObjectNode render(ClientRecord c) {
        ObjectNode o = Json.object()
                .put("clientId", c.clientId())
                .put("actorId", c.actorId())
                .put("cursor", c.cursor())
                .put("lastSeenAtMs", c.updatedAtMs())
                .put("wireVersion", c.wireVersion())
                .put("schemaVersion", c.schemaVersion());
        o.set("subscriptions", subscriptions(c.subscriptionsJson()));
        return o;
    }

    /** The registered subscriptions document (§8.1) as stored; {@code null} when none or unreadable. */
    private static JsonNode subscriptions(String json) {
        if (json == null) {
            return Json.nodes().nullNode();
        }
        try {
            return Json.readTree(json);
        } catch (IOException e) {
            return Json.nodes().nullNode();
        }
    }

    private static ObjectNode render(TableSchema schema, StoredRow row, List<ClientRecord> clients) {
        ObjectNode o = Json.object()
                .put("table", schema.name())
                .put("rowId", row.rowId())
                .put("serverVersion", row.serverVersion());
        ObjectNode values = o.putObject("values");
        ObjectNode versions = o.putObject("columnVersions");
        for (int i = 0; i < schema.columnCount() && i < row.values().length; i++) {
            String column = schema.column(i).name();
            // basic values only (String, Long, Double, Boolean, byte[] as base64): no reflection
            values.set(column, Json.valueToTree(row.values()[i]));
            versions.put(column, row.columnVersions()[i]);
        }
        o.set("scopes", Json.valueToTree(row.scopes()));
        // matching: every subscription the client registered on the table covers the row's scopes with the values
        // that reach the client (recorded effective scopes, §3.2); the others say which scope did not match
        ArrayNode matching = o.putArray("matchingClients");
        ArrayNode notCovering = o.putArray("notCoveringClients");
        for (ClientRecord c : clients) {
            List<RowCoverage.Subscription> subs = RowCoverage.of(c.subscriptionsJson(), schema.name(), row.scopes());
            List<RowCoverage.Subscription> covering =
                    subs.stream().filter(RowCoverage.Subscription::covers).toList();
            String basis = subs.stream().anyMatch(x -> x.basis().equals(RowCoverage.BASIS_REQUESTED))
                    ? RowCoverage.BASIS_REQUESTED
                    : RowCoverage.BASIS_EFFECTIVE;
            if (!covering.isEmpty()) {
                ObjectNode m = matching.addObject()
                        .put("clientId", c.clientId())
                        .put("actorId", c.actorId())
                        .put("basis", basis);
                covering.forEach(x -> m.withArray("subscriptionIds").add(x.subscriptionId()));
                continue;
            }
            ObjectNode m = notCovering.addObject().put("clientId", c.clientId()).put("actorId", c.actorId());
            if (subs.isEmpty()) {
                m.put("reason", "no_subscription");
                continue;
            }
            m.put("basis", basis);
            ArrayNode why = m.putArray("subscriptions");
            for (RowCoverage.Subscription x : subs) {
                ObjectNode w = why.addObject()
                        .put("subscriptionId", x.subscriptionId())
                        .put("reason", x.reason());
                if (x.scopeKey() != null) {
                    w.put("scopeKey", x.scopeKey()).put("rowValue", x.rowValue());
                    x.values().forEach(w.putArray("values")::add);
                }
            }
        }
        return o;
    }
}
