package dev.syncular.server.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.storage.CheckpointState;
import dev.syncular.server.storage.StoredCheckpoint;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.Notes;
import dev.syncular.server.testsupport.NotesAppProfile;
import dev.syncular.server.testsupport.Readiness;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.PushOperation;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * The one-shot {@code backfill} command against the real storage: a checkpoint this process does not declare
 * takes readiness DOWN; the command declares and claims it, fills the NULL {@code priority} of every note in
 * pages (each page one commit with its watermark), activates it, and readiness comes back; a client that had
 * the rows receives the filled values as ordinary changes. Reruns are no-ops; bad arguments exit 2.
 */
@QuarkusTest
@TestProfile(NotesAppProfile.class)
class BackfillCommandTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Inject
    BackfillCommand command;

    @Inject
    Backfills backfills;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private SyncTestClient client(String partition, String actor) {
        return new SyncTestClient(
                        SyncScenariosContract.SCHEMA,
                        new HttpTransport("http://localhost:" + port, partition),
                        actor,
                        actor + "-" + UUID.randomUUID())
                .subscribe("notes", "notes", Map.of("project_id", List.of("p1")));
    }

    private static void readiness(int status) {
        Readiness.await(status, WAIT);
    }

    private static List<String> args(String partition, String... more) {
        List<String> a = new ArrayList<>(List.of(
                "--partition",
                partition,
                "--checkpoint",
                "fill-priority",
                "--schema-version",
                "1",
                "--table",
                "notes"));
        a.addAll(List.of(more));
        return a;
    }

    @Test
    void fillsTheNullColumnInPagesAndActivatesTheCheckpoint() {
        String partition = "tenant-" + UUID.randomUUID();
        SyncTestClient writer = client(partition, "alice");
        List<PushOperation> ops = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            ops.add(writer.upsertOp("notes", Notes.note("n" + i, null), null));
        }
        ops.add(writer.upsertOp("notes", Notes.note("kept", 9L), null));
        writer.commit(ops);
        writer.syncUntilIdle();
        SyncTestClient reader = client(partition, "bob");
        reader.syncUntilIdle();
        assertEquals(8, reader.table("notes").size());
        readiness(200);

        backfills.declare(partition, "fill-priority", 1).await().atMost(WAIT);
        readiness(503);

        assertEquals(BackfillCommand.EXIT_OK, command.run(args(partition, "--set", "priority=3", "--batch-size", "3")));
        readiness(200);
        StoredCheckpoint c = backfills.list(partition).await().atMost(WAIT).get(0);
        assertEquals(CheckpointState.ACTIVATED, c.state());
        assertEquals(7, c.observedRows(), "every NULL row observed once");
        assertEquals(4, c.watermark(), "the writer's commit, then one commit per page of 3 (3 + 3 + 1)");

        reader.syncUntilIdle();
        int priority = SyncScenariosContract.SCHEMA.table("notes").columnIndex("priority");
        for (int i = 0; i < 7; i++) {
            SyncTestClient.LocalRow row = reader.table("notes").get("n" + i);
            assertEquals(3L, row.values()[priority], "n" + i);
            assertEquals(2, row.version(), "one server version after the insert");
        }
        assertEquals(9L, reader.table("notes").get("kept").values()[priority], "a set value is left alone");

        // a rerun (the Job retried after success) answers at once
        assertEquals(BackfillCommand.EXIT_OK, command.run(args(partition, "--set", "priority=3")));
        assertEquals(1, backfills.list(partition).await().atMost(WAIT).size());
    }

    @Test
    void refusesBadArgumentsWithUsageStatus() {
        String p = "tenant-" + UUID.randomUUID();
        assertEquals(BackfillCommand.EXIT_USAGE, command.run(List.of("--partition", p)));
        assertEquals(BackfillCommand.EXIT_USAGE, command.run(args(p)), "nothing to fill");
        assertEquals(BackfillCommand.EXIT_USAGE, command.run(args(p, "--set", "project_id=\"p2\"")), "scope column");
        assertEquals(BackfillCommand.EXIT_USAGE, command.run(args(p, "--set", "id=\"x\"")), "primary key");
        assertEquals(BackfillCommand.EXIT_USAGE, command.run(args(p, "--set", "priority=\"high\"")), "mistyped");
        assertEquals(BackfillCommand.EXIT_USAGE, command.run(args(p, "--set", "priority=null")), "null");
        assertEquals(BackfillCommand.EXIT_USAGE, command.run(args(p, "--set", "missing=1")), "unknown column");
        assertEquals(
                BackfillCommand.EXIT_USAGE,
                command.run(List.of(
                        "--partition",
                        p,
                        "--checkpoint",
                        "c",
                        "--schema-version",
                        "1",
                        "--table",
                        "nope",
                        "--set",
                        "x=1")),
                "unknown table");
        assertEquals(BackfillCommand.EXIT_USAGE, command.run(args(p, "--set", "priority=1", "--batch-size", "0")));
        // nothing was declared by the refused runs
        assertTrue(backfills.list(p).await().atMost(WAIT).isEmpty());
    }

    @Test
    void parsesEveryOption() {
        BackfillCommand.Options o = BackfillCommand.Options.parse(List.of(
                "--partition",
                "t1",
                "--checkpoint",
                "c",
                "--schema-version",
                "2",
                "--table",
                "notes",
                "--set",
                "priority=0",
                "--set",
                "title=\"a=b\"",
                "--batch-size",
                "50",
                "--attempts",
                "2"));
        assertEquals(
                new BackfillCommand.Options("t1", "c", 2, "notes", Map.of("priority", "0", "title", "\"a=b\""), 50, 2),
                o);
        assertEquals(500, BackfillCommand.Options.parse(args("t")).batchSize());
        assertThrows(IllegalArgumentException.class, () -> BackfillCommand.Options.parse(List.of("--table")));
        assertThrows(IllegalArgumentException.class, () -> BackfillCommand.Options.parse(args("t", "--bogus", "1")));
        assertThrows(
                IllegalArgumentException.class,
                () -> BackfillCommand.Options.parse(args("t", "--set", "a=1", "--set", "a=2")));
    }
}
