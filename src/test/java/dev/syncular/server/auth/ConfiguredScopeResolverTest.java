package dev.syncular.server.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import io.quarkus.runtime.configuration.ConfigurationException;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ConfiguredScopeResolverTest {

    private static CompiledSchema quickstart() throws IOException {
        try (InputStream in = ConfiguredScopeResolverTest.class
                .getClassLoader()
                .getResourceAsStream("schema/quickstart.syncular.ir.json")) {
            return SchemaLoader.load(in);
        }
    }

    @Test
    void defaultsToWildcardForEveryScopeVariable() throws IOException {
        assertEquals(
                Map.of("list_id", List.of("*")), ConfiguredScopeResolver.allowedScopes(Optional.empty(), quickstart()));
    }

    @Test
    void parsesConfiguredScopes() throws IOException {
        assertEquals(
                Map.of("list_id", List.of("l1", "l2")),
                ConfiguredScopeResolver.allowedScopes(Optional.of("{\"list_id\":[\"l1\",\"l2\"]}"), quickstart()));
    }

    @Test
    void rejectsMalformedOrUndeclared() throws IOException {
        CompiledSchema s = quickstart();
        assertThrows(ConfigurationException.class, () -> ConfiguredScopeResolver.allowedScopes(Optional.of("{"), s));
        assertThrows(
                ConfigurationException.class,
                () -> ConfiguredScopeResolver.allowedScopes(Optional.of("[\"list_id\"]"), s));
        assertThrows(
                ConfigurationException.class,
                () -> ConfiguredScopeResolver.allowedScopes(Optional.of("{\"list_id\":\"l1\"}"), s));
        assertThrows(
                ConfigurationException.class,
                () -> ConfiguredScopeResolver.allowedScopes(Optional.of("{\"team_id\":[\"t\"]}"), s));
    }
}
