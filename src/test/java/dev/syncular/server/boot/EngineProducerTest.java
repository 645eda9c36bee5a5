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
import dev.syncular.server.segments.SignedUrlsConfig;
import dev.syncular.server.testsupport.MappedConfig;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.smallrye.config.ConfigValidationException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Start-up checks of the production wiring: the signed-URL key and TTL ({@link ConfiguredParts}, {@code SignedUrlsConfig}). */
class EngineProducerTest {
    /**
     * §5.4: the production signed-URL TTL is more than zero and at most 15 minutes; the refusal names the property.
     * Checked once, at start-up, by {@code SignedUrlsConfig.problems} (the configuration as {@link MappedConfig} builds
     * it); {@link ConfiguredParts} trusts it.
     */
    @Test
    void signedUrlTtlOutsideTheSpecRangeStopsTheBoot() {
        for (String bad : new String[] {"0s", "-5s", "16m"}) {
            ConfigValidationException e = assertThrows(
                    ConfigValidationException.class,
                    () -> MappedConfig.config(Map.of("syncular.signed-urls.ttl", bad), Map.of()));
            assertTrue(
                    e.getMessage().contains("syncular.signed-urls.ttl must be more than 0s and at most 15m"),
                    e.getMessage());
        }
        for (String good : new String[] {"15m", "1s"}) {
            assertEquals(
                    Duration.parse("PT" + good.toUpperCase()),
                    MappedConfig.mapping(SignedUrlsConfig.class, Map.of("syncular.signed-urls.ttl", good))
                            .ttl());
        }
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
        ConfigValidationException shortKey = assertThrows(
                ConfigValidationException.class,
                () -> MappedConfig.config(Map.of("syncular.signed-urls.key", "too short"), Map.of()));
        assertTrue(
                shortKey.getMessage().contains("syncular.signed-urls.key must have at least 32 bytes"),
                shortKey.getMessage());
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
