package dev.syncular.server.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.blobs.BlobsConfig;
import dev.syncular.server.blobs.postgres.PostgresBlobStore;
import dev.syncular.server.config.StoreKind;
import dev.syncular.server.s3.S3Config;
import dev.syncular.server.storage.StorageConfig;
import dev.syncular.server.testsupport.MappedConfig;
import dev.syncular.server.testsupport.TestPostgres;
import io.smallrye.config.SmallRyeConfig;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.inject.Instance;
import java.lang.reflect.Proxy;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code syncular.blobs.store} selection in {@link EngineProducer}: the S3 beans are only touched for {@code s3}
 * (a missing bucket or a presign ttl above 15 minutes is refused earlier, at start-up: {@code S3Config}'s constraints and cross-field check). */
class BlobStoreWiringTest {

    private static SmallRyeConfig config(Map<String, String> props) {
        return MappedConfig.config(props, Map.of());
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
                            config(Map.of()).getConfigMapping(BlobsConfig.class),
                            config(Map.of()).getConfigMapping(S3Config.class),
                            config(Map.of("syncular.storage.pg-schema", "tenant_a"))
                                    .getConfigMapping(StorageConfig.class),
                            untouchable(),
                            untouchable());
            assertEquals(
                    "tenant_a", assertInstanceOf(PostgresBlobStore.class, store).pgSchema());
            assertEquals(
                    StoreKind.EMBEDDED,
                    config(Map.of()).getConfigMapping(BlobsConfig.class).store());
            pool.close().await().indefinitely();
        } finally {
            vertx.close().await().indefinitely();
        }
    }
}
