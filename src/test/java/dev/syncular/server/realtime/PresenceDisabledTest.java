package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.QuickstartAdminProfile;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.realtime.ControlMessage;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * §8.6 with the feature off ({@code syncular.realtime.presence-enabled=false}, set by {@link QuickstartAdminProfile}):
 * presence events are ignored.
 */
@QuarkusTest
@OwnApp
@TestProfile(QuickstartAdminProfile.class)
class PresenceDisabledTest {
    @TestHTTPResource("/")
    URI base;

    @Inject
    SchemaWindow window;

    @Test
    void presenceIsSilentWhenOff() throws Exception {
        String partition = "presence-off-" + UUID.randomUUID();
        SyncTestClient[] clients = new SyncTestClient[2];
        RealtimeSocket[] sockets = new RealtimeSocket[2];
        for (int i = 0; i < 2; i++) {
            clients[i] = new SyncTestClient(
                    window.current(),
                    new HttpTransport(base.toString(), partition),
                    "u" + i,
                    "c" + i + "-" + UUID.randomUUID());
            clients[i].subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
            clients[i].syncUntilIdle();
            sockets[i] = RealtimeSocket.connect(base.toString(), partition, "u" + i, clients[i].clientId);
            sockets[i].nextEvent("hello");
        }
        sockets[0].send(new ControlMessage.PresencePublish(
                "list:l1", JsonNodeFactory.instance.objectNode().put("a", 1)));
        sockets[0].send(new ControlMessage.PresencePublish(
                "list:elsewhere", JsonNodeFactory.instance.objectNode().put("a", 1)));
        // a round on each socket is answered after anything the publishes could have caused on it
        for (int i = 0; i < 2; i++) {
            assertInstanceOf(
                    RespHeader.class,
                    MessageDecoder.decodeResponse(
                                    sockets[i].round(clients[i].buildRequest().encode(), 64))
                            .frames()
                            .get(0));
            assertFalse(
                    sockets[i].texts.stream().anyMatch(t -> t.contains("\"presence\"")),
                    "no presence event, no presence error: " + sockets[i].texts);
            assertFalse(sockets[i].closed.isDone(), "a tolerated event does not close the socket");
        }
        assertEquals(2, sockets.length);
        for (RealtimeSocket s : sockets) {
            s.ws.abort();
        }
    }
}
