package dev.syncular.server.conformance;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/**
 * The conformance host ({@code /__conformance}, docs/CONFORMANCE.md): host-controlled authentication,
 * scopes and clock for Syncular's cross-implementation catalog. Off by default; refused in prod.
 */
@ConfigMapping(prefix = "syncular.conformance")
public interface ConformanceConfig {
    @WithDefault("false")
    boolean enabled();
}
