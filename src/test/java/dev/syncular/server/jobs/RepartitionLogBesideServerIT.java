package dev.syncular.server.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.wire.CommitStatus;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The packaged app's {@code repartition-log} command moves a running deployment's plain commit log to hash
 * partitions (docs/SCALING.md, "Partitioning the commit log"): beside a server on the same ports, while a
 * client keeps pushing through it and another keeps pulling, every push is applied, the puller ends with every
 * row through the log (§4.5 incremental pulls before, during and after the swap), and a second run has nothing
 * to do.
 */
@StartsProcesses
class RepartitionLogBesideServerIT {
    private static final Duration WAIT = Duration.ofMinutes(3);

    private static Map<String, Object> todo(int i) {
        return Map.of(
                "id",
                "t" + i,
                "list_id",
                "l1",
                "title",
                "todo " + i,
                "done",
                false,
                "position",
                (long) i,
                "updated_at_ms",
                1L);
    }

    @Test
    void aServedLogMovesToHashPartitions() throws Exception {
        String pgSchema = "it_repartition_"
                + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        try (ServerProcess server = ServerProcess.builder("repartition-server", pgSchema)
                .env("SYNCULAR_STORAGE_LOG_PARTITIONS", "0")
                .start()) {
            CompiledSchema schema = SchemaLoader.load(ServerProcess.BUNDLED_SCHEMA);
            SyncTestClient writer = new SyncTestClient(
                            schema, new HttpTransport(server.baseUrl(), "tenant-1"), "alice", "w-" + UUID.randomUUID())
                    .subscribe("todos", "todos", Map.of("list_id", List.of("l1")));
            SyncTestClient reader = new SyncTestClient(
                            schema, new HttpTransport(server.baseUrl(), "tenant-1"), "bob", "r-" + UUID.randomUUID())
                    .subscribe("todos", "todos", Map.of("list_id", List.of("l1")));
            writer.syncUntilIdle();
            reader.syncUntilIdle();
            List<String> commits = java.util.Collections.synchronizedList(new ArrayList<>());
            for (int i = 0; i < 40; i++) {
                commits.add(writer.upsert("todos", todo(i), null));
                writer.syncUntilIdle();
            }
            // pushes and pulls go on while the command runs
            AtomicBoolean stop = new AtomicBoolean();
            CompletableFuture<Integer> traffic = CompletableFuture.supplyAsync(() -> {
                int i = 40;
                while (!stop.get()) {
                    commits.add(writer.upsert("todos", todo(i++), null));
                    writer.syncUntilIdle();
                    reader.syncUntilIdle();
                }
                return i;
            });
            ServerProcess.Result run = ServerProcess.builder("repartition-command", pgSchema)
                    .port(server.port())
                    .args(List.of(RepartitionLogCommand.NAME, "--partitions", "4", "--batch-rows", "10"))
                    .run(WAIT);
            assertEquals(0, run.exitCode(), run.log());
            assertTrue(run.log().contains("swapped"), run.log());
            int todos = stopAndWait(stop, traffic);
            // one more round on the new tables
            commits.add(writer.upsert("todos", todo(todos), null));
            writer.syncUntilIdle();
            reader.syncUntilIdle();
            for (String c : commits) {
                assertEquals(CommitStatus.APPLIED, writer.result(c).status(), c + ": " + writer.result(c));
            }
            assertEquals(todos + 1, reader.table("todos").size(), "the puller holds every row pushed");

            try (Closing db = new Closing()) {
                assertEquals(
                        3L,
                        db.pool
                                .preparedQuery("SELECT count(*) FROM pg_partitioned_table t JOIN pg_class c"
                                        + " ON c.oid = t.partrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
                                        + " WHERE n.nspname = $1")
                                .execute(Tuple.of(pgSchema))
                                .await()
                                .atMost(WAIT)
                                .iterator()
                                .next()
                                .getLong(0),
                        "the three log tables are partitioned");
            }
            ServerProcess.Result again = ServerProcess.builder("repartition-again", pgSchema)
                    .port(server.port())
                    .args(List.of(RepartitionLogCommand.NAME))
                    .run(WAIT);
            assertEquals(0, again.exitCode(), again.log());
            assertTrue(again.log().contains("already partitioned"), again.log());
            assertTrue(server.alive());
        }
    }

    private static int stopAndWait(AtomicBoolean stop, CompletableFuture<Integer> traffic) throws Exception {
        stop.set(true);
        return traffic.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    /** A pool on the test database, closed with its Vert.x. */
    private static final class Closing implements AutoCloseable {
        final Vertx vertx = Vertx.vertx();
        final Pool pool = TestPostgres.pool(vertx, 1);

        @Override
        public void close() {
            pool.close().await().atMost(WAIT);
            vertx.close().await().atMost(WAIT);
        }
    }
}
