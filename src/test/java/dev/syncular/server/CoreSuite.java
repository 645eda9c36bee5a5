package dev.syncular.server;

import org.junit.platform.suite.api.ExcludeClassNamePatterns;
import org.junit.platform.suite.api.IncludeClassNamePatterns;
import org.junit.platform.suite.api.SelectPackages;
import org.junit.platform.suite.api.Suite;

/** The other half of {@code ./mvnw test}: every test class {@link EdgeSuite} does not run, in a JVM of its own. */
@Suite
@SelectPackages("dev.syncular.server")
@IncludeClassNamePatterns(".*Tests?")
@ExcludeClassNamePatterns(EdgeSuite.CLASSES)
public class CoreSuite {}
