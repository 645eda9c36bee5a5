package dev.syncular.server.testsupport;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * A Quarkus test class whose {@code @TestProfile} builds and starts an app outside the fast tier's shared ones (settings
 * only it, or a few classes of the full suite, share), about 9 s before its first test. JUnit tag {@value #TAG}: the
 * fast tier, {@code ./mvnw test -Pfast}, leaves these out with the {@link StartsProcesses} classes and runs the unit
 * tests and the classes on the default app and the shared ones ({@link ScenarioAppProfile}, {@link NotesAppProfile});
 * {@code ./mvnw verify} runs everything (README, "Tests"). {@code ArchitectureTest} checks that every class on any other
 * profile carries it.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Tag(OwnApp.TAG)
public @interface OwnApp {
    String TAG = "own-app";
}
