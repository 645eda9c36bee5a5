package dev.syncular.server.storage.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.storage.CheckpointDeclaration;
import dev.syncular.server.storage.CheckpointState;
import dev.syncular.server.storage.StoredCheckpoint;
import dev.syncular.server.testsupport.HeldTransaction;
import dev.syncular.server.testsupport.ScratchSchemas;
import io.vertx.mutiny.sqlclient.Pool;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One lock order everywhere (storage.postgres package documentation): partition, then checkpoint, then
 * writer fence (§2.4 "Schema upgrade writer fence", backfill checkpoints). The boot migration used to raise
 * every fence and then write the declared checkpoints while an admin declare wrote its checkpoint and then its
 * fence: each could hold what the other waited for. Both paths are observed while blocked, through
 * {@code pg_locks}.
 */
class LockOrderTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @RegisterExtension
    static final ScratchSchemas scratch = ScratchSchemas.open(6);

    private static final Pool pool = scratch.pool;

    private static CompiledSchema schema(int version, boolean withNote) {
        return SchemaLoader.parse("{\"version\":" + version + ",\"tables\":[{\"name\":\"t\",\"primaryKey\":\"id\","
                + "\"columns\":[{\"name\":\"id\",\"type\":\"string\",\"nullable\":false}"
                + (withNote ? ",{\"name\":\"note\",\"type\":\"string\",\"nullable\":true}" : "")
                + "],\"scopes\":[\"k:{id}\"]}]}");
    }

    private static PostgresSyncStorage storageAtVersion1(String partition) {
        String s = scratch.fresh("sync_lock_");
        PostgresSyncStorage storage = new PostgresSyncStorage(pool, s, PostgresSyncStorage.Settings.DEFAULTS);
        storage.ensureSchema(schema(1, false)).await().atMost(WAIT);
        storage.touchPartition(partition, 1L).await().atMost(WAIT);
        return storage;
    }

    /** An admin declare takes the partition row first: while a push holds it, the declare holds no checkpoint or fence lock. */
    @Test
    void aDeclareTakesThePartitionBeforeTheCheckpointAndTheFence() throws Exception {
        PostgresSyncStorage storage = storageAtVersion1("p1");
        String s = storage.pgSchema();
        CompletableFuture<StoredCheckpoint> declared;
        try (HeldTransaction push = HeldTransaction.begin(
                pool, "SELECT 1 FROM \"" + s + "\".sync_partitions WHERE partition_id = 'p1' FOR UPDATE")) {
            declared = storage.declareCheckpoint("p1", "fill", 2, 5L).subscribeAsCompletionStage();
            int declare = push.awaitBlocked();
            List<String> held = push.relationLocks(declare, s);
            assertFalse(
                    held.stream()
                            .anyMatch(l ->
                                    l.startsWith("sync_backfill_checkpoints") || l.startsWith("sync_writer_fence")),
                    "waiting for the partition, the declare holds no checkpoint or fence lock: " + held);
        }
        StoredCheckpoint c = declared.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(CheckpointState.DECLARED, c.state());
    }

    /**
     * The schema upgrade writes the declared checkpoints before it raises any fence. A transaction declaring the
     * same checkpoint in the old order (checkpoint row, then fence row) blocks the upgrade at the checkpoint row;
     * the upgrade then holds no fence lock, so that transaction can still raise its fence and commit, after which
     * the upgrade completes. (In the old order the upgrade held the partition's fence row here: a deadlock.)
     */
    @Test
    void theSchemaUpgradeWritesCheckpointsBeforeFences() throws Exception {
        PostgresSyncStorage storage = storageAtVersion1("p2");
        String s = storage.pgSchema();
        CompletableFuture<Void> upgraded;
        try (HeldTransaction declare = HeldTransaction.begin(
                pool,
                "INSERT INTO \"" + s
                        + "\".sync_backfill_checkpoints (partition_id, name, schema_version, state, updated_at_ms)"
                        + " VALUES ('p2', 'fill', 2, 'declared', 1)")) {
            upgraded = new PostgresSyncStorage(pool, s, PostgresSyncStorage.Settings.DEFAULTS)
                    .ensureSchema(schema(2, true), List.of(new CheckpointDeclaration("p2", "fill", 2)))
                    .subscribeAsCompletionStage();
            int upgrade = declare.awaitBlocked();
            List<String> held = declare.relationLocks(upgrade, s);
            assertTrue(
                    held.contains("sync_partitions:ExclusiveLock"),
                    "the upgrade holds the partition level first: " + held);
            assertFalse(
                    held.stream().anyMatch(l -> l.startsWith("sync_writer_fence")),
                    "blocked at the checkpoint, the upgrade has not touched a fence: " + held);
            declare.execute("INSERT INTO \"" + s
                    + "\".sync_writer_fence (partition_id, required_writer_version) VALUES ('p2', 2)"
                    + " ON CONFLICT (partition_id) DO UPDATE SET required_writer_version = 2");
            declare.commit();
        }
        upgraded.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertEquals(
                List.of("p2/fill"),
                storage.readCheckpoints("p2").await().atMost(WAIT).stream()
                        .map(c -> c.partition() + "/" + c.name())
                        .toList());
        assertEquals(
                2,
                pool.query("SELECT required_writer_version FROM \"" + s
                                + "\".sync_writer_fence WHERE partition_id = 'p2'")
                        .execute()
                        .await()
                        .atMost(WAIT)
                        .iterator()
                        .next()
                        .getInteger(0));
    }
}
