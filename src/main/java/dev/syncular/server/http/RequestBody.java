package dev.syncular.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.errors.ErrorCode;
import io.netty.buffer.ByteBufInputStream;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.util.function.Supplier;

/**
 * The body of a request, read by its route — never by the framework ahead of it. A route first decides what
 * the headers alone decide: content type, the declared {@code Content-Length} against the route's own cap
 * (413 before any byte is read), then authentication (§1.1); only an authenticated request's body is read,
 * and it is cut off at the cap while it arrives (a chunked body declares no length). An unauthenticated or
 * oversized request therefore costs no body memory at all.
 *
 * <p>The caps: {@code POST <mount>/sync} {@code syncular.max-request-bytes}; {@code PUT <mount>/blobs/{id}}
 * {@code syncular.blobs.max-bytes}, streamed to a file rather than held; the upload grant
 * {@value BlobResource#MAX_GRANT_BODY} bytes; the admin API {@value AdminCheckpointsResource#MAX_BODY} bytes.
 *
 * <p>Quarkus REST pauses every request it routes and resumes it only to read a body parameter; the routes
 * reading through this class declare none. Reading is non-blocking: Vert.x handlers on the request's own
 * event loop. A request refused before its body was read has the rest of its body discarded, bounded, and
 * its HTTP/1.x connection closed ({@link #closeUnread}).
 */
public final class RequestBody {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The most a refused body is read (and discarded) for its sender to see the answer. */
    static final long DRAIN_LIMIT = 32L * 1024 * 1024;
    static final long DRAIN_TIMEOUT_MS = 30_000;

    private final HttpServerRequest request;
    private final long cap;
    private final Supplier<? extends RuntimeException> tooLarge;
    private final long declared;
    /** The event loop the request belongs to: its handlers are set there. */
    private final Context context;

    /**
     * Checks the declared length against {@code cap} (413 {@code tooLarge}, or 400 for a malformed
     * {@code Content-Length}) without reading anything. Call it on the request's event loop, where the route
     * method starts.
     */
    public RequestBody(HttpServerRequest request, long cap, Supplier<? extends RuntimeException> tooLarge) {
        this.request = request;
        this.cap = cap;
        this.tooLarge = tooLarge;
        this.declared = declaredLength(request);
        this.context = Vertx.currentContext();
        if (declared > cap) {
            throw tooLarge.get();
        }
    }

    /** The declared {@code Content-Length}, or -1 when absent; 400 {@code sync.invalid_request} when malformed. */
    static long declaredLength(HttpServerRequest request) {
        String value = request.getHeader("Content-Length");
        if (value == null) {
            return -1;
        }
        try {
            long length = Long.parseLong(value.trim());
            if (length >= 0) {
                return length;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new HttpError(400, ErrorCode.INVALID_REQUEST, "invalid Content-Length");
    }

    /**
     * Reads the whole body into memory, at most {@code cap} bytes: the item is the body; the {@code Uni} fails
     * with {@code tooLarge} as soon as more arrive (reading stops there). Subscribe only once the request is
     * authenticated.
     */
    public Uni<Buffer> read() {
        return Uni.createFrom().emitter(em -> {
            Runnable start = () -> {
                Buffer body = Buffer.buffer((int) Math.max(0, Math.min(declared, Math.min(cap, 1 << 20))));
                boolean[] over = new boolean[1];
                request.handler(chunk -> {
                    if (over[0]) {
                        return;
                    }
                    if (body.length() + (long) chunk.length() > cap) {
                        over[0] = true;
                        request.pause();
                        em.fail(tooLarge.get());
                        return;
                    }
                    body.appendBuffer(chunk);
                });
                request.exceptionHandler(e -> {
                    if (!over[0]) {
                        // the client went away mid-body: nobody reads the answer, but it is no server error
                        em.fail(incomplete());
                    }
                });
                request.endHandler(v -> {
                    if (!over[0]) {
                        em.complete(body);
                    }
                });
                if ("100-continue".equalsIgnoreCase(request.getHeader("Expect"))) {
                    request.response().writeContinue();
                }
                request.resume();
            };
            if (context == null || Vertx.currentContext() == context) {
                start.run();
            } else {
                context.runOnContext(v -> start.run());
            }
        });
    }

    /**
     * {@link #read} parsed as one JSON document: {@code null} for an empty body, 400 {@code sync.invalid_request}
     * for one that does not parse.
     */
    public Uni<JsonNode> readJson() {
        return read().map(body -> {
            if (body.length() == 0) {
                return null;
            }
            try {
                return JSON.readTree(new ByteBufInputStream(body.getByteBuf()));
            } catch (IOException e) {
                throw new HttpError(400, ErrorCode.INVALID_REQUEST, "request body is not valid JSON");
            }
        });
    }

    /** 400 {@code sync.invalid_request}: the body broke off (the connection closed) before its end. */
    static HttpError incomplete() {
        return new HttpError(400, ErrorCode.INVALID_REQUEST, "request body ended before its end");
    }

    /** 413 {@code sync.invalid_request} for a body above a route's fixed cap. */
    public static HttpError tooLarge() {
        return new HttpError(413, ErrorCode.INVALID_REQUEST, "request body exceeds the route's size limit");
    }

    /**
     * After a refusal: when the request carries a body that was not read to its end, the answer says
     * {@code Connection: close}; once it is written the rest of the body is read and discarded — never held —
     * so a client that sends its whole body before reading still gets the answer, and the HTTP/1.x
     * connection is closed at the body's end, after {@link #DRAIN_LIMIT} discarded bytes or after
     * {@link #DRAIN_TIMEOUT_MS}, whichever comes first. On HTTP/2 the stream's flow-control window already
     * bounds what an unread body can send.
     */
    static void closeUnread(RoutingContext rc) {
        if (rc == null) {
            return;
        }
        HttpServerRequest request = rc.request();
        String length = request.getHeader("Content-Length");
        boolean hasBody = request.getHeader("Transfer-Encoding") != null || (length != null && !"0".equals(length.trim()));
        if (!hasBody || request.isEnded() || request.version() == HttpVersion.HTTP_2) {
            return;
        }
        rc.response().putHeader("Connection", "close");
        rc.addEndHandler(v -> {
            HttpConnection connection = request.connection();
            long timer = rc.vertx().setTimer(DRAIN_TIMEOUT_MS, id -> connection.close());
            long[] discarded = new long[1];
            request.handler(chunk -> {
                discarded[0] += chunk.length();
                if (discarded[0] > DRAIN_LIMIT) {
                    request.pause();
                    connection.close();
                }
            });
            request.exceptionHandler(e -> connection.close());
            request.endHandler(x -> {
                rc.vertx().cancelTimer(timer);
                connection.close();
            });
            request.resume();
        });
    }

}
