package dev.syncular.server;

import org.junit.platform.suite.api.IncludeClassNamePatterns;
import org.junit.platform.suite.api.SelectPackages;
import org.junit.platform.suite.api.Suite;

/**
 * Half of {@code ./mvnw test}: the test classes of the web edge ({@code http}, {@code realtime}, {@code console}), in
 * one test JVM; {@link CoreSuite} runs every other test class in a second JVM beside it (pom.xml, surefire). In one JVM
 * Quarkus orders the classes by test profile, so each profile's app is built once. The halves are split by package,
 * with about the same class time and app builds each (README, "Tests").
 */
@Suite
@SelectPackages("dev.syncular.server")
@IncludeClassNamePatterns(EdgeSuite.CLASSES)
public class EdgeSuite {
    /** The test classes of this half, by name: a name filter is applied before a class is loaded. */
    static final String CLASSES = "dev\\.syncular\\.server\\.(http|realtime|console)\\..*Tests?";
}
