package dev.syncular.server.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.testsupport.TestPostgres;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** §4.6 retention floors applied by the pruning pass, on real PostgreSQL storage. */
class PrunerTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final long DAY = 24L * 60 * 60 * 1000;
    private static Vertx vertx;
    private static Pool pool;
    private static PostgresSyncStorage storage;

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
        pool = TestPostgres.pool(vertx, 4);
        storage = new PostgresSyncStorage(pool, "sync_pruner_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10));
        CompiledSchema schema = SchemaLoader.parse("{\"version\":1,\"tables\":[{\"name\":\"t\",\"primaryKey\":\"id\","
                + "\"columns\":[{\"name\":\"id\",\"type\":\"string\",\"nullable\":false}],\"scopes\":[\"k:{id}\"]}]}");
        storage.ensureSchema(schema).await().atMost(WAIT);
    }

    @AfterAll
    static void stop() {
        pool.query("DROP SCHEMA IF EXISTS \"" + storage.pgSchema() + "\" CASCADE").execute().await().atMost(WAIT);
        pool.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }

    private static void commits(String partition, int n) {
        for (int i = 0; i < n; i++) {
            storage.inPartitionTransaction(partition, tx -> tx.appendCommit("a", "c", UUID.randomUUID().toString(), 1,
                    List.of())).await().atMost(WAIT);
        }
    }

    @Test
    void activeCursorsAndTheNewestCommitsBoundTheHorizon() {
        long now = 100 * DAY;
        String p = "prune-" + UUID.randomUUID();
        storage.touchPartition(p, now).await().atMost(WAIT);
        commits(p, 30);
        storage.upsertClient(new ClientRecord(p, "active", "a", 12, now - DAY, null, 3)).await().atMost(WAIT);
        storage.upsertClient(new ClientRecord(p, "gone", "a", 3, now - 20 * DAY, null, 3)).await().atMost(WAIT);
        Pruner pruner = new Pruner(storage, new RetentionPolicy(Duration.ofDays(14), 10));
        pruner.pruneAll(now).await().atMost(WAIT);
        PartitionState s = storage.readPartition(p).await().atMost(WAIT);
        assertEquals(12, s.horizonSeq(), "held at the active client's cursor; the stale client does not count");
        storage.upsertClient(new ClientRecord(p, "active", "a", 30, now, null, 3)).await().atMost(WAIT);
        pruner.pruneAll(now).await().atMost(WAIT);
        assertEquals(20, storage.readPartition(p).await().atMost(WAIT).horizonSeq(), "the newest 10 commits stay");
    }

    @Test
    void policyNeverMovesBackwards() {
        RetentionPolicy policy = new RetentionPolicy(Duration.ofDays(14), 1000);
        PartitionState s = new PartitionState("p", "e", 5000, 4500, 0, 0);
        assertEquals(-1, policy.pruneThrough(s, List.of(new ClientRecord("p", "c", "a", 4000, 0, null, 3)), 1));
        assertEquals(4000, policy.pruneThrough(new PartitionState("p", "e", 5000, 3000, 0, 0), List.of(), 1));
    }
}
