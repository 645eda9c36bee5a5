package dev.syncular.server.storage.postgres;

import java.time.Duration;

/**
 * The whole storage contract and every PostgreSQL storage test of {@link PostgresSyncStorageTest} again, with the
 * commit log hash-partitioned by partition id into 16 leaves ({@code syncular.storage.log-partitions=16},
 * {@link LogLayout}) wherever the test's storage is made with the contract's settings.
 */
class HashPartitionedLogStorageTest extends PostgresSyncStorageTest {
    private static final PostgresSyncStorage.Settings SIXTEEN_LEAVES = new PostgresSyncStorage.Settings(
            1000, Duration.ofSeconds(10), Duration.ofSeconds(30), 2000, 1000, 8L << 20, Duration.ofSeconds(60), 16);

    @Override
    protected PostgresSyncStorage.Settings contractSettings() {
        return SIXTEEN_LEAVES;
    }
}
