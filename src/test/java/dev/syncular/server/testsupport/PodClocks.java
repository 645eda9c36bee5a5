package dev.syncular.server.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Each pod's wall clock, stepped while it runs (the fault campaign's {@code CLOCK_STEP}): the pod's JVM runs with a
 * small preloaded library of the test resources ({@code clock-step/clock_offset.c}, compiled here with the machine's
 * C compiler) that adds an offset to every wall-clock reading; the offset is a number in a file of the pod's own,
 * mapped by the pod, so a step takes effect at the pod's next reading. The monotonic clock is left alone, as an NTP
 * step leaves it, and so is PostgreSQL's clock. Without a C compiler the campaign fails naming the packages (never
 * skipped): {@code apt-get install gcc libc6-dev} ({@code .ci/run} does).
 */
public final class PodClocks {
    private static final String SOURCE = "/clock-step/clock_offset.c";

    private final Path dir;
    private final Path library;

    private PodClocks(Path dir, Path library) {
        this.dir = dir;
        this.library = library;
    }

    /** The clocks of a campaign's pods, every one on time; compiles the library, fails without a C compiler. */
    public static PodClocks start() throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("syncular-pod-clocks-");
        Path source = dir.resolve("clock_offset.c");
        try (InputStream in = PodClocks.class.getResourceAsStream(SOURCE)) {
            if (in == null) {
                throw new IllegalStateException(SOURCE + " is not on the test classpath");
            }
            Files.copy(in, source);
        }
        Path library = dir.resolve("libclockoffset.so");
        Process cc;
        try {
            cc = new ProcessBuilder(
                            "cc", "-shared", "-fPIC", "-O2", "-o", library.toString(), source.toString(), "-ldl")
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "no C compiler (cc): the fault campaign steps a pod's wall clock with a library it compiles;"
                            + " apt-get install gcc libc6-dev (Debian, Ubuntu; .ci/run does)",
                    e);
        }
        cc.getOutputStream().close();
        String output = new String(cc.getInputStream().readAllBytes());
        if (!cc.waitFor(Duration.ofSeconds(60).toMillis(), TimeUnit.MILLISECONDS) || cc.exitValue() != 0) {
            cc.destroyForcibly();
            throw new IllegalStateException("cc could not compile " + source + " (install gcc libc6-dev): " + output);
        }
        return new PodClocks(dir, library);
    }

    /** The environment that puts pod {@code pod}'s JVM on its steppable clock (on time until {@link #step}). */
    public Map<String, String> env(int pod) {
        Path file = file(pod);
        if (!Files.exists(file)) {
            step(pod, Duration.ZERO);
        }
        return Map.of("LD_PRELOAD", library.toString(), "SYNCULAR_CLOCK_OFFSET_FILE", file.toString());
    }

    /** Sets pod {@code pod}'s wall clock {@code offset} away from real time ({@link Duration#ZERO} puts it right). */
    public void step(int pod, Duration offset) {
        try (FileChannel channel = FileChannel.open(
                file(pod), StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            MappedByteBuffer map = channel.map(FileChannel.MapMode.READ_WRITE, 0, Long.BYTES);
            // one aligned 8-byte store: the pod reads the old offset or the new one, never a mix
            map.order(ByteOrder.LITTLE_ENDIAN).putLong(0, offset.toNanos());
            map.force();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Path file(int pod) {
        return dir.resolve("pod-" + pod + ".offset");
    }
}
