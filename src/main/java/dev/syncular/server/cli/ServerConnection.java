package dev.syncular.server.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The HTTP side of a client (§1.1): {@code POST <mount>/sync} with the SSP2 content type,
 * {@code GET <mount>/segments/{id}} with {@code X-Syncular-Scopes} (§5.5), the blob routes (§5.9) and bare
 * fetches of descriptor URLs, which are the whole grant (§5.4). Every request to the server carries the
 * connection's headers (authentication, partition, anything else); an optional trace receives each request
 * line and each answer's status and headers.
 */
public final class ServerConnection {
    public static final String CONTENT_TYPE = "application/vnd.syncular.sync.v2";
    public static final String SCOPES_HEADER = "X-Syncular-Scopes";
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** One answer, whatever its status. */
    public record Answer(int status, HttpHeaders headers, byte[] body) {
        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        /** The body of a 200, else an {@link HttpFailure}. */
        public byte[] ok() {
            if (status != 200) {
                throw new HttpFailure(status, text());
            }
            return body;
        }
    }

    private final String baseUrl;
    private final Map<String, String> headers;
    private final Consumer<String> trace;

    /**
     * @param baseUrl the server's URL including the mount, e.g. {@code http://localhost:8080} or
     *                {@code https://api.example.com/sync-api}
     * @param headers sent with every request to the server
     * @param trace   receives request lines and answer headers, or {@code null}
     */
    public ServerConnection(String baseUrl, Map<String, String> headers, Consumer<String> trace) {
        this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.headers = new LinkedHashMap<>(headers);
        this.trace = trace;
    }

    /** This connection with one more header (replacing one of that name). */
    public ServerConnection withHeader(String name, String value) {
        Map<String, String> more = new LinkedHashMap<>(headers);
        more.put(name, value);
        return new ServerConnection(baseUrl, more, trace);
    }

    /** One sync round: the request's bytes in, the response's bytes out. */
    public byte[] sync(byte[] request) {
        return exchange("POST", "/sync", Map.of("Content-Type", CONTENT_TYPE), request)
                .ok();
    }

    /** A segment through the server (§5.5), re-authorized against the canonical-JSON scopes. */
    public byte[] segment(String segmentId, String scopesHeader) {
        return exchange("GET", "/segments/" + segmentId, Map.of(SCOPES_HEADER, scopesHeader), null)
                .ok();
    }

    /** A request to {@code <base URL><path>} with this connection's headers plus {@code extra}. */
    public Answer exchange(String method, String path, Map<String, String> extra, byte[] body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + path))
                .timeout(TIMEOUT)
                .method(
                        method,
                        body == null
                                ? HttpRequest.BodyPublishers.noBody()
                                : HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(b::header);
        extra.forEach(b::header);
        return send(b.build(), trace);
    }

    /** A descriptor or presigned URL, fetched with no credentials of the sync server. */
    public byte[] fetch(String url) {
        return send(
                        HttpRequest.newBuilder(URI.create(url))
                                .timeout(TIMEOUT)
                                .GET()
                                .build(),
                        trace)
                .ok();
    }

    private static Answer send(HttpRequest request, Consumer<String> trace) {
        if (trace != null) {
            trace.accept("> " + request.method() + " " + request.uri());
            request.headers().map().forEach((k, v) -> trace.accept("> " + k + ": " + shown(k, v)));
        }
        HttpResponse<byte[]> r;
        try {
            r = HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException("no answer from " + request.uri() + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (trace != null) {
            trace.accept("< " + r.statusCode());
            r.headers().map().forEach((k, v) -> trace.accept("< " + k + ": " + String.join(", ", v)));
        }
        return new Answer(r.statusCode(), r.headers(), r.body());
    }

    /** Header values for the trace; credentials shortened. */
    private static String shown(String name, List<String> values) {
        String v = String.join(", ", values);
        return name.equalsIgnoreCase("authorization") && v.length() > 16 ? v.substring(0, 16) + "…" : v;
    }
}
