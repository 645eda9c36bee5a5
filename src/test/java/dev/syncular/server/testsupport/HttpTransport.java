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
 * {@link SyncTestClient.Transport} over real HTTP: {@code POST <mount>/sync} with the SSP2 content type
 * and {@code GET <mount>/segments/{id}} with {@code X-Syncular-Scopes} (§1.1, §5.5). The actor travels in
 * the development authenticator's {@code x-actor-id} header, the partition in {@code x-syncular-partition}.
 */
public final class HttpTransport implements SyncTestClient.Transport {
    public static final String CONTENT_TYPE = "application/vnd.syncular.sync.v2";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    private final String baseUrl;
    private final String partition;

    /** @param baseUrl server URL including the mount, e.g. {@code http://localhost:8081} */
    public HttpTransport(String baseUrl, String partition) {
        this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.partition = partition;
    }

    private HttpRequest.Builder request(String path, SyncTestClient client) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(Duration.ofSeconds(60))
                .header("x-actor-id", client.actorId);
        if (partition != null) {
            b.header("x-syncular-partition", partition);
        }
        return b;
    }

    private static byte[] send(HttpRequest request) {
        try {
            HttpResponse<byte[]> response = HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
            if (response.statusCode() != 200) {
                throw new SyncTestClient.TransportFailure(response.statusCode(),
                        new String(response.body(), StandardCharsets.UTF_8));
            }
            return response.body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public byte[] roundTrip(SyncTestClient client, byte[] body) {
        return send(request("/sync", client).header("content-type", CONTENT_TYPE)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build());
    }

    @Override
    public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
        return send(request("/segments/" + segmentId, client).header("X-Syncular-Scopes", scopesHeader).GET().build());
    }
}
