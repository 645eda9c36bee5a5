package dev.syncular.server.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * An S3 stand-in of a test's own that can be stopped and started again ({@link FaultSchedule.Kind#STOP_S3}): s3proxy,
 * as {@link TestS3}, but on jclouds' {@code filesystem} provider in a directory of its own, so a restart on the same
 * port finds the same buckets and objects — as an S3 outage does: the store comes back with what it held. One bucket
 * (a directory of the provider's base directory), made before the first start.
 */
public final class RestartableS3 implements AutoCloseable {
    private final Path dir;
    private final Path data;
    private final int port;
    private final String bucket;
    private volatile Process process;

    private RestartableS3(Path dir, int port, String bucket) {
        this.dir = dir;
        this.data = dir.resolve("data");
        this.port = port;
        this.bucket = bucket;
    }

    /** Starts it on a free port with one empty bucket ({@link #bucket()}). */
    public static RestartableS3 start() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        RestartableS3 s3 = new RestartableS3(
                Files.createTempDirectory("s3proxy-restartable"),
                port,
                "c-" + UUID.randomUUID().toString().replace("-", "").substring(0, 20));
        Files.createDirectories(s3.data.resolve(s3.bucket));
        s3.startAgain();
        return s3;
    }

    public String endpoint() {
        return "http://127.0.0.1:" + port;
    }

    public String bucket() {
        return bucket;
    }

    /** The pods' configuration: the S3 client on this stand-in and its bucket ({@code syncular.s3.bucket}). */
    public Map<String, String> podConfig() {
        Map<String, String> c = new java.util.HashMap<>(TestS3.quarkusConfig(endpoint()));
        c.put("syncular.s3.bucket", bucket);
        return c;
    }

    /** Stops the process (SIGTERM, then waits for its end): the port refuses connections until {@link #startAgain}. */
    public void stop() throws InterruptedException {
        Process p = process;
        if (p != null) {
            p.destroy();
            p.waitFor();
            process = null;
        }
    }

    /** Starts it (again) on its port, on the same data; returns once it answers. */
    public void startAgain() {
        process = TestS3.launch(
                dir,
                port,
                List.of(
                        "jclouds.provider=filesystem",
                        "jclouds.filesystem.basedir=" + data,
                        "jclouds.identity=" + TestS3.ACCESS_KEY,
                        "jclouds.credential=" + TestS3.SECRET_KEY),
                // its start is part of the outage the campaign measures: the client compiler and the class data
                // archive shorten it on a busy machine
                List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto"));
    }

    /**
     * The objects the bucket holds (files under its directory), counted while the stand-in may be writing: a file
     * that goes between the listing and its visit (the stand-in writes an object to a temporary file and renames it;
     * a 1-hour campaign met one) is not counted.
     */
    public long objects() {
        long[] files = {0};
        try {
            Files.walkFileTree(data.resolve(bucket), new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                    if (attributes.isRegularFile()) {
                        files[0]++;
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                    if (e instanceof NoSuchFileException) {
                        return FileVisitResult.CONTINUE;
                    }
                    throw e;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return files[0];
    }

    @Override
    public void close() throws IOException, InterruptedException {
        stop();
        ThrowawayPostgres.delete(dir);
    }
}
