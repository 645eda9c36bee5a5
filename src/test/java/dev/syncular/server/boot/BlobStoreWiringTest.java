package dev.syncular.server.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.blobs.postgres.PostgresBlobStore;
import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.testsupport.TestPostgres;
import io.quarkus.runtime.configuration.DurationConverter;
import io.quarkus.runtime.configuration.MemorySize;
import io.quarkus.runtime.configuration.MemorySizeConverter;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.inject.Instance;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code syncular.blobs.store} selection in {@link EngineProducer}: the S3 beans are only touched for {@code s3}
 * (a missing bucket or a presign ttl above 15 minutes is refused earlier, by {@code SyncularConfigValidator}). */
class BlobStoreWiringTest {

    private static SyncularConfig config(Map<String, String> props) {
        Map<String, String> all = new HashMap<>(props);
        return new SmallRyeConfigBuilder()
                .withSources(new PropertiesConfigSource(all, "test", 300))
                .withConverter(MemorySize.class, 100, new MemorySizeConverter())
                .withConverter(Duration.class, 100, new DurationConverter())
                .withMapping(SyncularConfig.class)
                .build()
                .getConfigMapping(SyncularConfig.class);
    }

    /** An {@code Instance} that fails the test when anything asks it for its bean. */
    @SuppressWarnings("unchecked")
    private static <T> Instance<T> untouchable() {
        return (Instance<T>) Proxy.newProxyInstance(
                BlobStoreWiringTest.class.getClassLoader(), new Class<?>[] {Instance.class}, (proxy, method, args) -> {
                    if (method.getName().equals("toString")) {
                        return "untouchable";
                    }
                    throw new AssertionError("S3 bean looked up: " + method.getName());
                });
    }

    @Test
    void embeddedIsTheDefaultAndNeverLooksUpS3() {
        Vertx vertx = Vertx.vertx();
        try {
            Pool pool = TestPostgres.pool(vertx, 1);
            BlobStore store = new EngineProducer()
                    .blobStore(
                            pool,
                            config(Map.of("syncular.storage.pg-schema", "tenant_a")),
                            untouchable(),
                            untouchable());
            assertEquals(
                    "tenant_a", assertInstanceOf(PostgresBlobStore.class, store).pgSchema());
            assertEquals(
                    SyncularConfig.StoreKind.EMBEDDED, config(Map.of()).blobs().store());
            pool.close().await().indefinitely();
        } finally {
            vertx.close().await().indefinitely();
        }
    }
}
