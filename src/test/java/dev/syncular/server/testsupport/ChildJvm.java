package dev.syncular.server.testsupport;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * JVM flags for the Java processes the tests start (the packaged pods of {@link ServerProcess}, the S3 stand-in of
 * {@link TestS3}, the CLI jar): system property {@value #PROPERTY}, set by pom.xml for surefire and failsafe to
 * {@code -XX:TieredStopAtLevel=1}. These processes live seconds to a few minutes on two shared cores, where the C2
 * compiler's threads cost more than its code gains (a pod's start: 5.4–6.5 s of CPU with C2, 3.2–3.3 s with C1 alone,
 * measured). They come before a process's own flags, so the chart's flags still apply; behaviour is unchanged. The
 * benchmarks do not set the property: their pods run as deployed.
 */
public final class ChildJvm {
    public static final String PROPERTY = "testsupport.child-jvm-flags";

    private ChildJvm() {}

    /** The start of a child's command line: this JVM's {@code java} and the flags; the caller appends the rest. */
    public static List<String> command() {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        String value = System.getProperty(PROPERTY, "").strip();
        if (!value.isEmpty()) {
            cmd.addAll(Arrays.asList(value.split("\\s+")));
        }
        return cmd;
    }
}
