package dev.syncular.server.testsupport;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A pool on the test database ({@link TestPostgres}) and the fresh storage schemas a test class creates in it,
 * all dropped after the class: {@code @RegisterExtension static final ScratchSchemas SCRATCH =
 * ScratchSchemas.open(n);} (or {@link #close} it yourself).
 */
public final class ScratchSchemas implements AutoCloseable, AfterAllCallback {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** The smallest schema a storage serves: table {@code t}, string key {@code id}, scope {@code k:{id}}. */
    public static final CompiledSchema ONE_TABLE = SchemaLoader.parse(
            "{\"version\":1,\"tables\":[{\"name\":\"t\",\"primaryKey\":\"id\",\"columns\":[{\"name\":\"id\","
                    + "\"type\":\"string\",\"nullable\":false}],\"scopes\":[\"k:{id}\"]}]}");

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
    public void afterAll(ExtensionContext context) {
        close();
    }

    @Override
    public void close() {
        for (String s : created) {
            pool.query("DROP SCHEMA IF EXISTS \"" + s + "\" CASCADE")
                    .execute()
                    .await()
                    .atMost(WAIT);
        }
        pool.close().await().atMost(WAIT);
        vertx.close().await().atMost(WAIT);
    }
}
