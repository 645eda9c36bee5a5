package dev.syncular.server.testsupport;

/**
 * {@link SyncTestClient.Transport} whose rounds ride the realtime socket (§8.7, the request in {@code 0x01} chunks of
 * {@code chunk} bytes); segment downloads stay on HTTP (§5.5).
 */
public record SocketTransport(RealtimeSocket socket, HttpTransport http, int chunk)
        implements SyncTestClient.Transport {
    @Override
    public byte[] roundTrip(SyncTestClient client, byte[] request) {
        try {
            return socket.round(request, chunk);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
        return http.downloadSegment(client, segmentId, scopesHeader);
    }
}
