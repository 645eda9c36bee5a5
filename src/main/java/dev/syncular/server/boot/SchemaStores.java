package dev.syncular.server.boot;

import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.blobs.postgres.PostgresBlobStore;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.postgres.PostgresSegmentStore;
import dev.syncular.server.storage.ServerStorage;
import dev.syncular.server.storage.StorageBackup;
import dev.syncular.server.storage.postgres.SchemaBackup;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

/**
 * Stores of a server assembled beside the pod's on the same database, each in a PostgreSQL schema of its own: the
 * conformance host's instances. {@link #in} builds the storage, the segment store, the blob store and the storage's
 * backup of one schema; {@link Stores#drop} removes the schema and its backup.
 */
@Singleton
public class SchemaStores {
    private final Pool pool;

    @Inject
    public SchemaStores(Pool pool) {
        this.pool = pool;
    }

    /** The stores of PostgreSQL schema {@code pgSchema}, with default settings (nothing created yet). */
    public Stores in(String pgSchema) {
        return new Stores(
                pgSchema,
                Assembly.storage(pool, pgSchema),
                new PostgresSegmentStore(pool, pgSchema, PostgresSegmentStore.defaultCacheBytes()),
                new PostgresBlobStore(pool, pgSchema),
                new SchemaBackup(pool, pgSchema));
    }

    /** The stores of one PostgreSQL schema ({@link #in}). */
    public final class Stores {
        private final String pgSchema;
        private final ServerStorage storage;
        private final PostgresSegmentStore segments;
        private final PostgresBlobStore blobs;
        private final StorageBackup backup;

        private Stores(
                String pgSchema,
                ServerStorage storage,
                PostgresSegmentStore segments,
                PostgresBlobStore blobs,
                StorageBackup backup) {
            this.pgSchema = pgSchema;
            this.storage = storage;
            this.segments = segments;
            this.blobs = blobs;
            this.backup = backup;
        }

        public ServerStorage storage() {
            return storage;
        }

        public SegmentStore segments() {
            return segments;
        }

        public BlobStore blobs() {
            return blobs;
        }

        /** §2.1 backup and restore of the storage (the conformance host's {@code backup-restore}). */
        public StorageBackup backup() {
            return backup;
        }

        /** Creates (or checks) the storage for {@code schema}, then the segment and blob stores' tables. */
        public Uni<Void> ensureSchema(CompiledSchema schema) {
            return storage.ensureSchema(schema)
                    .flatMap(v -> segments.ensureSchema())
                    .flatMap(v -> blobs.ensureSchema());
        }

        /** Drops the schema with everything in it, then the backup. */
        public Uni<Void> drop() {
            return pool.query("DROP SCHEMA IF EXISTS \"" + pgSchema + "\" CASCADE")
                    .execute()
                    .chain(backup::drop)
                    .replaceWithVoid();
        }
    }
}
