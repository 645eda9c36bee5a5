package dev.syncular.server.storage;

import java.util.Objects;

/**
 * A backfill checkpoint this build installs (RFC 0007 in the seed): the data backfill {@code name} that
 * must be activated in {@code partition} before schema {@code schemaVersion} may be served there by any
 * process that did not declare it.
 */
public record CheckpointDeclaration(String partition, String name, int schemaVersion) {
    public CheckpointDeclaration {
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(name, "name");
        if (schemaVersion < 1) {
            throw new IllegalArgumentException("schemaVersion must be at least 1");
        }
    }
}
