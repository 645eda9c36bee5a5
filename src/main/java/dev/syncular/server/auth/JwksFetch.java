package dev.syncular.server.auth;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One JWKS download with the JDK {@link HttpClient}'s asynchronous API (no thread waits on the network): a GET
 * bounded in time as a whole (connect, headers and body: {@code syncular.auth.jwt.jwks-fetch-timeout}) and in
 * size ({@code jwks-max-bytes}, checked against {@code Content-Length} and again on the bytes as they arrive),
 * then parsed into {@link VerificationKeys}. Every outcome is one of {@link Outcome}; the future never fails.
 */
final class JwksFetch {
    /** How a fetch ended; {@link #code} is the {@code outcome} tag of {@code syncular_jwks_fetches_total}. */
    enum Outcome {
        OK("ok"),
        /** The answer's status was not 200. */
        HTTP_ERROR("http_error"),
        /** Connect, headers or body took longer than the timeout. */
        TIMEOUT("timeout"),
        /** The answer was larger than the cap. */
        TOO_LARGE("too_large"),
        /** The body was not a JWKS with at least one usable public signature key. */
        INVALID("invalid"),
        /** The connection failed (refused, reset, DNS, TLS). */
        UNREACHABLE("unreachable");

        final String code;

        Outcome(String code) {
            this.code = code;
        }
    }

    /** The key set ({@code null} unless {@link Outcome#OK}) and the outcome. */
    record Result(Outcome outcome, VerificationKeys keys) {}

    private final HttpClient client;
    private final URI uri;
    private final Duration timeout;
    private final long maxBytes;
    private final ScheduledExecutorService timer;

    /** {@code executor} runs the client's completions and the timeout; nothing on it blocks. */
    JwksFetch(URI uri, Duration timeout, long maxBytes, ScheduledExecutorService executor) {
        this.client = HttpClient.newBuilder()
                .connectTimeout(timeout)
                .followRedirects(HttpClient.Redirect.NORMAL)
                .executor(executor)
                .build();
        this.uri = uri;
        this.timeout = timeout;
        this.maxBytes = maxBytes;
        this.timer = executor;
    }

    /** Starts a download; the future completes within about the timeout, never exceptionally. */
    CompletableFuture<Result> start() {
        HttpRequest request = HttpRequest.newBuilder(uri)
                .timeout(timeout)
                .header("Accept", "application/json")
                .GET()
                .build();
        AtomicReference<CappedBody> body = new AtomicReference<>();
        CompletableFuture<Result> result = new CompletableFuture<>();
        CompletableFuture<HttpResponse<byte[]>> exchange;
        try {
            exchange = client.sendAsync(request, info -> {
                CappedBody b = new CappedBody(info, maxBytes);
                body.set(b);
                return b;
            });
        } catch (RuntimeException e) {
            result.complete(new Result(Outcome.UNREACHABLE, null));
            return result;
        }
        // parsed on the fetch's own executor, not on the client's selector thread
        exchange.whenCompleteAsync(
                        (response, failure) -> result.complete(
                                failure == null ? parse(response.body()) : new Result(outcome(failure), null)),
                        timer)
                .exceptionally(closed -> {
                    result.complete(new Result(Outcome.UNREACHABLE, null)); // the executor was shut down
                    return null;
                });
        // the whole exchange, body included, within the timeout: past it, the download is abandoned and aborted
        Runnable abandon = () -> {
            if (result.complete(new Result(Outcome.TIMEOUT, null))) {
                exchange.cancel(true);
                CappedBody b = body.get();
                if (b != null) {
                    b.cancel();
                }
            }
        };
        try {
            ScheduledFuture<?> deadline = timer.schedule(abandon, timeout.toMillis(), TimeUnit.MILLISECONDS);
            result.whenComplete((r, e) -> deadline.cancel(false));
        } catch (RejectedExecutionException closed) {
            abandon.run();
        }
        return result;
    }

    private static Result parse(byte[] body) {
        try {
            return new Result(Outcome.OK, VerificationKeys.parse(new String(body, StandardCharsets.UTF_8), false));
        } catch (IllegalArgumentException e) {
            return new Result(Outcome.INVALID, null);
        }
    }

    private static Outcome outcome(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof Refused refused) {
                return refused.outcome;
            }
            if (t instanceof TimeoutException || t instanceof HttpTimeoutException) {
                return Outcome.TIMEOUT;
            }
        }
        return Outcome.UNREACHABLE;
    }

    /** A failure of the answer itself (status, size), carried through the client's future. */
    private static final class Refused extends RuntimeException {
        final Outcome outcome;

        Refused(Outcome outcome) {
            super(outcome.code, null, false, false);
            this.outcome = outcome;
        }
    }

    /**
     * Collects a 200 answer up to the cap; a different status, a {@code Content-Length} over the cap or more
     * bytes than the cap cancel the exchange at once (nothing more is read).
     */
    private static final class CappedBody implements HttpResponse.BodySubscriber<byte[]> {
        private final CompletableFuture<byte[]> result = new CompletableFuture<>();
        private final HttpResponse.ResponseInfo info;
        private final long maxBytes;
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private volatile Flow.Subscription subscription;

        CappedBody(HttpResponse.ResponseInfo info, long maxBytes) {
            this.info = info;
            this.maxBytes = maxBytes;
        }

        @Override
        public CompletionStage<byte[]> getBody() {
            return result;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            if (info.statusCode() != 200) {
                refuse(Outcome.HTTP_ERROR);
            } else if (info.headers().firstValueAsLong("Content-Length").orElse(0) > maxBytes) {
                refuse(Outcome.TOO_LARGE);
            } else {
                s.request(Long.MAX_VALUE);
            }
        }

        @Override
        public void onNext(List<ByteBuffer> items) {
            if (result.isDone()) {
                return;
            }
            for (ByteBuffer b : items) {
                if (bytes.size() + (long) b.remaining() > maxBytes) {
                    refuse(Outcome.TOO_LARGE);
                    return;
                }
                byte[] chunk = new byte[b.remaining()];
                b.get(chunk);
                bytes.write(chunk, 0, chunk.length);
            }
        }

        @Override
        public void onError(Throwable t) {
            result.completeExceptionally(t);
        }

        @Override
        public void onComplete() {
            result.complete(bytes.toByteArray());
        }

        void cancel() {
            Flow.Subscription s = subscription;
            if (s != null) {
                s.cancel();
            }
        }

        private void refuse(Outcome outcome) {
            cancel();
            result.completeExceptionally(new Refused(outcome));
        }
    }
}
