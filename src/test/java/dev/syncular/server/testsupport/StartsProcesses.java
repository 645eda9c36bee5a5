package dev.syncular.server.testsupport;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * A test class that starts processes of its own: the packaged server ({@link ServerProcess}, {@link PackagedServer}),
 * a second pod, a throwaway PostgreSQL cluster ({@link ThrowawayPostgres}), a pg_auto_failover formation ({@link
 * AutoFailoverFormation}), the S3 stand-in ({@link TestS3}), the CLI jar, helm. JUnit tag {@value #TAG}: {@code ./mvnw verify} runs them with the rest,
 * {@code ./mvnw test -Pfast} runs the fast tier without them ({@link OwnApp}; README, "Tests").
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag(StartsProcesses.TAG)
public @interface StartsProcesses {
    String TAG = "process";
}
