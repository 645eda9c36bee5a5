package dev.syncular.server.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.segments.memory.InMemorySegmentStore;
import dev.syncular.server.storage.ActivationResult;
import dev.syncular.server.storage.CheckpointDeclaration;
import dev.syncular.server.storage.StoredCheckpoint;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageDecoder;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The serve gate and the writer fence across processes (§2.4, §10.2 {@code sync.schema_not_ready}): engines
 * of an old build (schema v1) and a new build (v2, one appended nullable column) share one PostgreSQL.
 */
class ServeGateTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String V1 =
            "{\"version\":1,\"tables\":[{\"name\":\"tasks\",\"primaryKey\":\"id\",\"columns\":["
                    + "{\"name\":\"id\",\"type\":\"string\",\"nullable\":false},"
                    + "{\"name\":\"project_id\",\"type\":\"string\",\"nullable\":false},"
                    + "{\"name\":\"title\",\"type\":\"string\",\"nullable\":true}],\"scopes\":[\"project:{project_id}\"]}]}";
    private static final String V2 = V1.replace("\"version\":1", "\"version\":2")
            .replace(
                    "\"nullable\":true}]",
                    "\"nullable\":true},{\"name\":\"estimate\",\"type\":\"integer\",\"nullable\":true}]");

    private Vertx vertx;
    private Pool pool;
    private String pgSchema;
    private final List<String> refusals = new CopyOnWriteArrayList<>();
    private final Map<String, Function<String, Uni<?>>> resolverHooks = new ConcurrentHashMap<>();

    @BeforeEach
    void start() {
        vertx = Vertx.vertx();
        pool = TestPostgres.pool(vertx, 8);
        pgSchema = "sync_gate_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    }

    @AfterEach
    void stop() {
        pool.query("DROP SCHEMA IF EXISTS \"" + pgSchema + "\" CASCADE")
                .execute()
                .await()
                .atMost(WAIT);
        pool.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }

    /** One server process: its build's schema, storage handle, declared checkpoints and engine. */
    private final class Process {
        final CompiledSchema schema;
        final PostgresSyncStorage storage;
        final SyncEngine engine;

        Process(String schemaJson, List<CheckpointDeclaration> declared) {
            schema = SchemaLoader.parse(schemaJson);
            storage = new PostgresSyncStorage(pool, pgSchema, PostgresSyncStorage.Settings.DEFAULTS);
            storage.ensureSchema(schema, declared).await().atMost(WAIT);
            ScopeResolver resolver = (actor, partition) -> {
                Map<String, List<String>> all = Map.of("project_id", List.of("*"));
                Function<String, Uni<?>> hook = resolverHooks.remove(partition);
                // A hook runs between the entry gate read and the verify read (never blocking the event loop).
                return hook == null
                        ? Uni.createFrom().item(all)
                        : hook.apply(partition).replaceWith(all);
            };
            engine = new SyncEngine(
                    EngineParts.builder(SchemaWindow.single(schema), storage, new InMemorySegmentStore(), resolver)
                            .checkpoints(declared)
                            .observer(new SyncObserver() {
                                @Override
                                public void gateRefused(String partition, String reason) {
                                    refusals.add(reason);
                                }
                            })
                            .build());
        }

        SyncTestClient client(String partition, String clientId) {
            SyncTestClient.Transport t = new SyncTestClient.Transport() {
                @Override
                public byte[] roundTrip(SyncTestClient c, byte[] request) {
                    try {
                        return Message.response(engine.handle(
                                                new SyncRequestContext(c.actorId, partition),
                                                MessageDecoder.decodeRequest(request),
                                                SyncEngine.Binding.HTTP,
                                                Context.root())
                                        .await()
                                        .atMost(WAIT))
                                .encode();
                    } catch (SyncError e) {
                        throw new HttpFailure(e.code().httpStatus, e.code().code + " " + e.details());
                    }
                }

                @Override
                public byte[] downloadSegment(SyncTestClient c, String segmentId, String scopes) {
                    throw new UnsupportedOperationException();
                }
            };
            return new SyncTestClient(schema, t, "actor", clientId)
                    .subscribe("tasks", "tasks", Map.of("project_id", List.of("p1")));
        }
    }

    private static Map<String, Object> task(String id) {
        return Map.of("id", id, "project_id", "p1", "title", "t");
    }

    /** A full v2 row: an insert presents every column (§6.2). */
    private static Map<String, Object> task2(String id) {
        return Map.of("id", id, "project_id", "p1", "title", "t", "estimate", 1L);
    }

    private static void assertNotReady(SyncTestClient c, String reason) {
        HttpFailure f = assertThrows(HttpFailure.class, c::sync);
        assertEquals(503, f.status);
        assertTrue(f.body.startsWith("sync.schema_not_ready"), f.body);
        assertTrue(f.body.contains(reason), f.body);
    }

    @Test
    void migrationFencesTheOldBuildAndItsGateRefuses() {
        Process old = new Process(V1, List.of());
        SyncTestClient oldClient = old.client("tenant", "old-1");
        oldClient.sync();
        oldClient.upsert("tasks", task("before"), null);
        oldClient.syncUntilIdle();
        Process fresh = new Process(V2, List.of());
        // The old build still runs: its pushes are refused (stored schema newer) and nothing is written.
        oldClient.upsert("tasks", task("after"), null);
        assertNotReady(oldClient, "schema_newer");
        assertTrue(refusals.contains(ServeGates.SCHEMA_NEWER));
        assertTrue(old.storage
                .readRows("tenant", "tasks", List.of("after"))
                .await()
                .atMost(WAIT)
                .isEmpty());
        // The new build serves the same partition.
        SyncTestClient newClient = fresh.client("tenant", "new-1");
        newClient.upsert("tasks", Map.of("id", "after-new", "project_id", "p1", "title", "t", "estimate", 3L), null);
        newClient.syncUntilIdle();
        assertEquals(2, newClient.table("tasks").size());
    }

    @Test
    void aDeclaredCheckpointGatesEveryOtherProcessUntilActivated() {
        Process old = new Process(V1, List.of());
        old.client("tenant", "seed").syncUntilIdle();
        List<CheckpointDeclaration> declared = List.of(new CheckpointDeclaration("tenant", "fill-estimate", 2));
        Process backfiller = new Process(V2, declared);
        Process other = new Process(V2, List.of());
        SyncTestClient blocked = other.client("tenant", "other-1");
        assertNotReady(blocked, "checkpoint_pending");
        assertTrue(refusals.contains(ServeGates.CHECKPOINT_PENDING));
        // Other partitions are unaffected; the declaring process serves while it backfills.
        other.client("elsewhere", "other-2").syncUntilIdle();
        SyncTestClient writer = backfiller.client("tenant", "bf-1");
        writer.upsert("tasks", task2("t1"), null);
        writer.syncUntilIdle();

        StoredCheckpoint claimed = backfiller
                .storage
                .claimCheckpoint("tenant", "fill-estimate", 2, 1)
                .await()
                .atMost(WAIT);
        long watermark =
                backfiller.storage.readPartition("tenant").await().atMost(WAIT).maxCommitSeq();
        assertTrue(backfiller
                .storage
                .advanceCheckpoint("tenant", "fill-estimate", claimed.ownerEpoch(), watermark, 1, 2)
                .await()
                .atMost(WAIT));
        // A source change above the watermark makes activation stale; the backfill catches up and retries.
        String t2 = writer.upsert("tasks", task2("t2"), null);
        writer.syncUntilIdle();
        assertTrue(SyncTestClient.applied(writer.result(t2)), String.valueOf(writer.result(t2)));
        assertTrue(
                backfiller.storage.readPartition("tenant").await().atMost(WAIT).maxCommitSeq() > watermark);
        assertEquals(
                ActivationResult.STALE,
                backfiller
                        .storage
                        .activateCheckpoint(
                                "tenant", "fill-estimate", claimed.ownerEpoch(), watermark, List.of("tasks"), 3)
                        .await()
                        .atMost(WAIT));
        assertNotReady(blocked, "checkpoint_pending");
        long caughtUp =
                backfiller.storage.readPartition("tenant").await().atMost(WAIT).maxCommitSeq();
        assertEquals(
                ActivationResult.ACTIVATED,
                backfiller
                        .storage
                        .activateCheckpoint(
                                "tenant", "fill-estimate", claimed.ownerEpoch(), caughtUp, List.of("tasks"), 4)
                        .await()
                        .atMost(WAIT));
        blocked.syncUntilIdle();
        assertEquals(2, blocked.table("tasks").size());
    }

    @Test
    void aGateChangeBetweenPlanAndVerifyReleasesNothing() {
        Process server = new Process(V2, List.of());
        SyncTestClient c = server.client("tenant", "race-1");
        String r1 = c.upsert("tasks", task2("r1"), null);
        c.syncUntilIdle();
        assertTrue(SyncTestClient.applied(c.result(r1)));
        // While the request is being planned, another process declares a checkpoint in this partition.
        resolverHooks.put("tenant", partition -> server.storage.declareCheckpoint(partition, "late", 2, 5));
        c.upsert("tasks", task2("r2"), null);
        assertNotReady(c, "checkpoint_pending");
        // Nothing of the planned response reached the client: its cursor and outbox are unchanged.
        assertEquals(1, c.outbox.size());
        // A log-epoch rotation during planning changes the gate token: refused as well.
        Process declaring = new Process(V2, List.of(new CheckpointDeclaration("tenant", "late", 2)));
        SyncTestClient d = declaring.client("tenant", "race-2");
        d.sync(); // epoch acquisition: no scope resolution, no hook
        assertNotNull(d.state.logEpoch);
        resolverHooks.put("tenant", partition -> declaring.storage.rotateLogEpoch(partition));
        assertNotReady(d, "gate_changed");
        assertTrue(refusals.contains(ServeGates.GATE_CHANGED));
    }

    @Test
    void aMigrationRacingARequestReleasesNothing() {
        Process server = new Process(V2, List.of());
        SyncTestClient c = server.client("tenant", "mig-1");
        c.syncUntilIdle();
        String v3 = V2.replace("\"version\":2", "\"version\":3")
                .replace(
                        "\"name\":\"estimate\",\"type\":\"integer\",\"nullable\":true}",
                        "\"name\":\"estimate\",\"type\":\"integer\",\"nullable\":true},{\"name\":\"note\",\"type\":\"string\",\"nullable\":true}");
        // A new build migrates the database while this request is being planned.
        resolverHooks.put(
                "tenant",
                partition -> new PostgresSyncStorage(pool, pgSchema, PostgresSyncStorage.Settings.DEFAULTS)
                        .ensureSchema(SchemaLoader.parse(v3), List.of()));
        long cursorBefore = c.subscriptions.get("tasks").cursor;
        assertNotReady(c, "schema_newer");
        assertEquals(cursorBefore, c.subscriptions.get("tasks").cursor);
        assertEquals(3, server.storage.readStoredSchemaVersion().await().atMost(WAIT));
    }
}
