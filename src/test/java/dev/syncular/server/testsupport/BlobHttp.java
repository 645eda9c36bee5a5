package dev.syncular.server.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The blob routes over real HTTP (§5.9): {@code PUT/GET <mount>/blobs/{id}} and
 * {@code POST <mount>/blobs/{id}/upload-grant}, authenticated like {@link HttpTransport} (the development
 * authenticator's {@code x-actor-id} and {@code x-syncular-partition} headers); presigned URLs fetched with
 * no credentials at all.
 */
public final class BlobHttp {
    public static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    private final String baseUrl;
    private final String partition;

    public BlobHttp(String baseUrl, String partition) {
        this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.partition = partition;
    }

    public HttpRequest.Builder request(String actor, String path) {
        HttpRequest.Builder b =
                HttpRequest.newBuilder(URI.create(baseUrl + "/blobs/" + path)).timeout(Duration.ofSeconds(60));
        if (actor != null) {
            b.header("x-actor-id", actor);
        }
        if (partition != null) {
            b.header("x-syncular-partition", partition);
        }
        return b;
    }

    public HttpResponse<byte[]> put(String actor, String blobId, byte[] body) {
        return send(request(actor, blobId)
                .header("Content-Type", "application/octet-stream")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body))
                .build());
    }

    public HttpResponse<byte[]> get(String actor, String blobId) {
        return send(request(actor, blobId).GET().build());
    }

    public HttpResponse<byte[]> grant(String actor, String blobId, String json) {
        return send(request(actor, blobId + "/upload-grant")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .build());
    }

    public static HttpResponse<byte[]> send(HttpRequest request) {
        try {
            return HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A presigned URL is the entire grant: no host authentication. */
    public static HttpResponse<byte[]> fetch(String url) {
        return send(HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(60))
                .GET()
                .build());
    }

    public static HttpResponse<byte[]> putTo(String url, byte[] body) {
        return send(HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(60))
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body))
                .build());
    }

    /**
     * A PUT the store must refuse: its status, or {@link #CLOSED_BEFORE_ANSWER} when the store closed the connection
     * before the body was sent (a store may answer, and close, before reading a body it refuses, and the client then
     * reads no answer).
     */
    public static int refusedPut(String url, byte[] body) {
        try {
            return putTo(url, body).statusCode();
        } catch (UncheckedIOException e) {
            return CLOSED_BEFORE_ANSWER;
        }
    }

    /** {@link #refusedPut}: the connection closed before an answer was read. */
    public static final int CLOSED_BEFORE_ANSWER = -1;

    public static String text(HttpResponse<byte[]> r) {
        return new String(r.body(), StandardCharsets.UTF_8);
    }
}
