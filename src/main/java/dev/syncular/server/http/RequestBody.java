package dev.syncular.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.round.BodyIntake;
import dev.syncular.server.round.HttpError;
import dev.syncular.server.round.RequestIntake;
import dev.syncular.server.wire.Json;
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
import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The body of a request, read by its route — never by the framework ahead of it. A route first decides what
 * the headers alone decide: content type, the declared {@code Content-Length} against the route's own cap
 * (413 before any byte is read), then authentication (§1.1); only an authenticated request's body is read,
 * and it is cut off at the cap while it arrives (a chunked body declares no length). An unauthenticated or
 * oversized request therefore costs no body memory at all.
 *
 * <p>The caps: {@code POST <mount>/sync} {@code syncular.max-request-bytes}, its chunks fed to the round's intake
 * ({@link #feed}: counted and decoded there, never held whole); {@code PUT <mount>/blobs/{id}}
 * {@code syncular.blobs.max-bytes}, streamed to a file rather than held; the upload grant
 * {@value BlobResource#MAX_GRANT_BODY} bytes; the admin API {@value AdminCheckpointsResource#MAX_BODY} bytes.
 *
 * <p>Quarkus REST pauses every request it routes and resumes it only to read a body parameter; the routes
 * reading through this class declare none. Reading is non-blocking: Vert.x handlers on the request's own
 * event loop. A request refused before its body was read has the rest of its body discarded, bounded, and
 * its HTTP/1.x connection closed ({@link #closeUnread}).
 */
public final class RequestBody {
    /** The most a refused body is read (and discarded) for its sender to see the answer. */
    static final long DRAIN_LIMIT = 32L * 1024 * 1024;

    static final long DRAIN_TIMEOUT_MS = 30_000;
    /** The first allocation of a body buffer: it grows as bytes arrive, never sized from {@code Content-Length}. */
    static final int INITIAL_BUFFER = 16 * 1024;

    private final HttpServerRequest request;
    /** The event loop the request belongs to: its handlers are set there. */
    private final Context context;
    /**
     * The cap and the buffer budget, applied to each chunk as it arrives (a sync round's is its
     * {@link RequestIntake}'s, which counts the chunks fed to it).
     */
    private final BodyIntake intake;

    private final long timeoutMs;
    private final long minRate;

    /**
     * The body of {@code request}, counted by {@code intake} — whose cap and lease were decided from the declared
     * length before (413, 429; {@link BodyIntake#declared}, {@link RequestBodies}) — without reading anything. Call it
     * on the request's event loop, where the route method starts. A body that brings no byte for {@code timeout}, or
     * whose average rate falls below {@code minRate} bytes per second once {@code timeout} has passed, is cut off with
     * 408.
     */
    RequestBody(HttpServerRequest request, BodyIntake intake, Duration timeout, long minRate) {
        this.request = request;
        this.context = Vertx.currentContext();
        this.timeoutMs = Math.max(1, timeout.toMillis());
        this.minRate = minRate;
        this.intake = intake;
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

    /** Gives the body's bytes back to the budget: once the request no longer holds them. Idempotent. */
    public void release() {
        intake.release();
    }

    /**
     * Reads the whole body into memory, at most {@code cap} bytes, each counted against the buffer budget as it
     * arrives: the item is the body; the {@code Uni} fails with {@code tooLarge} as soon as more arrive, with 429
     * {@code sync.rate_limited} when the budget runs out, with 408 when the body arrives too slowly (reading stops
     * there, and the budget gets the bytes back). Subscribe only once the request is authenticated; call
     * {@link #release} once the body (and what was decoded from it) is no longer held.
     */
    public Uni<Buffer> read() {
        Buffer[] body = new Buffer[1];
        // the declared length is at most the cap (checked before), -1 when absent
        long declared = declaredLength(request);
        return this.<Buffer>reading(
                () -> body[0] = Buffer.buffer((int) Math.max(0, Math.min(declared, INITIAL_BUFFER))),
                chunk -> {
                    intake.take(chunk.length());
                    body[0].appendBuffer(chunk);
                    return null;
                },
                () -> body[0]);
    }

    /**
     * Hands the body to {@code sink} chunk by chunk as it arrives — for a body spooled rather than held: the
     * request is paused while {@code sink}'s {@code Uni} runs (one chunk in flight, so a slow sink slows the
     * sender, and its time is not counted against the body's rate), under the same cap and 408 limits as
     * {@link #read}. The item is the number of bytes received; a failing sink fails the read. Subscribe only once
     * the request is authenticated.
     */
    public Uni<Long> stream(Function<Buffer, Uni<Void>> sink) {
        return reading(
                () -> {},
                chunk -> {
                    intake.take(chunk.length());
                    return sink.apply(chunk);
                },
                intake::received);
    }

    /**
     * Feeds the body to a sync round's intake chunk by chunk as it arrives (§1.1; the socket feeds the same intake
     * its messages): the intake counts each chunk under the round's cap and the buffer budget (its refusal stops the
     * read, as for {@link #read}) and decodes it, inline or on a worker, without pausing the request; the same 408
     * limits apply. The item comes at the body's end. Subscribe only once the request is authenticated.
     */
    public Uni<Void> feed(RequestIntake round) {
        return reading(
                () -> {},
                chunk -> {
                    round.feed(chunk);
                    return null;
                },
                () -> null);
    }

    /**
     * The one reading loop: Vert.x handlers on the request's event loop, each chunk passed to {@code accept} — which
     * counts it on {@link #intake} (the cap, the budget), then answers {@code null} when done with it, or a
     * {@code Uni} to wait for with the request paused — then {@code result} at the body's end.
     */
    private <T> Uni<T> reading(Runnable begin, Function<Buffer, Uni<Void>> accept, Supplier<T> result) {
        return Uni.createFrom()
                .<T>emitter(em -> {
                    Runnable start = () -> {
                        begin.run();
                        boolean[] over = new boolean[1];
                        // a chunk with its sink, and the body's end heard meanwhile (completed once the sink is done)
                        boolean[] busy = new boolean[1];
                        boolean[] ended = new boolean[1];
                        long began = System.nanoTime();
                        long[] last = {began};
                        long[] timer = {-1};
                        Consumer<Throwable> stop = e -> {
                            over[0] = true;
                            request.pause();
                            if (timer[0] >= 0) {
                                context.owner().cancelTimer(timer[0]);
                            }
                            intake.release();
                            em.fail(e);
                        };
                        Runnable end = () -> {
                            over[0] = true;
                            if (timer[0] >= 0) {
                                context.owner().cancelTimer(timer[0]);
                            }
                            em.complete(result.get());
                        };
                        request.handler(chunk -> {
                            if (over[0]) {
                                return;
                            }
                            last[0] = System.nanoTime();
                            Uni<Void> pending;
                            try {
                                pending = accept.apply(chunk);
                            } catch (RuntimeException e) {
                                stop.accept(e); // over the cap, the buffer budget spent, or the sink failed
                                return;
                            }
                            if (pending == null) {
                                return;
                            }
                            busy[0] = true;
                            request.pause();
                            pending.subscribe()
                                    .with(
                                            v -> onContext(() -> {
                                                busy[0] = false;
                                                last[0] = System.nanoTime();
                                                if (over[0]) {
                                                    return;
                                                }
                                                if (ended[0]) {
                                                    end.run();
                                                } else {
                                                    request.resume();
                                                }
                                            }),
                                            e -> onContext(() -> {
                                                busy[0] = false;
                                                if (!over[0]) {
                                                    stop.accept(e);
                                                }
                                            }));
                        });
                        request.exceptionHandler(e -> {
                            if (!over[0]) {
                                // the client went away mid-body: nobody reads the answer, but it is no server error
                                stop.accept(incomplete());
                            }
                        });
                        request.endHandler(v -> {
                            if (!over[0]) {
                                if (busy[0]) {
                                    ended[0] = true;
                                } else {
                                    end.run();
                                }
                            }
                        });
                        if (context != null && !request.isEnded()) {
                            long every = Math.max(50, Math.min(1000, timeoutMs / 10));
                            timer[0] = context.owner().setPeriodic(every, id -> {
                                if (over[0]) {
                                    context.owner().cancelTimer(id);
                                    return;
                                }
                                if (busy[0]) {
                                    return; // the sink holds the request: its time is not the sender's
                                }
                                long now = System.nanoTime();
                                long idleMs = (now - last[0]) / 1_000_000;
                                long elapsedMs = (now - began) / 1_000_000;
                                boolean tooSlow = minRate > 0
                                        && elapsedMs >= timeoutMs
                                        && intake.received() * 1000L < minRate * elapsedMs;
                                if (idleMs >= timeoutMs || tooSlow) {
                                    stop.accept(tooSlow());
                                }
                            });
                        }
                        if ("100-continue".equalsIgnoreCase(request.getHeader("Expect"))) {
                            request.response().writeContinue();
                        }
                        request.resume();
                    };
                    onContext(start);
                })
                .onCancellation()
                .invoke(intake::release);
    }

    /** Runs {@code task} on the request's event loop (at once when already there). */
    private void onContext(Runnable task) {
        if (context == null || Vertx.currentContext() == context) {
            task.run();
        } else {
            context.runOnContext(v -> task.run());
        }
    }

    /** 408 {@code sync.invalid_request}: the body did not arrive at the minimum rate (§10.1 JSON, connection closed). */
    static HttpError tooSlow() {
        return new HttpError(408, ErrorCode.INVALID_REQUEST, "request body arrived too slowly");
    }

    /**
     * {@link #read} parsed as one JSON document: {@code null} for an empty body, 400 {@code sync.invalid_request}
     * for one that does not parse.
     */
    public Uni<JsonNode> readJson() {
        return read().onTermination().invoke(this::release).map(body -> {
            if (body.length() == 0) {
                return null;
            }
            try {
                return Json.readTree(new ByteBufInputStream(body.getByteBuf()));
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

    /** Nothing to do once an answer is written. */
    static final Runnable NOTHING_AFTER = () -> {};

    /**
     * After a refusal: when the request carries a body that was not read to its end, the answer says
     * {@code Connection: close} (set here, while its headers are written); once it is written (the returned action,
     * run from the response's end) the rest of the body is read and discarded — never held — so a client that sends
     * its whole body before reading still gets the answer, and the HTTP/1.x connection is closed at the body's end,
     * after {@link #DRAIN_LIMIT} discarded bytes or after {@link #DRAIN_TIMEOUT_MS}, whichever comes first. On
     * HTTP/2 the stream's flow-control window already bounds what an unread body can send:
     * {@link #NOTHING_AFTER}, as for a body read to its end.
     */
    static Runnable closeUnread(RoutingContext rc, int status) {
        HttpServerRequest request = rc.request();
        if (status == 408 && request.version() != HttpVersion.HTTP_2) {
            // a body too slow to wait for: the answer, then the connection ends — no drain
            rc.response().putHeader("Connection", "close");
            return () -> request.connection().close();
        }
        String length = request.getHeader("Content-Length");
        boolean hasBody =
                request.getHeader("Transfer-Encoding") != null || (length != null && !"0".equals(length.trim()));
        if (!hasBody || request.isEnded() || request.version() == HttpVersion.HTTP_2) {
            return NOTHING_AFTER;
        }
        rc.response().putHeader("Connection", "close");
        return () -> {
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
        };
    }
}
