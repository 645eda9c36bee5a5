package dev.syncular.server.boot;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.SchemaWindow;
import io.quarkus.runtime.configuration.ConfigurationException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Start-up checks of the production wiring (the key and TTL checks are {@link ConfiguredParts}'s). */
class EngineProducerTest {
    /** §5.4: the production signed-URL TTL is more than zero and at most 15 minutes; the refusal names the property. */
    @Test
    void signedUrlTtlOutsideTheSpecRangeStopsTheBoot() {
        for (Duration bad : new Duration[] {Duration.ZERO, Duration.ofSeconds(-5), Duration.ofMinutes(16)}) {
            ConfigurationException e =
                    assertThrows(ConfigurationException.class, () -> ConfiguredParts.signedUrlTtl(bad));
            assertTrue(e.getMessage().contains("syncular.signed-urls.ttl"), e.getMessage());
        }
        assertEquals(Duration.ofMinutes(15), ConfiguredParts.signedUrlTtl(Duration.ofMinutes(15)));
        assertEquals(Duration.ofSeconds(1), ConfiguredParts.signedUrlTtl(Duration.ofSeconds(1)));
    }

    /**
     * Signed URLs (§5.4) are verified by whichever pod a client reaches: the key is configured and shared. Without
     * one, prod refuses to start naming {@code syncular.signed-urls.key}; dev and test derive one key per storage
     * schema, the same in every process (pods of a dev deployment verify each other's URLs).
     */
    @Test
    void theSigningKeyIsConfiguredInProdAndSharedOutsideIt() {
        ConfigurationException missing = assertThrows(
                ConfigurationException.class, () -> ConfiguredParts.signingKey(Optional.empty(), "public", true));
        assertTrue(
                missing.getMessage().contains("syncular.signed-urls.key")
                        && missing.getMessage().contains("syncular.signed-urls.enabled=false"),
                missing.getMessage());
        assertThrows(ConfigurationException.class, () -> ConfiguredParts.signingKey(Optional.of(" "), "public", true));
        ConfigurationException shortKey = assertThrows(
                ConfigurationException.class,
                () -> ConfiguredParts.signingKey(Optional.of("too short"), "public", true));
        assertTrue(shortKey.getMessage().contains("at least 32 bytes"), shortKey.getMessage());
        String configured = "0123456789abcdef0123456789abcdef-prod";
        assertArrayEquals(
                configured.getBytes(StandardCharsets.UTF_8),
                ConfiguredParts.signingKey(Optional.of(configured), "public", true));
        byte[] dev = ConfiguredParts.signingKey(Optional.empty(), "public", false);
        assertEquals(32, dev.length);
        assertArrayEquals(
                dev, ConfiguredParts.signingKey(Optional.empty(), "public", false), "stable across processes");
        assertFalse(
                Arrays.equals(dev, ConfiguredParts.signingKey(Optional.empty(), "other", false)), "per storage schema");
    }

    /**
     * §9 window rules checked at start-up for {@code syncular.schema.window}: every failure is one
     * {@link ConfigurationException} naming the property, the file and the rule; documents may be listed in any order.
     */
    @Test
    void theConfiguredSchemaWindowIsCheckedAtStartUp() throws Exception {
        Path dir = Path.of("src/test/resources/schema/window");
        String v1 = dir.resolve("v1.syncular.ir.json").toAbsolutePath().toString();
        String v2 = dir.resolve("v2.syncular.ir.json").toAbsolutePath().toString();
        CompiledSchema current = SchemaLoader.load(Path.of(v2));
        Set<String> crdt = SchemaLoader.BUILTIN_CRDT_TYPES;

        SchemaWindow ok = EngineProducer.window(current, List.of(v1), crdt);
        assertEquals(List.of(2, 1), ok.versions());
        assertEquals(List.of(2), EngineProducer.window(current, List.of(), crdt).versions(), "unset: one version");

        ConfigurationException notNull = assertThrows(
                ConfigurationException.class,
                () -> EngineProducer.window(
                        SchemaLoader.load(dir.resolve("v2-not-null.syncular.ir.json")), List.of(v1), crdt));
        assertTrue(
                notNull.getMessage().contains("syncular.schema.window")
                        && notNull.getMessage().contains(v1)
                        && notNull.getMessage().contains("column \"note\" appended after version 1 must be nullable")
                        && notNull.getMessage().contains("window_appended_not_nullable"),
                notNull.getMessage());

        ConfigurationException same =
                assertThrows(ConfigurationException.class, () -> EngineProducer.window(current, List.of(v2), crdt));
        assertTrue(
                same.getMessage().contains("schema version 2 is not older than the current schema (version 2"),
                same.getMessage());

        ConfigurationException twice =
                assertThrows(ConfigurationException.class, () -> EngineProducer.window(current, List.of(v1, v1), crdt));
        assertTrue(twice.getMessage().contains("schema version 1 is also the version of " + v1), twice.getMessage());

        ConfigurationException missing = assertThrows(
                ConfigurationException.class,
                () -> EngineProducer.window(current, List.of("/nonexistent/v1.json"), crdt));
        assertTrue(
                missing.getMessage().contains("syncular.schema.window: no schema IR file at /nonexistent/v1.json"),
                missing.getMessage());

        Path scratch = Files.createTempDirectory("window");
        Path renamed = scratch.resolve("renamed.json");
        Files.writeString(renamed, Files.readString(Path.of(v1)).replace("\"title\"", "\"name\""));
        ConfigurationException changed = assertThrows(
                ConfigurationException.class, () -> EngineProducer.window(current, List.of(renamed.toString()), crdt));
        assertTrue(changed.getMessage().contains("window_column_changed"), changed.getMessage());

        ObjectMapper json = new ObjectMapper();
        ObjectNode rebased = (ObjectNode) json.readTree(Path.of(v2).toFile());
        ((ArrayNode) rebased.get("schemaVersions")).remove(0);
        CompiledSchema historyFromTwo = SchemaLoader.parse(json.writeValueAsString(rebased));
        ConfigurationException history = assertThrows(
                ConfigurationException.class, () -> EngineProducer.window(historyFromTwo, List.of(v1), crdt));
        assertTrue(
                history.getMessage()
                        .contains("schema version 1 is not in the current schema's schemaVersions history [2]"),
                history.getMessage());
    }
}
