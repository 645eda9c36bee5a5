package dev.syncular.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.auth.Authenticator;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.observability.SyncMetrics;
import dev.syncular.server.round.ContentCoding;
import dev.syncular.server.round.HttpError;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.SyncObserver;
import dev.syncular.server.sync.SyncRequestContext;
import dev.syncular.server.wire.Json;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.http.HttpServerRequest;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.Context;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jboss.resteasy.reactive.RestResponse;

/**
 * {@code GET <mount>/segments/{segmentId}} (§5.5): the direct bootstrap-segment download. Every request is
 * re-authorized by the engine ({@link SyncEngine#authorizeSegment}) against the requested scopes in
 * {@value #SCOPES_HEADER} — a segment id is not a bearer capability. Only after authorization does an
 * {@code If-None-Match} hit answer 304, so a cached ETag never bypasses revocation.
 *
 * <p>Errors (JSON, §10.1): 401 {@code sync.auth_required}; 400 {@code sync.invalid_request} for a missing or
 * malformed scopes header; 403 {@code sync.forbidden}; 404 {@code sync.not_found} / {@code sync.segment_expired}.
 *
 * <p>Threading: authorization is non-blocking (event loop); compressing a multi-MB segment is CPU work and
 * hops to a worker thread first.
 */
@Path("/segments")
public class SegmentResource {
    public static final String SCOPES_HEADER = "X-Syncular-Scopes";
    static final String VARY = "Authorization, X-Syncular-Scopes, Accept-Encoding";
    static final String CACHE_CONTROL = "private, max-age=0";

    private final SyncEngine engine;
    private final Authenticator authenticator;
    private final SyncMetrics metrics;

    @Inject
    public SegmentResource(SyncEngine engine, Authenticator authenticator, SyncMetrics metrics) {
        this.engine = engine;
        this.authenticator = authenticator;
        this.metrics = metrics;
    }

    @GET
    @Path("/{segmentId}")
    public Uni<RestResponse<byte[]>> download(
            @PathParam("segmentId") String segmentId, @Context HttpServerRequest request) {
        return serve(engine, authenticator.authenticate(request), segmentId, request)
                .invoke(r -> {
                    if (r.getStatus() == 200) {
                        metrics.segmentBytes(SyncObserver.Delivery.DIRECT, r.getEntity().length);
                    }
                });
    }

    /** The §5.5 download binding for any engine (the production one, or a conformance-host instance's). */
    public static Uni<RestResponse<byte[]>> serve(
            SyncEngine engine, Uni<SyncRequestContext> auth, String segmentId, HttpServerRequest request) {
        String scopesHeader = request.getHeader(SCOPES_HEADER);
        String ifNoneMatch = request.getHeader("If-None-Match");
        ContentCoding coding = ContentCoding.negotiate(request.getHeader("Accept-Encoding"));
        String token = request.getParam("st");
        // §5.4: a signed URL is the entire grant (no host authentication); otherwise re-authorize (§5.5).
        Uni<SyncEngine.SegmentDownload> authorized = token != null
                ? engine.downloadSigned(segmentId, token)
                : auth.flatMap(ctx -> engine.authorizeSegment(ctx, segmentId, parseScopes(scopesHeader)));
        return authorized.flatMap(download -> {
            String etag = "\"" + download.segmentId() + "\"";
            if (matches(ifNoneMatch, download.segmentId())) {
                return Uni.createFrom()
                        .item(RestResponse.ResponseBuilder.<byte[]>create(RestResponse.Status.NOT_MODIFIED)
                                .header("ETag", etag)
                                .header("Cache-Control", CACHE_CONTROL)
                                .header("Vary", VARY)
                                .build());
            }
            Uni<byte[]> body = coding == ContentCoding.IDENTITY
                    ? Uni.createFrom().item(download.bytes())
                    : Uni.createFrom()
                            .item(download.bytes())
                            .emitOn(Infrastructure.getDefaultWorkerPool())
                            .map(coding::encodeAll);
            return body.map(bytes -> {
                RestResponse.ResponseBuilder<byte[]> r = RestResponse.ResponseBuilder.ok(
                                bytes, "application/octet-stream")
                        .header("ETag", etag)
                        .header("Cache-Control", CACHE_CONTROL)
                        .header("Vary", VARY);
                if (coding != ContentCoding.IDENTITY) {
                    r.header("Content-Encoding", coding.token);
                }
                return r.build();
            });
        });
    }

    /**
     * The requested scope map (§5.5): a JSON object of scope variable → array of string values. The engine
     * validates keys and values against the table; this only checks the shape.
     */
    static Map<String, List<String>> parseScopes(String header) {
        if (header == null || header.isBlank()) {
            throw new HttpError(400, ErrorCode.INVALID_REQUEST, SCOPES_HEADER + " header is required");
        }
        JsonNode root;
        try {
            root = Json.readTree(header);
        } catch (Exception e) {
            throw new HttpError(400, ErrorCode.INVALID_REQUEST, SCOPES_HEADER + " is not valid JSON");
        }
        if (root == null || !root.isObject()) {
            throw new HttpError(400, ErrorCode.INVALID_REQUEST, SCOPES_HEADER + " must be a JSON object");
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isArray()) {
                throw new HttpError(
                        400, ErrorCode.INVALID_REQUEST, SCOPES_HEADER + " values must be arrays of strings");
            }
            List<String> values = new ArrayList<>();
            for (JsonNode v : e.getValue()) {
                if (!v.isTextual()) {
                    throw new HttpError(
                            400, ErrorCode.INVALID_REQUEST, SCOPES_HEADER + " values must be arrays of strings");
                }
                values.add(v.asText());
            }
            out.put(e.getKey(), List.copyOf(values));
        }
        return out;
    }

    /** RFC 9110 §13.1.2: weak comparison over a list of entity tags, or {@code *}. */
    static boolean matches(String ifNoneMatch, String segmentId) {
        if (ifNoneMatch == null) {
            return false;
        }
        for (String tag : ifNoneMatch.split(",")) {
            String t = tag.trim();
            if (t.equals("*")) {
                return true;
            }
            if (t.startsWith("W/")) {
                t = t.substring(2);
            }
            if (t.equals("\"" + segmentId + "\"")) {
                return true;
            }
        }
        return false;
    }
}
