package dev.syncular.server.blobs.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.blobs.BlobIds;
import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.blobs.BlobStoreContract;
import dev.syncular.server.testsupport.TestPostgres;
import io.smallrye.mutiny.Uni;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** The {@link BlobStoreContract} on real PostgreSQL, in a fresh PostgreSQL schema dropped after the class. */
class PostgresBlobStoreTest extends BlobStoreContract {
    private static Vertx vertx;
    private static Pool pool;
    private String pgSchema;

    private static synchronized Pool pool() {
        if (pool == null) {
            vertx = Vertx.vertx();
            pool = TestPostgres.pool(vertx, 8);
        }
        return pool;
    }

    @Override
    protected BlobStore createStore() {
        pgSchema = "blob_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        PostgresBlobStore s = new PostgresBlobStore(pool(), pgSchema);
        await(s.ensureSchema());
        return s;
    }

    @AfterAll
    void dropSchema() {
        try {
            if (pgSchema != null) {
                await(pool().query("DROP SCHEMA IF EXISTS \"" + pgSchema + "\" CASCADE")
                        .execute());
            }
        } finally {
            if (pool != null) {
                await(pool.close());
                await(vertx.close());
                pool = null;
                vertx = null;
            }
        }
    }

    @Test
    void ensureSchemaIsIdempotentAndConcurrentSafe() {
        List<Uni<Void>> runs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            runs.add(new PostgresBlobStore(pool(), pgSchema).ensureSchema());
        }
        await(Uni.join().all(runs).andFailFast());
        List<String> tables = new ArrayList<>();
        for (Row r : await(pool().preparedQuery("SELECT table_name::text FROM information_schema.tables"
                        + " WHERE table_schema = $1 ORDER BY 1")
                .execute(Tuple.of(pgSchema)))) {
            tables.add(r.getString(0));
        }
        assertEquals(List.of("sync_blob_chunks", "sync_blobs"), tables);
    }

    /**
     * A blob stored before chunking (its bytes in {@code sync_blobs.bytes}, {@code chunk_bytes} NULL) is read
     * back in slices of the column, chunk by chunk, and deleted like any other.
     */
    @Test
    void blobStoredBeforeChunkingIsReadInSlices() {
        String p = partition();
        byte[] bytes = randomBytes(2 * BlobStore.READ_CHUNK_BYTES + 7);
        String id = BlobIds.compute(bytes);
        await(pool().preparedQuery("INSERT INTO \"" + pgSchema + "\".sync_blobs (partition_id, blob_id, bytes,"
                        + " byte_length, media_type, created_at_ms) VALUES ($1, $2, $3, $4, NULL, 1)")
                .execute(Tuple.of(p, id, Buffer.buffer(bytes), (long) bytes.length)));
        List<byte[]> chunks = store.read(p, id).collect().asList().await().atMost(TIMEOUT);
        assertEquals(3, chunks.size());
        assertEquals(7, chunks.get(2).length);
        assertArrayEquals(bytes, readAll(p, id));
        assertTrue(await(store.delete(p, id)));
        assertNull(readAll(p, id));
    }
}
