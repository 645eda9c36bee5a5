package dev.syncular.server.boot;

import io.smallrye.config.ConfigMapping;
import java.util.List;
import java.util.Optional;

/** {@code syncular.schema.*}: the served schema (§2.4) and its §9 window, loaded by {@link EngineProducer}. */
@ConfigMapping(prefix = "syncular.schema")
public interface SchemaConfig {
    /** The bundled example schema (classpath resource), used when {@code syncular.schema.path} is unset. */
    String BUNDLED_SCHEMA_RESOURCE = "schema/quickstart.syncular.ir.json";

    /** File system path of the schema IR JSON (§2.4); unset = the bundled quickstart schema. */
    Optional<String> path();

    /**
     * The §9 schema window: file paths of the older schema IR documents still served beside the current one
     * ({@code path}), in any order, e.g. {@code /etc/syncular/schema/v1.syncular.ir.json}. A client on one of
     * their versions keeps syncing through its own codec; every other version gets the schema floor naming the
     * oldest. Checked at start-up against the current schema (§9 rules: existing tables, columns, codecs,
     * primary keys, references and scope patterns identical, appended columns nullable, versions distinct and
     * older than the current one, each listed in the current schema's {@code schemaVersions} history when it
     * has one). Unset: only the current version is served.
     */
    Optional<List<String>> window();
}
