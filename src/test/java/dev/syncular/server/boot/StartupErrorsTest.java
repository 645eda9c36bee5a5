package dev.syncular.server.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.SchemaException;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.storage.StorageException;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.vertx.pgclient.PgException;
import java.net.ConnectException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** The one-message start-up errors an operator gets for a schema or storage-layout mistake. */
class StartupErrorsTest {

    @Test
    void storedLayoutMismatchNamesTheThreeFixes() {
        StorageException e = new StorageException(
                StorageException.STORED_LAYOUT_MISMATCH,
                "persisted table layouts differ from the running schema",
                Map.of("table", "todos", "column", "title"));
        ConfigurationException c = StartupErrors.storage(e, "syncular", 1, "/work/app/target/embedded-postgres");
        String m = c.getMessage();
        assertEquals(
                "Syncular cannot start on PostgreSQL schema \"syncular\": the running schema (version 1) does not "
                        + "match the tables the database stores for schema version 1 (table \"todos\", column \"title\"): a schema "
                        + "change needs a new schema version. [sync.storage.stored_layout_mismatch]. Fix it in one of these ways: "
                        + "(1) raise \"schemaVersion\" in the schema IR (an additive change, docs/SCHEMA.md, \"Changing a schema\"); "
                        + "(2) use another, empty storage schema: set syncular.storage.pg-schema (env SYNCULAR_STORAGE_PG_SCHEMA), "
                        + "e.g. -Dsyncular.storage.pg-schema=dev2; (3) reset the embedded development database: stop the server "
                        + "and delete its data directory (rm -rf /work/app/target/embedded-postgres).",
                m);
        assertFalse(m.contains("\n"), "one line");
    }

    @Test
    void withoutTheEmbeddedDatabaseTheResetIsDroppingTheStorageSchema() {
        StorageException e =
                new StorageException(StorageException.STORED_LAYOUT_MISMATCH, "x", Map.of("table", "todos"));
        String m = StartupErrors.storage(e, "sync", 3, null).getMessage();
        assertTrue(m.contains("(table \"todos\")"), m);
        assertTrue(m.contains("DROP SCHEMA \"sync\" CASCADE"), m);
        assertFalse(m.contains("rm -rf"), m);
    }

    /** {@code public} is shared with everything else in the database: the way out is another schema, never a drop. */
    @Test
    void thePublicSchemaIsNeverOfferedForDropping() {
        StorageException e =
                new StorageException(StorageException.STORED_LAYOUT_MISMATCH, "x", Map.of("table", "todos"));
        String m = StartupErrors.storage(e, "public", 3, null).getMessage();
        assertFalse(m.contains("DROP"), m);
        assertTrue(m.contains("move to a storage schema of Syncular's own (syncular.storage.pg-schema)"), m);
    }

    @Test
    void tablesLeftInPublicByAnEarlierDefaultNameTheSetting() {
        String m = StartupErrors.tablesInLegacySchema("syncular");
        assertTrue(m.contains("found its tables in PostgreSQL schema \"public\" (the default before 0.2.0)"), m);
        assertTrue(m.contains("Set syncular.storage.pg-schema=public (env SYNCULAR_STORAGE_PG_SCHEMA"), m);
        assertFalse(m.contains("DROP"), m);
    }

    @Test
    void physicalMismatchAndNonAdditiveUpgradeAreExplained() {
        String physical = StartupErrors.storage(
                        new StorageException(
                                StorageException.PHYSICAL_LAYOUT_MISMATCH,
                                "x",
                                Map.of(
                                        "table",
                                        "todos",
                                        "column",
                                        "_sync_scopes",
                                        "reason",
                                        "type",
                                        "expected",
                                        "jsonb",
                                        "actual",
                                        "text")),
                        "public",
                        2,
                        null)
                .getMessage();
        assertTrue(physical.contains("changed outside the server"), physical);
        assertTrue(physical.contains("type text where jsonb is expected"), physical);
        assertFalse(physical.contains("raise \"schemaVersion\""), "a version bump does not repair edited tables");

        String upgrade = StartupErrors.storage(
                        new StorageException(
                                StorageException.UNSUPPORTED_MIGRATION,
                                "schema upgrade is not additive",
                                Map.of("table", "todos")),
                        "public",
                        2,
                        null)
                .getMessage();
        assertTrue(upgrade.contains("the upgrade to schema version 2 is not additive (table \"todos\")"), upgrade);
        assertTrue(upgrade.contains("make the change additive"), upgrade);
        assertTrue(upgrade.contains("[sync.storage.unsupported_migration]"), upgrade);
    }

    /** A unique index over rows that already collide: the index, the colliding rows and the two ways out. */
    @Test
    void collidingRowsUnderANewUniqueIndexAreListed() {
        StorageException e = new StorageException(
                StorageException.UNIQUE_INDEX_DUPLICATES,
                "rows of one partition already share the key of a declared unique index",
                Map.of(
                        "table",
                        "members",
                        "index",
                        "members_org_email",
                        "columns",
                        List.of("org_id", "email"),
                        "collisions",
                        List.of(Map.of(
                                "partition",
                                "p1",
                                "rowIds",
                                List.of("a1", "a2"),
                                "rows",
                                2L,
                                "key",
                                List.of("o1", "dup@x"))),
                        "more",
                        true));
        String m = StartupErrors.storage(e, "sync", 2, null).getMessage();
        assertEquals(
                "Syncular cannot start on PostgreSQL schema \"sync\": the schema declares the unique index"
                        + " \"members_org_email\" on table \"members\" (columns \"org_id\", \"email\"), but rows of one"
                        + " partition already share its key: partition \"p1\" rows \"a1\", \"a2\" (2 rows) with key"
                        + " (\"o1\", \"dup@x\"); and more [sync.storage.unique_index_duplicates]. Fix it in one of these"
                        + " ways: (1) give those rows distinct keys or delete all but one of each (through a server still"
                        + " running the previous schema, or in the table's sync_rows_ table), then start again; (2) drop"
                        + " \"unique\": true from the index in the schema IR (docs/SCHEMA.md, \"Unique indexes\").",
                m);
    }

    @Test
    void otherStorageFailuresAreNotRewritten() {
        assertNull(StartupErrors.storage(
                new StorageException(StorageException.SCHEMA_NOT_READY, "x", Map.of()), "public", 1, null));
        assertNull(StartupErrors.storage(
                new StorageException(StorageException.INVALID_ARGUMENT, "x", Map.of()), "public", 1, null));
    }

    @Test
    void invalidSchemaNamesTheFileTheReasonAndTheProperty() {
        SchemaException e = assertThrows(
                SchemaException.class,
                () -> SchemaLoader.parse(
                        "{\"version\":1,\"tables\":[{\"name\":\"t\",\"primaryKey\":\"id\",\"scopes\":[\"t:{id}\"],"
                                + "\"columns\":[{\"name\":\"id\",\"type\":\"bytes\",\"nullable\":false}]}]}"));
        String m = StartupErrors.invalidSchema(e, "/etc/app.syncular.ir.json").getMessage();
        assertTrue(
                m.startsWith("Syncular cannot serve the schema IR /etc/app.syncular.ir.json: table \"t\": primary key"),
                m);
        assertTrue(m.contains("[schema.invalid, reason primary_key_ineligible_type]"), m);
        assertTrue(m.contains("syncular.schema.path (env SYNCULAR_SCHEMA_PATH)"), m);
    }

    /** §5.10.1: a crdtType no merger is registered for stops start-up, naming the registered ones. */
    @Test
    void unknownCrdtTypeNamesTheRegisteredMergers() {
        SchemaException e = assertThrows(
                SchemaException.class,
                () -> SchemaLoader.parse(
                        "{\"version\":1,\"tables\":[{\"name\":\"t\",\"primaryKey\":\"id\",\"scopes\":[\"t:{id}\"],"
                                + "\"columns\":[{\"name\":\"id\",\"type\":\"string\",\"nullable\":false},"
                                + "{\"name\":\"d\",\"type\":\"crdt\",\"nullable\":true,\"crdtType\":\"automerge\"}]}]}",
                        Set.of("yjs-doc")));
        String m = StartupErrors.invalidSchema(e, "/etc/app.syncular.ir.json").getMessage();
        assertTrue(m.contains("unknown crdtType \"automerge\" (registered: [yjs-doc])"), m);
        assertTrue(m.contains("reason crdt_type_unknown"), m);
    }

    @Test
    void unreachableDatabaseOrRefusedCredentialsNameTheDatasourceProperties() {
        Throwable refused = new CompletionException(new ConnectException("Connection refused: /127.0.0.1:5499"));
        String m = StartupErrors.database(refused, "postgresql://app:secret@127.0.0.1:5499/app", "app")
                .getMessage();
        assertTrue(
                m.startsWith(
                        "Syncular cannot use the PostgreSQL database postgresql://127.0.0.1:5499/app as user \"app\": "
                                + "cannot connect (Connection refused: /127.0.0.1:5499)."),
                m);
        assertTrue(m.contains("SYNCULAR_PG_URL") && m.contains("SYNCULAR_PG_PASSWORD"), m);
        assertFalse(m.contains("secret"), "never prints a password");

        String auth = StartupErrors.database(
                        new RuntimeException(new PgException(
                                "password authentication failed for user \"app\"", "FATAL", "28P01", null)),
                        "postgresql://db:5432/app",
                        "app")
                .getMessage();
        assertTrue(
                auth.contains("the server refused: password authentication failed for user \"app\" (SQLSTATE 28P01)"),
                auth);

        assertNull(StartupErrors.database(new IllegalStateException("something else"), "postgresql://db/app", "app"));
        assertNull(StartupErrors.database(
                new PgException("deadlock", "ERROR", "40P01", null), "postgresql://db/app", "app"));
    }
}
