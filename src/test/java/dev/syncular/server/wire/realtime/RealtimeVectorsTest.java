package dev.syncular.server.wire.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.testsupport.ReferenceMaterial;
import dev.syncular.server.wire.WireException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Walks the reference realtime vectors (vectors/realtime/manifest.json). */
class RealtimeVectorsTest {

    static Path referenceDir() {
        return ReferenceMaterial.dir();
    }

    /** presence-publish (and other Client→server cases) parse with the client parser. */
    private static boolean isClientToServer(JsonNode entry) {
        String covers = entry.path("covers").asText("");
        String name = entry.path("name").asText("");
        return covers.startsWith("Client→server")
                || covers.startsWith("Client->server")
                || name.startsWith("presence-publish");
    }

    private static ControlMessage parse(JsonNode entry, String text) {
        return isClientToServer(entry)
                ? ControlMessages.parseClientMessage(text)
                : ControlMessages.parseServerMessage(text);
    }

    @Test
    void vectors() throws IOException {
        Path dir = referenceDir().resolve("vectors").resolve("realtime");
        Path manifestPath = dir.resolve("manifest.json");
        assertTrue(Files.isRegularFile(manifestPath), "realtime manifest not found under reference dir");
        JsonNode manifest = ControlMessages.readTree(Files.readString(manifestPath, StandardCharsets.UTF_8));
        assertEquals("realtime", manifest.path("kind").asText());

        int valid = 0;
        for (JsonNode entry : manifest.path("cases")) {
            String name = entry.path("name").asText();
            String text = Files.readString(dir.resolve(entry.path("json").asText()), StandardCharsets.UTF_8);
            ControlMessage msg = parse(entry, text);
            assertFalse(msg instanceof ControlMessage.Unknown, "vector parsed as unknown: " + name);
            String rendered = ControlMessages.render(msg);
            assertEquals(
                    ControlMessages.readTree(text),
                    ControlMessages.readTree(rendered),
                    "re-rendered vector differs: " + name);
            // Compact output: rendering the re-parsed message is stable.
            assertEquals(rendered, ControlMessages.render(parse(entry, rendered)), name);
            assertFalse(rendered.contains("\n") || rendered.contains(": "), name);
            valid++;
        }

        int invalid = 0;
        for (JsonNode entry : manifest.path("invalid")) {
            String name = entry.path("name").asText();
            String expected = entry.path("error").asText();
            String text = Files.readString(dir.resolve(entry.path("json").asText()), StandardCharsets.UTF_8);
            WireException e =
                    assertThrows(WireException.class, () -> parse(entry, text), "invalid vector accepted: " + name);
            assertEquals(expected, e.code(), name);
            invalid++;
        }

        assertTrue(valid >= 4, "expected at least four valid realtime vectors");
        assertTrue(invalid >= 4, "expected at least four invalid realtime vectors");
        System.out.println(
                "realtime vectors checked: " + (valid + invalid) + " (" + valid + " valid, " + invalid + " invalid)");
    }
}
