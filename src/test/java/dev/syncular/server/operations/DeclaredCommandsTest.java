package dev.syncular.server.operations;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The declared-commands document (docs/OPERATIONS.md): what it accepts, and every refusal naming its cause. */
class DeclaredCommandsTest {
    private static CompiledSchema schema() throws Exception {
        return SchemaLoader.parse(Files.readString(OperationsResourceTest.DIR.resolve("demo-react.syncular.ir.json")));
    }

    private static String refused(String document) throws Exception {
        CompiledSchema schema = schema();
        return assertThrows(
                        IllegalArgumentException.class,
                        () -> DeclaredCommands.load(document.getBytes(StandardCharsets.UTF_8), schema))
                .getMessage();
    }

    @Test
    void theFixtureLoads() throws Exception {
        List<RemoteCommand> commands = DeclaredCommands.load(
                Files.readAllBytes(OperationsResourceTest.DIR.resolve("commands.json")), schema());
        assertEquals(
                List.of("todos.create", "todos.complete", "todos.remove"),
                commands.stream().map(RemoteCommand::id).toList());
    }

    @Test
    void badDocumentsAreRefusedNamingTheCause() throws Exception {
        assertTrue(refused("[]").contains("\"commands\" array"));
        assertTrue(refused("{\"commands\":[{\"id\":\"a\",\"table\":\"nope\",\"op\":\"delete\",\"row\":\"id\","
                        + "\"actors\":[\"*\"]}]}")
                .contains("no table"));
        assertTrue(refused("{\"commands\":[{\"id\":\"a\",\"table\":\"todos\",\"op\":\"merge\",\"row\":\"id\","
                        + "\"actors\":[\"*\"]}]}")
                .contains("op must be"));
        assertTrue(refused("{\"commands\":[{\"id\":\"a\",\"table\":\"todos\",\"op\":\"update\",\"row\":\"id\","
                        + "\"set\":{\"color\":1},\"actors\":[\"*\"]}]}")
                .contains("no writable column color"));
        assertTrue(refused("{\"commands\":[{\"id\":\"a\",\"table\":\"todos\",\"op\":\"update\",\"row\":\"id\","
                        + "\"set\":{\"done\":true}}]}")
                .contains("actors"));
        String one = "{\"id\":\"a\",\"table\":\"todos\",\"op\":\"delete\",\"row\":\"id\",\"actors\":[\"*\"]}";
        assertTrue(refused("{\"commands\":[" + one + "," + one + "]}").contains("declared twice"));
    }
}
