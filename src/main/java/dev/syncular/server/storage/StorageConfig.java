package dev.syncular.server.storage;

import dev.syncular.server.config.DurationRange;
import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.Pattern;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * {@code syncular.storage.*}: the PostgreSQL storage's namespace, push queue and timeouts, its pool's waiters, the
 * read replicas, the recent-commit memory and the scheduled jobs' lease.
 */
@ConfigMapping(prefix = "syncular.storage")
public interface StorageConfig {
    /** The storage namespace when {@code syncular.storage.pg-schema} is unset: a schema of its own. */
    String DEFAULT_PG_SCHEMA = "syncular";
    /** Where the tables went by default before 0.2.0. */
    String LEGACY_PG_SCHEMA = "public";

    /**
     * {@code syncular.storage.pg-schema}: PostgreSQL schema (namespace) holding the sync tables, created when
     * absent; unset: {@value #DEFAULT_PG_SCHEMA} ({@link #pgSchema()}).
     */
    @WithName("pg-schema")
    Optional<String> pgSchemaSetting();

    /** The storage namespace in use: the setting, else {@value #DEFAULT_PG_SCHEMA}. */
    default String pgSchema() {
        return pgSchemaSetting().map(String::trim).filter(v -> !v.isEmpty()).orElse(DEFAULT_PG_SCHEMA);
    }

    /**
     * Partition transactions (pushes) that may wait in this process's queue of one partition; one more is
     * answered 429 {@code sync.rate_limited} with {@code Retry-After} at once.
     */
    @WithDefault("1000")
    int maxQueuedPushesPerPartition();

    /**
     * {@code lock_timeout} of every push transaction ({@code SET LOCAL}); {@code 0} = none. A push that waits
     * longer for a lock (the partition row behind another pod's push, a schema upgrade's table lock) is
     * rolled back and answered 429 {@code sync.rate_limited}.
     */
    @WithDefault("10s")
    Duration lockTimeout();

    /**
     * {@code statement_timeout} of every statement on a pooled connection (the session default, and
     * {@code SET LOCAL} in every push transaction); {@code 0} = none. A statement cut off is answered like a
     * lock timeout (429 {@code sync.rate_limited}), so a runaway read never holds a connection for longer.
     */
    @WithDefault("30s")
    Duration statementTimeout();

    /**
     * Requests that may wait for a connection of the pool (beyond {@code quarkus.datasource.reactive.max-size}
     * in use); one more is answered 429 {@code sync.rate_limited} at once.
     */
    @WithDefault("1000")
    int poolMaxWaiters();

    /** How long a request waits for a pooled connection before it is answered 429 {@code sync.rate_limited}. */
    @WithDefault("10s")
    Duration poolWaitTimeout();

    /**
     * Hot standbys of the database that pull-only rounds may read from (docs/SCALING.md, "Reads from replicas"):
     * reactive URLs {@code postgresql://host:port/db}, with the datasource's user and password unless the URL
     * gives its own. Absent or empty: every read on the primary. Env {@code SYNCULAR_STORAGE_REPLICAS}
     * (comma-separated).
     */
    Optional<List<@Pattern(regexp = "\\s*|\\s*postgres(ql)?://.*", message = REPLICA_URL) String>> replicas();

    /** The problem of a replica that is not a reactive URL: the URL itself may carry a password, never echoed. */
    String REPLICA_URL = "each is a reactive URL postgresql://host:port/db";

    /** Replay lag past which a replica leaves rotation (it comes back by itself once within it). */
    @WithDefault("5s")
    @DurationRange(min = DurationRange.MORE_THAN_ZERO, message = "must be more than 0s")
    Duration replicaMaxLag();

    /** Time between two checks of every replica's replay lag. */
    @WithDefault("1s")
    @DurationRange(min = DurationRange.MORE_THAN_ZERO, message = "must be more than 0s")
    Duration replicaCheckInterval();

    /** Connections of each replica's pool. */
    @WithDefault("20")
    @Min(value = 1, message = "must be at least 1")
    int replicaPoolMaxSize();

    /**
     * Memory for this pod's newest commits, kept whole after their push committed so the pulls that follow them
     * (§4.5 log windows this pod committed entirely) are answered without reading the log; estimated bytes,
     * over every partition, least recently pushed partition dropped first. {@code 0}: every window read from
     * the log.
     */
    @WithDefault("8M")
    MemorySize recentCommits();

    /**
     * How long a scheduled job's claim (a lease row in {@code sync_jobs}) holds without renewal: the running pod
     * renews it every third of this, and a pod that died mid-run leaves the job to the others after it.
     */
    @WithDefault("60s")
    @DurationRange(min = "PT1S", message = "must be at least 1s")
    Duration jobLease();

    /**
     * Hash partitions of each commit-log table ({@code sync_commits}, {@code sync_changes},
     * {@code sync_commit_scopes}, by {@code partition_id}) that a new database is created with; {@code 0} (the
     * default): one plain table each, which prunes a large log several times faster on the measured machine
     * (docs/BENCHMARKS.md, "The log hash-partitioned"). An existing log keeps its layout; the {@code repartition-log} command moves it online
     * (docs/SCALING.md, "Partitioning the commit log").
     */
    @WithDefault("0")
    @Min(value = 0, message = "must be 0 (plain tables) to 256")
    @Max(value = 256, message = "must be 0 (plain tables) to 256")
    int logPartitions();
}
