package dev.syncular.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.auth.Authenticator;
import dev.syncular.server.blobs.BlobIds;
import dev.syncular.server.blobs.PresignedUrl;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.observability.BlobMetrics;
import dev.syncular.server.round.ContentCoding;
import dev.syncular.server.round.HttpError;
import dev.syncular.server.round.SyncRound;
import dev.syncular.server.sync.BlobService;
import dev.syncular.server.wire.Json;
import dev.syncular.server.wire.WireReader;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.jboss.resteasy.reactive.RestMulti;

/**
 * The blob routes (§5.9), under the mount prefix like {@code /sync} and {@code /segments}:
 *
 * <ul>
 *   <li>{@code PUT <mount>/blobs/{blobId}} (§5.9.3): host authentication; the body (identity or
 *       {@code Content-Encoding: gzip}, hashed after decoding) must hash to {@code blobId} — else 400
 *       {@code blob.hash_mismatch}; above {@code syncular.blobs.max-bytes} by declared
 *       {@code Content-Length} or by the bytes actually received — 413 {@code blob.too_large}. 200 with an empty
 *       body, also for a blob already stored. A {@code Content-Type} other than
 *       {@code application/octet-stream} is kept as the blob's advisory media type.
 *   <li>{@code POST <mount>/blobs/{blobId}/upload-grant} (§5.9.3), body {@code {"byteLength":n,"mediaType":"…"?}}:
 *       host authentication; the cap is applied to {@code byteLength} first (413). Answers
 *       {@code {"present":true}} when the blob is stored already, {@code {"url","urlExpiresAtMs"}} (a presigned
 *       PUT bound to {@code Content-Length: byteLength}) when the store is S3, and {@code {}} when the store
 *       cannot presign — the client then uploads through the direct PUT.
 *   <li>{@code GET <mount>/blobs/{blobId}} (§5.9.5): host authentication; 404 {@code blob.not_found} when not
 *       stored, 403 {@code blob.forbidden} unless a row referencing the blob is visible to the actor (scopes
 *       resolved once; a failing resolver denies). Then, with the S3 store, {@code {"url","urlExpiresAtMs"}}
 *       (always-issue, a presigned GET, no bytes); else the bytes with {@code Content-Type} from the stored
 *       media type (or {@code application/octet-stream}), {@code ETag: "<blobId>"},
 *       {@code Cache-Control: private, max-age=0}, {@code Vary: Authorization, Accept-Encoding}, and 304 for a
 *       matching {@code If-None-Match} (checked after authorization, so a cached ETag never bypasses it).
 * </ul>
 *
 * A malformed {@code blobId} is 400 {@code sync.invalid_request}. Every error is §10.1 JSON ({@link ErrorMapper}).
 *
 * <p>Memory: no blob is ever whole in the heap. The PUT is authenticated before its body is read, then its body
 * is read as every route's is ({@link RequestBody#stream}: under the cap, the 408 limits) and hashed and spooled
 * to a temporary file on a worker thread, one chunk at a time ({@link BlobSpool}), which the store reads back in
 * chunks; the GET streams the store's chunks as the client takes them ({@code RestMulti}, backpressured).
 * Every route is non-blocking (file work runs on the worker pool, the S3 store runs its SDK calls there itself).
 */
@Path("/blobs")
public class BlobResource {
    static final String CACHE_CONTROL = "private, max-age=0";
    static final String VARY = "Authorization, Accept-Encoding";
    private static final Duration STORE_TIMEOUT = Duration.ofMinutes(5);
    /** The upload grant's body cap: its JSON is a length and a media type. */
    static final int MAX_GRANT_BODY = 16 * 1024;

    private static final int MAX_MEDIA_TYPE = 255;
    /** type/subtype[;params], printable ASCII only — safe to persist and to echo as a header. */
    private static final Pattern MEDIA_TYPE =
            Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+/[!#$%&'*+.^_`|~0-9A-Za-z-]+(\\s*;[\\x20-\\x7e]*)?");

    private final BlobService blobs;
    private final Authenticator authenticator;
    private final BlobMetrics metrics;
    private final RequestBodies bodies;

    @Inject
    public BlobResource(BlobService blobs, Authenticator authenticator, BlobMetrics metrics, RequestBodies bodies) {
        this.blobs = blobs;
        this.authenticator = authenticator;
        this.metrics = metrics;
        this.bodies = bodies;
    }

    static void requireBlobId(String blobId) {
        if (!BlobIds.isValid(blobId)) {
            throw new HttpError(400, ErrorCode.INVALID_REQUEST, "malformed blob id");
        }
    }

    /** The advisory media type worth keeping, or {@code null}. */
    static String mediaType(String contentType) {
        if (contentType == null) {
            return null;
        }
        String t = contentType.trim();
        if (t.isEmpty()
                || t.length() > MAX_MEDIA_TYPE
                || !MEDIA_TYPE.matcher(t).matches()
                || t.regionMatches(true, 0, "application/octet-stream", 0, "application/octet-stream".length())) {
            return null;
        }
        return t;
    }

    // ------------------------------------------------------------------------------------------- PUT

    @PUT
    @Path("/{blobId}")
    public Uni<Response> upload(@PathParam("blobId") String blobId, @Context HttpServerRequest request) {
        requireBlobId(blobId);
        boolean gzip = ContentCoding.ofRequest(request.getHeader("Content-Encoding")) == ContentCoding.GZIP;
        long declared = RequestBody.declaredLength(request);
        long cap = blobs.maxBytes();
        if (declared > cap) {
            throw blobs.tooLarge(blobId, declared);
        }
        Supplier<SyncError> tooLarge = () -> blobs.tooLarge(blobId, -1);
        RequestBody body = bodies.spooled(request, cap, tooLarge);
        String mediaType = mediaType(request.getHeader("Content-Type"));
        return SyncRound.authenticated(authenticator.authenticate(request))
                .chain(ctx -> BlobSpool.open(blobId, gzip, cap, tooLarge)
                        .chain(spool -> body.stream(spool::write)
                                .chain(spool::content)
                                .chain(content -> blobs.upload(ctx, content, mediaType)
                                        .ifNoItem()
                                        .after(STORE_TIMEOUT)
                                        .fail()
                                        .invoke(() -> metrics.uploaded(content.byteLength())))
                                .onTermination()
                                .call(spool::delete)))
                .map(stored -> Response.ok().build());
    }

    // ------------------------------------------------------------------------------------------- grant

    @POST
    @Path("/{blobId}/upload-grant")
    public Uni<Response> grant(@PathParam("blobId") String blobId, @Context HttpServerRequest request) {
        requireBlobId(blobId);
        RequestBody body = bodies.open(request, MAX_GRANT_BODY, RequestBody::tooLarge);
        return authenticator
                .authenticate(request)
                .flatMap(ctx -> body.read()
                        .onTermination()
                        .invoke(body::release)
                        .flatMap(bytes -> blobs.grant(ctx, blobId, parseGrant(bytes.getBytes()))))
                .map(grant -> {
                    ObjectNode n = JsonNodeFactory.instance.objectNode();
                    if (grant instanceof BlobService.Grant.Present) {
                        n.put("present", true);
                    } else if (grant instanceof BlobService.Grant.Url u) {
                        putUrl(n, u.url());
                    }
                    return json(n).header("Cache-Control", "no-store").build();
                });
    }

    /** {@code {"byteLength":<int ≥ 0>,"mediaType":"…"?}}; the declared length. */
    static long parseGrant(byte[] body) {
        if (body == null || body.length == 0) {
            throw new HttpError(400, ErrorCode.INVALID_REQUEST, "upload grant body must be a small JSON object");
        }
        JsonNode root;
        try {
            root = Json.readTree(body);
        } catch (IOException e) {
            throw new HttpError(400, ErrorCode.INVALID_REQUEST, "upload grant body is not valid JSON");
        }
        if (root == null || !root.isObject()) {
            throw new HttpError(400, ErrorCode.INVALID_REQUEST, "upload grant body must be a JSON object");
        }
        JsonNode length = root.get("byteLength");
        if (length == null
                || !length.isIntegralNumber()
                || !length.canConvertToLong()
                || length.asLong() < 0
                || length.asLong() > WireReader.MAX_SAFE_INTEGER) {
            throw new HttpError(400, ErrorCode.INVALID_REQUEST, "byteLength must be a non-negative safe integer");
        }
        JsonNode media = root.get("mediaType");
        if (media != null && !media.isTextual()) {
            throw new HttpError(400, ErrorCode.INVALID_REQUEST, "mediaType must be a string");
        }
        return length.asLong();
    }

    // ------------------------------------------------------------------------------------------- GET

    @GET
    @Path("/{blobId}")
    public RestMulti<Buffer> download(@PathParam("blobId") String blobId, @Context HttpServerRequest request) {
        requireBlobId(blobId);
        String ifNoneMatch = request.getHeader("If-None-Match");
        Uni<Answer> answer = authenticator
                .authenticate(request)
                .flatMap(ctx -> blobs.download(ctx, blobId))
                .map(download -> {
                    if (download instanceof BlobService.Download.Url u) {
                        ObjectNode n = JsonNodeFactory.instance.objectNode();
                        putUrl(n, u.url());
                        // a URL is a short-lived grant: never cached
                        return new Answer(
                                200,
                                Map.of(
                                        "Content-Type",
                                        List.of(MediaType.APPLICATION_JSON),
                                        "Cache-Control",
                                        List.of("no-store"),
                                        "Vary",
                                        List.of(VARY)),
                                Multi.createFrom().item(Buffer.buffer(n.toString())));
                    }
                    BlobService.Download.Stream b = (BlobService.Download.Stream) download;
                    String etag = "\"" + blobId + "\"";
                    if (SegmentResource.matches(ifNoneMatch, blobId)) {
                        return new Answer(
                                304,
                                Map.of(
                                        "ETag",
                                        List.of(etag),
                                        "Cache-Control",
                                        List.of(CACHE_CONTROL),
                                        "Vary",
                                        List.of(VARY)),
                                Multi.createFrom().empty());
                    }
                    String type = mediaType(b.info().mediaType());
                    return new Answer(
                            200,
                            Map.of(
                                    "Content-Type", List.of(type == null ? MediaType.APPLICATION_OCTET_STREAM : type),
                                    "ETag", List.of(etag),
                                    "Cache-Control", List.of(CACHE_CONTROL),
                                    "Vary", List.of(VARY),
                                    // opaque user bytes on the API origin: never sniffed, never active content
                                    "X-Content-Type-Options", List.of("nosniff"),
                                    "Content-Security-Policy", List.of("default-src 'none'; sandbox")),
                            b.chunks()
                                    .invoke(chunk -> metrics.downloaded(chunk.length))
                                    .map(Buffer::buffer));
                });
        return RestMulti.fromUniResponse(answer, Answer::body, Answer::headers, Answer::status);
    }

    /** A download's answer: its status and headers, and its body as chunks streamed from the store. */
    private record Answer(int status, Map<String, List<String>> headers, Multi<Buffer> body) {}

    private static void putUrl(ObjectNode n, PresignedUrl url) {
        n.put("url", url.url());
        n.put("urlExpiresAtMs", url.expiresAtMs());
    }

    private static Response.ResponseBuilder json(ObjectNode body) {
        return Response.ok(body, MediaType.APPLICATION_JSON_TYPE);
    }
}
