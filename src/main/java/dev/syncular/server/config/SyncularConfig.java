package dev.syncular.server.config;

import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.util.List;
import java.util.Optional;

/**
 * The server's truly global settings under {@code syncular.*}: where the protocol routes are mounted, the cap on a
 * request body and the backfill checkpoints this build declares. Every feature maps its own group in the package
 * that owns it (issue 46: {@code realtime.RealtimeConfig} for {@code syncular.realtime.*}, {@code
 * storage.StorageConfig} for {@code syncular.storage.*}, ...; docs/CONFIGURATION.md lists them all). This mapping
 * keeps the prefix {@code syncular} itself, so a property under it that no mapping declares is treated as before.
 */
@ConfigMapping(prefix = "syncular")
public interface SyncularConfig {

    /**
     * Path prefix {@code <mount>} of the protocol routes (§1.1), e.g. {@code /api/sync}; unset or
     * {@code /} mounts them at the root ({@code /sync}, {@code /segments/{id}}).
     *
     * <p>Read at start-up: the routes live at the root and {@code http.MountRoute} reroutes requests under the
     * mount to them (outside it, 404). {@code /q/health}, and {@code /q/metrics} on the management port, stay where
     * they are.
     */
    Optional<String> mount();

    /**
     * Cap on a {@code POST <mount>/sync} body, applied to the bytes received and again to the inflated bytes
     * of a {@code Content-Encoding: gzip} body; larger bodies get 413 {@code sync.invalid_request}. Keep it
     * below {@code quarkus.http.limits.max-body-size} (the server-wide backstop, answered without a JSON
     * body).
     */
    @WithDefault("16M")
    MemorySize maxRequestBytes();

    /**
     * The backfill checkpoints this build declares ({@code syncular.checkpoints[i].partition}, {@code .name},
     * {@code .schema-version}): installed by the startup migration; while one is pending only processes that
     * declare it may serve its partition (§2.4).
     */
    Optional<List<Checkpoint>> checkpoints();

    /**
     * {@code syncular.embedded-postgres.*}: owned by {@link EmbeddedPostgresConfigSourceFactory} (the dev/test
     * database), which reads them as plain properties; declared here only so that they are known {@code syncular.*}
     * properties (Quarkus refuses one that no mapping declares, and registers only the mappings something injects).
     */
    EmbeddedPostgres embeddedPostgres();

    interface EmbeddedPostgres {
        Optional<String> url();

        Optional<String> enabled();

        Optional<String> port();

        Optional<String> dataDir();

        Optional<String> binDir();
    }

    interface Checkpoint {
        String partition();

        String name();

        int schemaVersion();
    }

    /** The normalized mount prefix: empty for the root, else {@code /segment[/segment...]} without a trailing slash. */
    default String mountPrefix() {
        return normalizeMount(mount().orElse(""));
    }

    static String normalizeMount(String raw) {
        String m = raw.trim();
        while (m.endsWith("/")) {
            m = m.substring(0, m.length() - 1);
        }
        if (m.isEmpty()) {
            return "";
        }
        return m.startsWith("/") ? m : "/" + m;
    }
}
