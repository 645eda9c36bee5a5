package dev.syncular.server.boot;

import dev.syncular.server.storage.SignalListener;
import dev.syncular.server.storage.postgres.BoundedPgPool;
import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

/**
 * The listening connections of realtime hubs (§8.2, §8.3, §8.6) to the PostgreSQL storage's signal channels, each
 * connecting as the application's pool does (hosts, credentials, TLS: {@link BoundedPgPool#listenOptions}) under an
 * {@code application_name} of its own: the pod's hub's, and each conformance instance's.
 */
@Singleton
public class SignalListeners {
    private final Vertx vertx;
    private final BoundedPgPool datasource;

    @Inject
    public SignalListeners(Vertx vertx, BoundedPgPool datasource) {
        this.vertx = vertx;
        this.datasource = datasource;
    }

    /** A listening connection named {@code applicationName}, on the host that accepts writes. */
    public SignalListener named(String applicationName) {
        return Assembly.signalListener(vertx, datasource.listenOptions(applicationName));
    }
}
