package dev.syncular.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.RealtimeSocket;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.wire.CommitFrame;
import java.nio.file.Files;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * One meaning for a database host list (issue 44, hole 3): a server whose datasource URL lists the streaming hot
 * standby first and the primary second starts (its start-up DDL reaches the primary), takes every push — each
 * round on a pooled connection, none sent to the read-only standby as a round-robin pool did — and its realtime
 * {@code LISTEN} connection is on the primary, so a commit reaches a socket as a delta.
 */
@StartsProcesses
class DatabaseHostListIT {
    private static final String SCHEMA =
            "it_hosts_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

    @Test
    void aStandbyAndItsPrimaryListedAreOneWriteEndpointForThePoolAndListen() throws Exception {
        // Quarkus's form of a host list: a comma-separated list of URLs
        String list = TestPostgres.replicaUrl() + "," + TestPostgres.url();
        CompiledSchema schema = SchemaLoader.parse(Files.readString(ServerProcess.BUNDLED_SCHEMA));
        try (ServerProcess pod = ServerProcess.builder("database-host-list", SCHEMA)
                .env("QUARKUS_DATASOURCE_REACTIVE_URL", list)
                .env("QUARKUS_DATASOURCE_REACTIVE_MAX_SIZE", "4")
                .start()) {
            String partition = "p-" + UUID.randomUUID();
            SyncTestClient a = SyncTestClient.onListL1(schema, new HttpTransport(pod.baseUrl(), partition), "alice");
            SyncTestClient b = SyncTestClient.onListL1(schema, new HttpTransport(pod.baseUrl(), partition), "bob");
            a.syncUntilIdle();
            b.syncUntilIdle();
            RealtimeSocket s = RealtimeSocket.connect(pod.baseUrl() + "/", partition, b.actorId, b.clientId);
            JsonNode hello = s.nextEvent("hello").get("data");
            if (hello.get("requiresSync").asBoolean()) {
                s.ack(b.subscriptions.get("s1").cursor);
                s.round(b.buildRequest().encode(), 1 << 16);
            }
            for (int i = 0; i < 24; i++) {
                String commit = a.upsert("todos", todo("t" + i), null);
                a.sync();
                assertTrue(SyncTestClient.applied(a.result(commit)), "push " + i + ": " + a.result(commit));
            }
            CommitFrame first =
                    assertInstanceOf(CommitFrame.class, s.nextDelta().frames().get(2));
            assertEquals("t0", first.changes().get(0).rowId(), "the LISTEN connection is on the primary");
            s.ws.abort();
        } finally {
            TestPostgres.dropSchema(SCHEMA);
        }
    }

    private static Map<String, Object> todo(String id) {
        return Map.of(
                "id", id, "list_id", "l1", "title", "t " + id, "done", false, "position", 1L, "updated_at_ms", 1L);
    }
}
