package dev.syncular.server.testsupport;

import dev.syncular.server.config.EmbeddedDatabase;
import dev.syncular.server.config.EmbeddedPostgresConfigSourceFactory;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.pgclient.PgBuilder;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.PoolOptions;
import java.time.Duration;

/**
 * PostgreSQL coordinates for plain (non-Quarkus) JUnit tests.
 *
 * <p>With {@code SYNCULAR_TEST_PG_URL} set (CI, see .ci/run) this is that database, with
 * {@code SYNCULAR_TEST_PG_USER} / {@code SYNCULAR_TEST_PG_PASSWORD} (default
 * {@code syncular}/{@code syncular}). Otherwise the first call starts the JVM-wide
 * embedded PostgreSQL, the same instance the Quarkus {@code test} profile uses, and
 * returns its {@code syncular_test} database. The URL is in Vert.x form:
 * {@code postgresql://host:port/db}.
 */
public final class TestPostgres {

    public static final String URL_ENV = "SYNCULAR_TEST_PG_URL";
    public static final String USER_ENV = "SYNCULAR_TEST_PG_USER";
    public static final String PASSWORD_ENV = "SYNCULAR_TEST_PG_PASSWORD";
    public static final String REPLICA_URL_ENV = "SYNCULAR_TEST_PG_REPLICA_URL";
    public static final String DATABASE = "syncular_test";
    /** The standby's port when the test support makes it ({@code .ci/standby.sh}). */
    public static final int STANDBY_PORT = 5433;

    private static volatile String url;
    private static volatile String replicaUrl;

    private TestPostgres() {}

    /** Reactive URL, {@code postgresql://host:port/db}; starts the embedded one if needed. */
    public static String url() {
        String u = url;
        if (u == null) {
            synchronized (TestPostgres.class) {
                u = url;
                if (u == null) {
                    u = url = resolve();
                }
            }
        }
        return u;
    }

    public static String user() {
        return env(USER_ENV, "syncular");
    }

    public static String password() {
        return env(PASSWORD_ENV, "syncular");
    }

    /** {@code true} when the tests run against {@code SYNCULAR_TEST_PG_URL}. */
    public static boolean external() {
        return !env(URL_ENV, "").isEmpty();
    }

    /**
     * Reactive URL of a streaming hot standby of the test database (docs/SCALING.md, "Reads from replicas"),
     * same user and password. {@code SYNCULAR_TEST_PG_REPLICA_URL} when set (.ci/run); with the embedded database, a
     * standby of it made in this JVM ({@link EmbeddedStandby}); otherwise, with the test database on the local
     * cluster, the support runs {@code .ci/standby.sh} itself (idempotent; it runs as root in CI) and answers the
     * same database on port {@value #STANDBY_PORT}. Fails, never skips, when there is none.
     */
    public static String replicaUrl() {
        String u = replicaUrl;
        if (u == null) {
            synchronized (TestPostgres.class) {
                u = replicaUrl;
                if (u == null) {
                    u = replicaUrl = resolveReplica();
                }
            }
        }
        return u;
    }

    private static String resolveReplica() {
        String configured = env(REPLICA_URL_ENV, "");
        if (!configured.isEmpty()) {
            return configured;
        }
        if (!external()) {
            url(); // the embedded primary, with the test database, before its base backup
            return "postgresql://127.0.0.1:" + EmbeddedStandby.port() + "/" + DATABASE;
        }
        PgConnectOptions primary = PgConnectOptions.fromUri(url());
        java.nio.file.Path script = java.nio.file.Path.of(System.getProperty("user.dir"), ".ci", "standby.sh");
        try {
            Process p = new ProcessBuilder(script.toString(), primary.getDatabase())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.INHERIT)
                    .start();
            p.getOutputStream().close();
            if (!p.waitFor(180, java.util.concurrent.TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(script + " did not finish within 180 s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(
                        script + " failed (exit " + p.exitValue() + "): no standby; set " + REPLICA_URL_ENV);
            }
        } catch (java.io.IOException e) {
            throw new IllegalStateException("Could not run " + script + ": set " + REPLICA_URL_ENV, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while making the standby", e);
        }
        return "postgresql://" + primary.getHost() + ":" + STANDBY_PORT + "/" + primary.getDatabase();
    }

    private static String resolve() {
        if (external()) {
            return env(URL_ENV, "");
        }
        return embeddedUrl();
    }

    /**
     * Starts the JVM-wide embedded PostgreSQL unless it runs (its binaries also serve {@link ThrowawayPostgres} on a
     * machine without PostgreSQL) and answers the URL of its test database.
     */
    static String embeddedUrl() {
        EmbeddedDatabase embedded = EmbeddedPostgresConfigSourceFactory.launcher();
        if (embedded == null) {
            throw new IllegalStateException("No embedded PostgreSQL in this build (native profile): set " + URL_ENV
                    + ", " + USER_ENV + " and " + PASSWORD_ENV);
        }
        return embedded.ensure(DATABASE, user(), password(), null);
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v.trim();
    }

    /** Drops a storage schema a test created, with everything in it. */
    public static void dropSchema(String schema) {
        Vertx vertx = Vertx.vertx();
        Pool pool = pool(vertx, 1);
        Duration wait = Duration.ofSeconds(30);
        try {
            pool.query("DROP SCHEMA IF EXISTS " + schema + " CASCADE")
                    .execute()
                    .await()
                    .atMost(wait);
        } finally {
            pool.close().await().atMost(wait);
            vertx.close().await().atMost(wait);
        }
    }

    /** A reactive pool on the test database (prepared statements cached), for plain JUnit tests. */
    public static Pool pool(Vertx vertx, int maxSize) {
        return pool(vertx, maxSize, url());
    }

    /** A reactive pool on the standby of the test database ({@link #replicaUrl()}), for plain JUnit tests. */
    public static Pool replicaPool(Vertx vertx, int maxSize) {
        return pool(vertx, maxSize, replicaUrl());
    }

    /**
     * Pauses WAL replay on {@code standby} and waits (polling, 30 s deadline) until it has paused: a request only asks,
     * replay stops at its next record.
     */
    public static void pauseReplay(Pool standby) {
        Duration wait = Duration.ofSeconds(30);
        standby.query("SELECT pg_wal_replay_pause()").execute().await().atMost(wait);
        long deadline = System.nanoTime() + wait.toNanos();
        while (!"paused"
                .equals(standby.query("SELECT pg_get_wal_replay_pause_state()")
                        .execute()
                        .await()
                        .atMost(wait)
                        .iterator()
                        .next()
                        .getString(0))) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("replay did not pause within " + wait);
            }
        }
    }

    /** Resumes WAL replay on {@code standby}. */
    public static void resumeReplay(Pool standby) {
        standby.query("SELECT pg_wal_replay_resume()").execute().await().atMost(Duration.ofSeconds(30));
    }

    private static Pool pool(Vertx vertx, int maxSize, String at) {
        PgConnectOptions options = PgConnectOptions.fromUri(at)
                .setUser(user())
                .setPassword(password())
                .setCachePreparedStatements(true);
        return PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(maxSize))
                .connectingTo(options)
                .using(vertx)
                .build();
    }
}
