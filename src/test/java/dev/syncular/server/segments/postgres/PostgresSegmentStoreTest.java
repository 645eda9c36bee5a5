package dev.syncular.server.segments.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.syncular.server.segments.SegmentCollisionException;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentStoreContract;
import dev.syncular.server.testsupport.TestPostgres;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

/**
 * Runs the {@link SegmentStoreContract} against a real PostgreSQL ({@link TestPostgres}: the
 * {@code SYNCULAR_TEST_PG_*} database or the embedded one), in a fresh PostgreSQL schema dropped after the
 * class.
 */
class PostgresSegmentStoreTest extends SegmentStoreContract {
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
    protected SegmentStore createStore() {
        pgSchema = "seg_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        PostgresSegmentStore s = new PostgresSegmentStore(pool(), pgSchema, PostgresSegmentStore.DEFAULT_CACHE_BYTES);
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
        PostgresSegmentStore s = (PostgresSegmentStore) store;
        List<Uni<Void>> runs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            runs.add(new PostgresSegmentStore(pool(), s.pgSchema(), PostgresSegmentStore.DEFAULT_CACHE_BYTES)
                    .ensureSchema());
        }
        await(Uni.join().all(runs).andFailFast());
        List<String> tables = new ArrayList<>();
        for (Row r : await(pool().preparedQuery("SELECT table_name::text FROM information_schema.tables"
                        + " WHERE table_schema = $1 ORDER BY 1")
                .execute(Tuple.of(s.pgSchema())))) {
            tables.add(r.getString(0));
        }
        assertEquals(List.of("sync_segment_publications", "sync_segments"), tables);
    }

    /**
     * Entries stored before the {@code sha256} column existed have none: a republish of the same bytes is still
     * accepted and different bytes under the id are still a collision (PostgreSQL hashes the stored bytes).
     */
    /** The cache's default bound: an eighth of the heap, at most 64 MiB (the chart's 192 MiB heap: 24 MiB). */
    @Test
    void theDefaultCacheIsAnEighthOfTheHeapAtMost64MiB() {
        Assertions.assertEquals(24L << 20, PostgresSegmentStore.defaultCacheBytes(192L << 20));
        Assertions.assertEquals(64L << 20, PostgresSegmentStore.defaultCacheBytes(1L << 30));
        Assertions.assertEquals(64L << 20, PostgresSegmentStore.defaultCacheBytes(Long.MAX_VALUE));
    }

    @Test
    void entriesWithoutAStoredHashAreComparedByTheirBytes() {
        PostgresSegmentStore s = (PostgresSegmentStore) store;
        byte[] bytes = randomBytes(2000);
        String id = idOf(bytes);
        await(s.publish(id, bytes, pub("sd-legacy", 1_000L, FAR)));
        await(pool().preparedQuery(
                        "UPDATE \"" + s.pgSchema() + "\".sync_segments SET sha256 = NULL WHERE segment_id = $1")
                .execute(Tuple.of(id)));
        await(s.publish(id, bytes, pub("sd-legacy-2", 2_000L, FAR)));
        byte[] other = bytes.clone();
        other[1000] ^= 1;
        Throwable thrown = Assertions.assertThrows(
                Throwable.class, () -> await(s.publish(id, other, pub("sd-legacy-3", 3_000L, FAR))));
        while (!(thrown instanceof SegmentCollisionException) && thrown.getCause() != null) {
            thrown = thrown.getCause();
        }
        Assertions.assertInstanceOf(SegmentCollisionException.class, thrown);
        assertEquals(2, await(s.describe(id)).publications().size());
    }
}
