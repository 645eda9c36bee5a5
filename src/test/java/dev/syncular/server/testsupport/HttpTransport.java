package dev.syncular.server.testsupport;

import dev.syncular.server.cli.ServerConnection;
import java.util.HashMap;
import java.util.Map;

/**
 * {@link SyncTestClient.Transport} over real HTTP, the command-line client's {@link ServerConnection}:
 * {@code POST <mount>/sync} and {@code GET <mount>/segments/{id}} (§1.1, §5.5). The actor travels in the
 * development authenticator's {@code x-actor-id} header, the partition in {@code x-syncular-partition}.
 */
public final class HttpTransport implements SyncTestClient.Transport {
    public static final String CONTENT_TYPE = ServerConnection.CONTENT_TYPE;

    private final ServerConnection server;

    /** @param baseUrl server URL including the mount, e.g. {@code http://localhost:8081} */
    public HttpTransport(String baseUrl, String partition) {
        Map<String, String> headers = new HashMap<>();
        if (partition != null) {
            headers.put("x-syncular-partition", partition);
        }
        this.server = new ServerConnection(baseUrl, headers, null);
    }

    @Override
    public byte[] roundTrip(SyncTestClient client, byte[] body) {
        return server.withHeader("x-actor-id", client.actorId).sync(body);
    }

    @Override
    public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
        return server.withHeader("x-actor-id", client.actorId).segment(segmentId, scopesHeader);
    }
}
