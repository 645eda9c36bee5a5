package dev.syncular.server.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitStatus;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The packaged app's one-shot {@code backfill} command opens no listening socket: run on the host and port of a
 * running server (the same {@code QUARKUS_HTTP_PORT}, the same management port), it does its work and exits 0
 * instead of failing with "port in use", and the server keeps serving.
 */
@StartsProcesses
class BackfillBesideServerIT {
    @Test
    void backfillRunsBesideAServerOnTheSamePorts() throws Exception {
        String pgSchema =
                "it_beside_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        try (ServerProcess server =
                ServerProcess.builder("beside-server", pgSchema).start()) {
            CompiledSchema schema = SchemaLoader.load(ServerProcess.BUNDLED_SCHEMA);
            SyncTestClient writer = new SyncTestClient(
                            schema,
                            new HttpTransport(server.baseUrl(), "tenant-1"),
                            "alice",
                            "alice-" + UUID.randomUUID())
                    .subscribe("todos", "todos", Map.of("list_id", List.of("l1")));
            writer.syncUntilIdle();
            String commit = writer.upsert(
                    "todos",
                    Map.of(
                            "id",
                            "t1",
                            "list_id",
                            "l1",
                            "title",
                            "milk",
                            "done",
                            true,
                            "position",
                            1L,
                            "updated_at_ms",
                            1L),
                    null);
            writer.syncUntilIdle();
            assertEquals(CommitStatus.APPLIED, writer.result(commit).status(), String.valueOf(writer.result(commit)));
            ServerProcess.Result run = ServerProcess.builder("beside-backfill", pgSchema)
                    .port(server.port())
                    .args(List.of(
                            BackfillCommand.NAME,
                            "--partition",
                            "tenant-1",
                            "--checkpoint",
                            "fill-done",
                            "--schema-version",
                            "1",
                            "--table",
                            "todos",
                            "--set",
                            "title=\"x\""))
                    .run(Duration.ofMinutes(3));
            assertEquals(0, run.exitCode(), run.log());
            assertFalse(
                    run.log().contains("Port already bound") || run.log().contains("Address already in use"),
                    run.log());
            assertFalse(run.log().contains("Listening on"), "no HTTP listener: " + run.log());
            assertTrue(server.alive());
            assertEquals(200, server.status("/q/health/live"));
        }
    }
}
