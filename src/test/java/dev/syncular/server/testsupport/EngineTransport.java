package dev.syncular.server.testsupport;

import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.SyncRequestContext;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import io.opentelemetry.context.Context;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A {@link SyncTestClient} transport straight into an engine, without HTTP: the request's bytes decoded and handled
 * as an HTTP round of the client's actor in {@code partition}, the planned frames encoded as the response; a segment
 * download re-authorized for {@code downloadScopes} (§5.5).
 */
public record EngineTransport(SyncEngine engine, String partition, Map<String, List<String>> downloadScopes)
        implements SyncTestClient.Transport {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @Override
    public byte[] roundTrip(SyncTestClient client, byte[] request) {
        return Message.response(engine.handle(
                                new SyncRequestContext(client.actorId, partition),
                                MessageDecoder.decodeRequest(request),
                                SyncEngine.Binding.HTTP,
                                Context.root())
                        .await()
                        .atMost(WAIT))
                .encode();
    }

    @Override
    public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
        return engine.authorizeSegment(new SyncRequestContext(client.actorId, partition), segmentId, downloadScopes)
                .await()
                .atMost(WAIT)
                .bytes();
    }
}
