package dev.syncular.server.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.syncular.server.testsupport.TestPostgres;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import jakarta.inject.Inject;
import java.time.Duration;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/** The test profile always has a working datasource: the CI database or the embedded one. */
@QuarkusTest
class DatasourceProfileTest {

    @Inject
    Pool pool;

    @ConfigProperty(name = "quarkus.datasource.reactive.url")
    String url;

    @ConfigProperty(name = "syncular.storage.statement-timeout")
    Duration statementTimeout;

    @Test
    void poolAnswersSelectOne() {
        Row row = pool.query("SELECT 1 AS one, current_database() AS db")
                .execute()
                .await()
                .atMost(Duration.ofSeconds(30))
                .iterator()
                .next();
        assertEquals(1, row.getInteger("one"));
        assertEquals("syncular_test", row.getString("db"));
    }

    /**
     * Every pooled connection starts with {@code syncular.storage.statement-timeout} as its session
     * {@code statement_timeout} ({@code BoundedPgPool}), so a pull's statements are bounded as a push's are.
     */
    @Test
    void everyPooledConnectionHasTheStatementTimeout() {
        for (int i = 0; i < 3; i++) {
            Row row = pool.query("SHOW statement_timeout")
                    .execute()
                    .await()
                    .atMost(Duration.ofSeconds(30))
                    .iterator()
                    .next();
            assertEquals(statementTimeout.toSeconds() + "s", row.getString(0));
        }
    }

    @Test
    void usesTheCiDatabaseWhenConfiguredElseTheEmbeddedOne() {
        if (TestPostgres.external()) {
            assertEquals(System.getenv(TestPostgres.URL_ENV).trim(), url);
        } else {
            String port = System.getProperty(EmbeddedDatabase.PORT_PROPERTY);
            assertEquals("postgresql://127.0.0.1:" + port + "/syncular_test", url);
            // The Quarkus test app and plain tests share one embedded instance per JVM.
            assertEquals(url, TestPostgres.url());
        }
    }
}
