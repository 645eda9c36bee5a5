package dev.syncular.server.realtime;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.SocketDisconnect;
import dev.syncular.server.storage.postgres.BoundedPgPool;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.QuickstartAdminProfile;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.specification.RequestSpecification;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.pgclient.pubsub.PgSubscriber;
import jakarta.inject.Inject;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The operator's disconnect, through the running app and real WebSockets: {@code POST /admin/partitions/{p}/actors/{a}/disconnect}
 * and {@code …/clients/{c}/disconnect} close exactly the matching sockets with 4403, announced on the storage's
 * PostgreSQL control channel — which a second listener (a LISTEN connection of its own, as another pod holds)
 * hears, and on which an announcement made by another pod (its own storage over its own pool) closes this pod's
 * sockets. {@code TwoPodRealtimeIT} does the same across two server processes.
 */
@QuarkusTest
@OwnApp
@TestProfile(QuickstartAdminProfile.class)
class OperatorDisconnectTest {
    static final String TOKEN = QuickstartAdminProfile.ADMIN_TOKEN;
    private static final Duration WAIT = RealtimeSocket.WAIT;

    @TestHTTPResource("/")
    URI base;

    @Inject
    SchemaWindow window;

    @Inject
    PostgresSyncStorage storage;

    @Inject
    BoundedPgPool datasource;

    String partition;

    @BeforeEach
    void partition() {
        partition = "od-" + UUID.randomUUID();
    }

    static RequestSpecification admin() {
        return given().header("Authorization", "Bearer " + TOKEN);
    }

    RealtimeSocket open(String partition, String actor, String clientId) throws InterruptedException {
        RealtimeSocket s = RealtimeSocket.connect(base.toString(), partition, actor, clientId);
        s.nextEvent("hello");
        return s;
    }

    static int closeCode(RealtimeSocket s) throws Exception {
        return s.closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    /** {@code s} is still served: a socket round on it is answered. */
    void stillOpen(RealtimeSocket s, String actor, String clientId) throws InterruptedException {
        SyncTestClient c =
                new SyncTestClient(window.current(), new SocketCredentialTest.OverSocket(s), actor, clientId);
        c.subscribe("s1", "todos", Map.of("list_id", List.of("l1")));
        c.sync();
        assertFalse(s.closed.isDone());
    }

    @Test
    void anActorsSocketsCloseWith4403AndNoOneElses() throws Exception {
        RealtimeSocket bob1 = open(partition, "bob", "c-b1-" + UUID.randomUUID());
        RealtimeSocket bob2 = open(partition, "bob", "c-b2-" + UUID.randomUUID());
        String carolId = "c-c-" + UUID.randomUUID();
        RealtimeSocket carol = open(partition, "carol", carolId);
        String otherPartition = "od-other-" + UUID.randomUUID();
        String bobElsewhereId = "c-b3-" + UUID.randomUUID();
        RealtimeSocket bobElsewhere = open(otherPartition, "bob", bobElsewhereId);

        admin().post("/admin/partitions/" + partition + "/actors/bob/disconnect")
                .then()
                .statusCode(202)
                .body("partition", equalTo(partition))
                .body("actorId", equalTo("bob"))
                .body("announced", equalTo(true));
        assertEquals(OperatorDisconnects.CODE, closeCode(bob1));
        assertEquals("sync.auth_required: disconnected by an operator", bob1.closeReason());
        assertEquals(OperatorDisconnects.CODE, closeCode(bob2));
        // announcements are heard in order: once a later one took effect, the first one has been handled
        String sentinelId = "c-s-" + UUID.randomUUID();
        RealtimeSocket sentinel = open(partition, "sam", sentinelId);
        admin().post("/admin/partitions/" + partition + "/clients/" + sentinelId + "/disconnect")
                .then()
                .statusCode(202);
        assertEquals(OperatorDisconnects.CODE, closeCode(sentinel));
        stillOpen(carol, "carol", carolId);
        stillOpen(bobElsewhere, "bob", bobElsewhereId);

        // the disconnected client reconnects and is authenticated again
        RealtimeSocket again = open(partition, "bob", "c-b1-again-" + UUID.randomUUID());
        assertFalse(again.closed.isDone());
        again.ws.abort();
        carol.ws.abort();
        bobElsewhere.ws.abort();
    }

    @Test
    void aClientsSocketClosesAndItsActorsOtherClientsStay() throws Exception {
        String phone = "c-phone-" + UUID.randomUUID();
        String laptop = "c-laptop-" + UUID.randomUUID();
        RealtimeSocket p = open(partition, "bob", phone);
        RealtimeSocket l = open(partition, "bob", laptop);
        admin().post("/admin/partitions/" + partition + "/clients/" + phone + "/disconnect")
                .then()
                .statusCode(202)
                .body("clientId", equalTo(phone));
        assertEquals(OperatorDisconnects.CODE, closeCode(p));
        stillOpen(l, "bob", laptop);
        l.ws.abort();
    }

    @Test
    void theAnnouncementTravelsOverPostgresBetweenPods() throws Exception {
        Vertx vertx = Vertx.vertx();
        Pool otherPool = TestPostgres.pool(vertx, 1);
        PgSubscriber listener = PgSubscriber.subscriber(
                vertx.getDelegate(),
                datasource.listenOptions("od-test-listener").get(0));
        try {
            // a second listener, as another pod's hub: it hears the route's announcement
            CompletableFuture<String> heard = new CompletableFuture<>();
            CompletableFuture<Void> listening = new CompletableFuture<>();
            listener.channel(storage.controlChannel())
                    .handler(heard::complete)
                    .subscribeHandler(v -> listening.complete(null));
            listener.connect().toCompletionStage().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
            listening.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            String clientId = "c-x-" + UUID.randomUUID();
            admin().post("/admin/partitions/" + partition + "/clients/" + clientId + "/disconnect")
                    .then()
                    .statusCode(202);
            SocketDisconnect d = SocketDisconnect.parse(heard.get(WAIT.toSeconds(), TimeUnit.SECONDS));
            assertEquals(SocketDisconnect.client(partition, clientId), d);

            // another pod's announcement (its own storage over its own pool) closes this pod's socket
            RealtimeSocket s = open(partition, "bob", "c-y-" + UUID.randomUUID());
            new PostgresSyncStorage(otherPool, storage.pgSchema(), PostgresSyncStorage.Settings.DEFAULTS)
                    .announce(SocketDisconnect.actor(partition, "bob"))
                    .await()
                    .atMost(WAIT);
            assertEquals(OperatorDisconnects.CODE, closeCode(s));
        } finally {
            listener.close();
            otherPool.close().await().atMost(WAIT);
            vertx.close().await().atMost(WAIT);
        }
    }

    @Test
    void idsTheStorageCannotHoldAre400() {
        admin().post("/admin/partitions/" + partition + "/clients/" + "x".repeat(600) + "/disconnect")
                .then()
                .statusCode(400)
                .body("code", equalTo("sync.invalid_request"));
        given().post("/admin/partitions/" + partition + "/actors/bob/disconnect")
                .then()
                .statusCode(401);
    }

    @Test
    void payloadsRoundTripWithSeparatorsInIds() {
        for (SocketDisconnect d : List.of(
                SocketDisconnect.actor("a:b:3:", "x:y"),
                SocketDisconnect.client("", "7:z"),
                SocketDisconnect.client("p", "é"))) {
            assertEquals(d, SocketDisconnect.parse(d.payload()));
        }
        assertEquals(null, SocketDisconnect.parse("shutdown:1:p"), "a kind this version does not know is ignored");
        assertEquals(null, SocketDisconnect.parse("client:9:p"));
    }
}
