package dev.syncular.server.health;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.atomic.AtomicBoolean;

/** Set once the startup schema migration (§2.4) finished; read by the startup and readiness checks. */
@ApplicationScoped
public class StorageReadiness {
    private final AtomicBoolean migrated = new AtomicBoolean();

    public void markMigrated() {
        migrated.set(true);
    }

    public boolean migrated() {
        return migrated.get();
    }
}
