package dev.syncular.server.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.blobs.BlobContent;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.http.RequestBodies;
import dev.syncular.server.http.RequestBody;
import dev.syncular.server.http.SegmentResource;
import dev.syncular.server.http.SyncResource;
import dev.syncular.server.jobs.Pruner;
import dev.syncular.server.jobs.RetentionPolicy;
import dev.syncular.server.policy.PolicyDocument;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.sync.BlobService;
import dev.syncular.server.sync.SyncRequestContext;
import dev.syncular.server.wire.ColumnType;
import dev.syncular.server.wire.Json;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jboss.resteasy.reactive.RestMulti;
import org.jboss.resteasy.reactive.RestResponse;

/**
 * The conformance host's HTTP surface (docs/CONFORMANCE.md): instances, their {@code /sync} and
 * segment routes through the same bindings as production, and the host-controlled calls. Every route
 * answers 404 unless {@code syncular.conformance.enabled=true}.
 */
@Path("/__conformance")
public class ConformanceResource {
    /** Cap of the JSON bodies of the host-controlled calls, read only once the host is known to be enabled. */
    private static final long MAX_BODY = 1024 * 1024;

    @Inject
    ConformanceHost host;

    @Inject
    SyncResource syncBinding;

    @Inject
    RequestBodies bodies;

    private void requireEnabled() {
        if (!host.enabled()) {
            throw new SyncError(ErrorCode.NOT_FOUND, "not found");
        }
    }

    private static SyncRequestContext actor(HttpServerRequest request, ConformanceInstance i) {
        String actor = request.getHeader("x-actor-id");
        if (actor == null || actor.isBlank()) {
            throw new SyncError(ErrorCode.AUTH_REQUIRED, "authentication required");
        }
        return new SyncRequestContext(actor.trim(), i.partition);
    }

    @GET
    @Path("/capabilities")
    @Produces(MediaType.APPLICATION_JSON)
    public ObjectNode capabilities() {
        requireEnabled();
        ObjectNode o = Json.object();
        o.put("name", "syncular-server-java");
        // only what really works
        o.putArray("capabilities")
                .add("signed-urls")
                .add("blobs")
                .add("crdt")
                .add("validators")
                .add("commit-validators")
                .add("leases")
                .add("backup-restore")
                .add("idempotency-fault")
                .add("blob-presign");
        return o;
    }

    @POST
    @Path("/instances")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<ObjectNode> create(@Context HttpServerRequest request) {
        requireEnabled();
        return bodies.open(request, MAX_BODY, RequestBody::tooLarge)
                .readJson()
                .chain(options -> host.create(options))
                .map(i -> Json.object().put("id", i.id()));
    }

    @POST
    @Path("/instances/{id}/sync")
    @Produces(SyncResource.CONTENT_TYPE)
    public RestMulti<Buffer> sync(@PathParam("id") String id, @Context HttpServerRequest request) {
        requireEnabled();
        ConformanceInstance i = host.get(id);
        return syncBinding.handle(request, i.engine, Uni.createFrom().item(() -> actor(request, i)));
    }

    @GET
    @Path("/instances/{id}/segments/{segmentId}")
    public Uni<RestResponse<byte[]>> segment(
            @PathParam("id") String id, @PathParam("segmentId") String segmentId, @Context HttpServerRequest request) {
        requireEnabled();
        ConformanceInstance i = host.get(id);
        return SegmentResource.serve(i.engine, Uni.createFrom().item(() -> actor(request, i)), segmentId, request);
    }

    @POST
    @Path("/instances/{id}/call/{method}")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public Uni<ObjectNode> call(
            @PathParam("id") String id, @PathParam("method") String method, @Context HttpServerRequest request) {
        requireEnabled();
        ConformanceInstance i = host.get(id);
        return bodies.open(request, MAX_BODY, RequestBody::tooLarge)
                .readJson()
                .chain(body -> dispatch(i, method, body == null ? Json.array() : body.path("args")))
                .map(result -> {
                    ObjectNode o = Json.object();
                    o.set("result", result);
                    return o;
                });
    }

    private Uni<JsonNode> dispatch(ConformanceInstance i, String method, JsonNode args) {
        switch (method) {
            case "setAllowedScopes": {
                Map<String, List<String>> scopes = new LinkedHashMap<>();
                for (Iterator<Map.Entry<String, JsonNode>> it = args.path(1).fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = it.next();
                    List<String> values = new ArrayList<>();
                    e.getValue().forEach(v -> values.add(v.asText()));
                    scopes.put(e.getKey(), List.copyOf(values));
                }
                i.allowed.put(args.path(0).asText(), scopes);
                return done(null);
            }
            case "setResolverFailing":
                i.resolverFailing.set(args.path(0).asBoolean());
                return done(null);
            case "setResolverOutage":
                i.resolverOutage.set(args.path(0).asBoolean());
                return done(null);
            case "revokeLease": {
                // §7.3.4 revokeLease(partition, leaseId)
                if (!i.leases.enabled()) {
                    return Uni.createFrom().failure(new SyncError(ErrorCode.NOT_FOUND, "auth leases are not enabled"));
                }
                String leaseId = args.path(0).asText();
                return i.leases.revoke(i.partition, leaseId).map(found -> {
                    if (!found) {
                        throw new SyncError(ErrorCode.NOT_FOUND, "lease not found", Map.of("leaseId", leaseId));
                    }
                    return Json.nodes().nullNode();
                });
            }
            case "failNextIdempotencyLookup":
                i.failNextIdempotencyLookup.set(true);
                return done(null);
            case "captureBackup":
                return i.backup.capture().map(v -> (JsonNode) Json.nodes().nullNode());
            case "restoreBackup":
                // §2.1: restoring storage to an earlier point rotates the log epoch before serving again
                return i.backup
                        .restore()
                        .chain(() -> i.storage.readPartition(i.partition))
                        .chain(state -> state == null
                                ? Uni.createFrom().voidItem()
                                : i.storage.rotateLogEpoch(i.partition).replaceWithVoid())
                        .map(v -> (JsonNode) Json.nodes().nullNode());
            case "advanceClock":
                return done(
                        Json.nodes().numberNode(i.clock.addAndGet(args.path(0).asLong())));
            case "nowMs":
                return done(Json.nodes().numberNode(i.clock.get()));
            case "getMaxCommitSeq":
                return i.storage.readPartition(i.partition).map(s ->
                        (JsonNode) Json.nodes().numberNode(s == null ? 0 : s.maxCommitSeq()));
            case "getHorizonSeq":
                return i.storage.readPartition(i.partition).map(s ->
                        (JsonNode) Json.nodes().numberNode(s == null ? 0 : s.horizonSeq()));
            case "prune": {
                JsonNode o = args.path(0);
                RetentionPolicy policy = new RetentionPolicy(
                        Duration.ofMillis(o.path("activeWindowMs")
                                .asLong(RetentionPolicy.DEFAULTS.activeWindow().toMillis())),
                        o.path("minRetainedCommits").asInt(RetentionPolicy.DEFAULTS.keepNewest()),
                        RetentionPolicy.DEFAULTS.pushResultRetention());
                return new Pruner(i.storage, policy)
                        .pruneAll(i.clock.get())
                        .flatMap(removed -> i.storage.readPartition(i.partition))
                        .map(s -> (JsonNode) Json.nodes().numberNode(s == null ? 0 : s.horizonSeq()));
            }
            case "setSignedUrlTtlSeconds":
                i.setSignedUrlTtl(args.path(0).asLong());
                return done(null);
            case "fetchSegmentUrl": {
                // The host plays the CDN: the URL is the whole grant (§5.4).
                URI uri = URI.create(args.path(0).asText());
                String path = uri.getPath();
                String segmentId = path.substring(path.lastIndexOf('/') + 1);
                String token = null;
                for (String kv : String.valueOf(uri.getRawQuery()).split("&")) {
                    if (kv.startsWith("st=")) {
                        token = URLDecoder.decode(kv.substring(3), StandardCharsets.UTF_8);
                    }
                }
                return i.engine.downloadSigned(segmentId, token).map(d ->
                        (JsonNode) Json.object().put("$u8", HexFormat.of().formatHex(d.bytes())));
            }
            case "uploadBlob": {
                // §5.9.3 through the production service: content address verified, size cap, idempotent
                String blobId = args.path(1).asText();
                byte[] bytes = HexFormat.of().parseHex(args.path(2).path("$u8").asText());
                String mediaType = args.path(3).isTextual() ? args.path(3).asText() : null;
                return Uni.createFrom()
                        .item(() -> BlobContent.verify(blobId, bytes))
                        .flatMap(content ->
                                i.blobs.upload(actorContext(i, args.path(0).asText()), content, mediaType))
                        .map(info -> (JsonNode) Json.nodes().nullNode());
            }
            case "setBlobPresign":
                // §5.9.3 / §5.9.5: the host's object store presigns (upload grants, always-issue downloads) or not
                i.objects.presign.set(args.path(0).asBoolean());
                return done(null);
            case "uploadBlobGrant": {
                // §5.9.3: host authentication only, the size cap against the declared length, present marker
                String blobId = args.path(1).asText();
                return i.blobs
                        .grant(
                                actorContext(i, args.path(0).asText()),
                                blobId,
                                args.path(2).asLong())
                        .map(g -> {
                            ObjectNode o = Json.object();
                            if (g instanceof BlobService.Grant.Url u) {
                                o.put("kind", "url")
                                        .put("url", u.url().url())
                                        .put("urlExpiresAtMs", u.url().expiresAtMs());
                            } else {
                                o.put("kind", g instanceof BlobService.Grant.Present ? "present" : "none");
                            }
                            return (JsonNode) o;
                        });
            }
            case "putBlobUrl":
                // the object host's PUT: the URL is the whole grant (no actor)
                return i.objects
                        .put(
                                args.path(0).asText(),
                                HexFormat.of().parseHex(args.path(1).path("$u8").asText()))
                        .map(v -> (JsonNode) Json.nodes().nullNode());
            case "fetchBlobUrl":
                // the CDN's GET of an always-issue download URL
                return i.objects.fetch(args.path(0).asText()).map(b ->
                        (JsonNode) Json.object().put("$u8", HexFormat.of().formatHex(b)));
            case "downloadBlob":
                // §5.9.5: row-derived authorization; the embedded store serves bytes
                return i.blobs
                        .download(
                                actorContext(i, args.path(0).asText()),
                                args.path(1).asText())
                        .flatMap(d -> {
                            ObjectNode o = Json.object();
                            if (d instanceof BlobService.Download.Stream b) {
                                // the catalog's blobs are small: gathered into one hex string
                                return b.chunks()
                                        .collect()
                                        .in(ByteArrayOutputStream::new, ByteArrayOutputStream::writeBytes)
                                        .map(bytes -> {
                                            o.put("kind", "bytes");
                                            o.putObject("bytes")
                                                    .put("$u8", HexFormat.of().formatHex(bytes.toByteArray()));
                                            return (JsonNode) o;
                                        });
                            } else if (d instanceof BlobService.Download.Url u) {
                                o.put("kind", "url")
                                        .put("url", u.url().url())
                                        .put("urlExpiresAtMs", u.url().expiresAtMs());
                            }
                            return Uni.createFrom().item((JsonNode) o);
                        });
            case "installValidators":
                // §6.7 declarative rules: [{table, rule}]; [] switches validation off
                i.installPolicy(policyArgument(() -> PolicyDocument.rowValidators(args.path(0), i.schema)), null);
                return done(null);
            case "installCommitValidator":
                // §6.8: one requireSiblingWhen rule; no argument removes it
                i.installPolicy(
                        null,
                        args.path(0).isObject()
                                ? policyArgument(() -> PolicyDocument.commitValidators(args.path(0), i.schema))
                                : List.of());
                return done(null);
            case "readRows":
                return readRows(i, args.path(0).asText());
            case "close":
                return host.close(i.id).map(v -> (JsonNode) Json.nodes().nullNode());
            default:
                return Uni.createFrom()
                        .failure(new SyncError(
                                ErrorCode.NOT_FOUND, "unsupported conformance call", Map.of("method", method)));
        }
    }

    /** A rule the policy compiler refuses is the caller's error: 400 {@code sync.invalid_request}. */
    private static <T> T policyArgument(Supplier<T> compile) {
        try {
            return compile.get();
        } catch (IllegalArgumentException e) {
            throw new SyncError(ErrorCode.INVALID_REQUEST, "invalid policy rule");
        }
    }

    private static SyncRequestContext actorContext(ConformanceInstance i, String actorId) {
        if (actorId == null || actorId.isBlank()) {
            throw new SyncError(ErrorCode.AUTH_REQUIRED, "actor id required");
        }
        return new SyncRequestContext(actorId, i.partition);
    }

    private static Uni<JsonNode> done(JsonNode value) {
        return Uni.createFrom().item(value == null ? Json.nodes().nullNode() : value);
    }

    /**
     * {@code readRows(table)}: {@code [{rowId, version, values, scopes}]} by row id; bytes as {@code {"$bytes": hex}},
     * json and blob_ref values as their stored text (a JSON string), SQL NULL as JSON {@code null}.
     */
    private Uni<JsonNode> readRows(ConformanceInstance i, String table) {
        TableSchema t = i.schema.table(table);
        if (t == null) {
            return Uni.createFrom()
                    .failure(new SyncError(ErrorCode.UNKNOWN_TABLE, "unknown table", Map.of("table", table)));
        }
        return i.storage.readAllRows(i.partition, table).map(rows -> {
            ArrayNode out = Json.array();
            for (StoredRow r : rows) {
                ObjectNode row = out.addObject();
                row.put("rowId", r.rowId());
                row.put("version", r.serverVersion());
                ObjectNode values = row.putObject("values");
                for (int c = 0; c < t.columnCount(); c++) {
                    values.set(t.column(c).name(), value(t.column(c).type(), r.values()[c]));
                }
                ObjectNode scopes = row.putObject("scopes");
                r.scopes().forEach(scopes::put);
            }
            return out;
        });
    }

    private static JsonNode value(ColumnType type, Object v) {
        if (v == null) {
            return Json.nodes().nullNode();
        }
        return switch (type) {
            case BYTES, CRDT -> Json.object().put("$bytes", HexFormat.of().formatHex((byte[]) v));
            case INTEGER -> Json.nodes().numberNode((Long) v);
            case FLOAT -> Json.nodes().numberNode((Double) v);
            case BOOLEAN -> Json.nodes().booleanNode((Boolean) v);
            // string, and json/blob_ref: §2.4 preserves a json value verbatim, so the stored text itself is
            // rendered, as a client decodes it from the wire (a stored document null is the string "null")
            default -> Json.nodes().textNode((String) v);
        };
    }
}
