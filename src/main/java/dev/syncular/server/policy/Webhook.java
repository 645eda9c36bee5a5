package dev.syncular.server.policy;

import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.core.buffer.Buffer;
import io.vertx.mutiny.core.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * One webhook endpoint: a JSON {@code POST} signed with {@code Syncular-Signature: t=<unix ms>,v1=<hex
 * HMAC-SHA256 of "<t>.<body>" under the shared secret>}, with a hard timeout over the whole exchange. Runs on the
 * Vert.x HTTP client: nothing blocks a thread while the call is in flight.
 */
final class Webhook {
    static final String SIGNATURE_HEADER = "Syncular-Signature";
    private final HttpClient client;
    private final String url;
    private final byte[] secret;
    private final Duration timeout;

    /** The status and body of an answered call. */
    record Answer(int status, String body) {
    }

    Webhook(Vertx vertx, String url, String secret, Duration timeout) {
        if (secret == null || secret.isBlank()) {
            throw new IllegalArgumentException("a webhook needs a signing secret");
        }
        java.net.URI.create(url); // a malformed url fails at start-up
        this.client = vertx.createHttpClient(new HttpClientOptions()
                .setConnectTimeout((int) Math.max(1, timeout.toMillis()))
                .setKeepAlive(true));
        this.url = url;
        this.secret = secret.getBytes(StandardCharsets.UTF_8);
        this.timeout = timeout;
    }

    /** Posts {@code json}; fails on a connection error or when no answer arrived within the timeout. */
    Uni<Answer> post(String json, Map<String, String> headers, long nowMs) {
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setAbsoluteURI(url)
                .putHeader("Content-Type", "application/json")
                .putHeader(SIGNATURE_HEADER, signature(nowMs, json));
        headers.forEach(options::putHeader);
        return client.request(options)
                .flatMap(req -> req.send(Buffer.buffer(json)))
                .flatMap(resp -> resp.body().map(b -> new Answer(resp.statusCode(), b.toString(StandardCharsets.UTF_8))))
                .ifNoItem().after(timeout).failWith(() -> new java.util.concurrent.TimeoutException("webhook timeout"));
    }

    String signature(long nowMs, String body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            byte[] sig = mac.doFinal((nowMs + "." + body).getBytes(StandardCharsets.UTF_8));
            return "t=" + nowMs + ",v1=" + HexFormat.of().formatHex(sig);
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    void close() {
        client.closeAndAwait();
    }
}
