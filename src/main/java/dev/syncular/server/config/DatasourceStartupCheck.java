package dev.syncular.server.config;

import io.quarkus.runtime.configuration.ConfigurationException;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * Refuses to start without a database. In {@code ./mvnw quarkus:dev} and the tests the
 * embedded PostgreSQL supplies one ({@link EmbeddedPostgresConfigSourceFactory}); the
 * packaged app (any profile) has none, so there the operator must configure it, and until
 * then Quarkus would only deactivate the datasource and boot a server that cannot sync.
 *
 * <p>Throws a {@link ConfigurationException}, which Quarkus prints as a plain message
 * (no stack trace) before exiting with status 1. Runs before any other start-up step ({@code boot.StartupSequence}).
 * An explicit {@code quarkus.datasource.active=false} skips the check.
 */
@ApplicationScoped
public class DatasourceStartupCheck {

    static final String MESSAGE = "Syncular needs a PostgreSQL database, and none is configured. "
            + "Set quarkus.datasource.reactive.url (env QUARKUS_DATASOURCE_REACTIVE_URL or SYNCULAR_PG_URL, "
            + "e.g. postgresql://db.example.com:5432/syncular), quarkus.datasource.username "
            + "(env QUARKUS_DATASOURCE_USERNAME or SYNCULAR_PG_USER) and quarkus.datasource.password "
            + "(env QUARKUS_DATASOURCE_PASSWORD or SYNCULAR_PG_PASSWORD). The packaged app carries no "
            + "embedded database; to try the server without one, run ./mvnw quarkus:dev in the source "
            + "tree, which starts an embedded PostgreSQL.";

    /** Step 1 of {@code boot.StartupSequence}. */
    public void check() {
        Config config = ConfigProvider.getConfig();
        boolean deactivated = config.getOptionalValue("quarkus.datasource.active", Boolean.class)
                .map(active -> !active)
                .orElse(false);
        if (!deactivated
                && missing(config.getOptionalValue(EmbeddedPostgresConfigSourceFactory.URL_PROPERTY, String.class))) {
            throw new ConfigurationException(MESSAGE);
        }
    }

    private static boolean missing(Optional<String> url) {
        return url.isEmpty() || url.get().isBlank();
    }
}
