package dev.syncular.server.testsupport;

import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * A pool on the test database ({@link TestPostgres}) and the fresh storage schemas a test class creates in it,
 * all dropped by {@link #close}: open one in {@code @BeforeAll}, close it in {@code @AfterAll}.
 */
public final class ScratchSchemas implements AutoCloseable {
    private static final Duration WAIT = Duration.ofSeconds(60);

    public final Vertx vertx;
    public final Pool pool;
    private final List<String> created = new ArrayList<>();

    private ScratchSchemas(int poolSize) {
        this.vertx = Vertx.vertx();
        this.pool = TestPostgres.pool(vertx, poolSize);
    }

    public static ScratchSchemas open(int poolSize) {
        return new ScratchSchemas(poolSize);
    }

    /** A new schema name starting with {@code prefix}, dropped by {@link #close}. */
    public synchronized String fresh(String prefix) {
        String name = prefix + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        created.add(name);
        return name;
    }

    @Override
    public void close() {
        for (String s : created) {
            pool.query("DROP SCHEMA IF EXISTS \"" + s + "\" CASCADE").execute().await().atMost(WAIT);
        }
        pool.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }
}
