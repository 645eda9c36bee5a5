package dev.syncular.server.testsupport;

import dev.syncular.server.segments.s3.NoExpectContinue;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;

/**
 * A real S3-compatible server for tests: s3proxy (transient in-memory provider), which verifies SigV4
 * signatures — a tampered or expired presigned URL gets 403 — and honours conditional PUTs
 * ({@code If-Match}/{@code If-None-Match}, 412 on a lost race). It runs as a child process of the test JVM
 * (its self-contained jar bundles libraries that clash with Quarkus in-process), started once per JVM on a
 * free loopback port and stopped by a shutdown hook. The jar comes from the local Maven repository (the
 * build declares it; surefire passes its path as {@code s3proxy.test.jar} — outside the {@code syncular.*}
 * config namespace, which Quarkus validates strictly).
 */
public final class TestS3 {
    /** The keys docs/SEGMENTS.md "Run it locally against S3" configures (its local s3proxy's). */
    public static final String ACCESS_KEY = "syncular-local";

    public static final String SECRET_KEY = "syncular-local-secret";
    public static final String REGION = "us-east-1";

    private static volatile String endpoint;

    private TestS3() {}

    /** {@code http://127.0.0.1:<port>}; starts the server on first use. */
    public static String endpoint() {
        String e = endpoint;
        if (e == null) {
            synchronized (TestS3.class) {
                e = endpoint;
                if (e == null) {
                    e = endpoint = start();
                }
            }
        }
        return e;
    }

    /** A synchronous client on the test server (path-style, checksums only when required). */
    public static S3Client client() {
        return S3Client.builder()
                .endpointOverride(URI.create(endpoint()))
                .region(Region.of(REGION))
                .credentialsProvider(credentials())
                .httpClient(UrlConnectionHttpClient.create())
                .serviceConfiguration(
                        S3Configuration.builder().pathStyleAccessEnabled(true).build())
                .overrideConfiguration(o -> o.addExecutionInterceptor(new NoExpectContinue()))
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .build();
    }

    /**
     * The stores' asynchronous client on the test server, configured as {@link #client} (on the Netty HTTP client,
     * as the application's).
     */
    public static S3AsyncClient asyncClient() {
        return asyncClient(endpoint(), Duration.ZERO);
    }

    /**
     * An asynchronous client on {@code endpoint}; {@code apiCallTimeout} bounds each call, retries included
     * ({@link Duration#ZERO}: the SDK's default, none).
     */
    public static S3AsyncClient asyncClient(String endpoint, Duration apiCallTimeout) {
        return S3AsyncClient.builder()
                .endpointOverride(URI.create(endpoint))
                .region(Region.of(REGION))
                .credentialsProvider(credentials())
                .httpClientBuilder(NettyNioAsyncHttpClient.builder())
                .serviceConfiguration(
                        S3Configuration.builder().pathStyleAccessEnabled(true).build())
                .overrideConfiguration(o -> {
                    o.addExecutionInterceptor(new NoExpectContinue());
                    if (!apiCallTimeout.isZero()) {
                        o.apiCallTimeout(apiCallTimeout);
                    }
                })
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .build();
    }

    public static S3Presigner presigner() {
        return S3Presigner.builder()
                .endpointOverride(URI.create(endpoint()))
                .region(Region.of(REGION))
                .credentialsProvider(credentials())
                .serviceConfiguration(
                        S3Configuration.builder().pathStyleAccessEnabled(true).build())
                .build();
    }

    /** Creates a fresh bucket and returns its name. */
    public static String newBucket() {
        String bucket = "t-" + UUID.randomUUID().toString().replace("-", "").substring(0, 20);
        try (S3Client c = client()) {
            c.createBucket(b -> b.bucket(bucket));
        }
        return bucket;
    }

    /**
     * Quarkus configuration pointing the S3 extension at the test server: endpoint, path-style, region and keys,
     * nothing else (the checksum behaviour is the application's default, as in production).
     */
    public static Map<String, String> quarkusConfig() {
        return quarkusConfig(endpoint());
    }

    /** {@link #quarkusConfig()} for an S3 stand-in at {@code endpoint} ({@link RestartableS3}). */
    public static Map<String, String> quarkusConfig(String endpoint) {
        return Map.of(
                "quarkus.s3.endpoint-override",
                endpoint,
                "quarkus.s3.path-style-access",
                "true",
                "quarkus.s3.aws.region",
                REGION,
                "quarkus.s3.aws.credentials.type",
                "static",
                "quarkus.s3.aws.credentials.static-provider.access-key-id",
                ACCESS_KEY,
                "quarkus.s3.aws.credentials.static-provider.secret-access-key",
                SECRET_KEY);
    }

    private static StaticCredentialsProvider credentials() {
        return StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY, SECRET_KEY));
    }

    private static String start() {
        try {
            int port;
            try (ServerSocket s = new ServerSocket(0)) {
                port = s.getLocalPort();
            }
            Process p = launch(
                    Files.createTempDirectory("s3proxy"),
                    port,
                    List.of(
                            "jclouds.provider=transient",
                            "jclouds.identity=" + ACCESS_KEY,
                            "jclouds.credential=" + SECRET_KEY));
            Runtime.getRuntime().addShutdownHook(new Thread(p::destroy));
            return "http://127.0.0.1:" + port;
        } catch (IOException e) {
            throw new IllegalStateException("cannot start s3proxy", e);
        }
    }

    /**
     * Starts s3proxy on {@code port} with the given jclouds provider settings, its configuration and log in
     * {@code dir}; returns once it answers (deadline 60 s).
     */
    static Process launch(Path dir, int port, List<String> provider) {
        return launch(dir, port, provider, List.of());
    }

    /** {@link #launch(Path, int, List)} with JVM flags of its own (a quicker start: {@link RestartableS3}). */
    static Process launch(Path dir, int port, List<String> provider, List<String> jvmFlags) {
        String jar = System.getProperty("s3proxy.test.jar");
        if (jar == null || !Files.isRegularFile(Path.of(jar))) {
            throw new IllegalStateException("s3proxy jar not found (" + jar + "): run the tests through ./mvnw, "
                    + "which resolves org.gaul:s3proxy:jar-with-dependencies");
        }
        try {
            Path conf = dir.resolve("s3proxy.conf");
            String url = "http://127.0.0.1:" + port;
            List<String> lines = new ArrayList<>(List.of(
                    "s3proxy.endpoint=" + url,
                    "s3proxy.authorization=aws-v2-or-v4",
                    "s3proxy.identity=" + ACCESS_KEY,
                    "s3proxy.credential=" + SECRET_KEY));
            lines.addAll(provider);
            lines.add("");
            Files.writeString(conf, String.join("\n", lines));
            Path log = dir.resolve("s3proxy.log");
            List<String> cmd = ChildJvm.command();
            cmd.add("-Xmx256m");
            cmd.addAll(jvmFlags);
            cmd.addAll(List.of("-jar", jar, "--properties", conf.toString()));
            Process p = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (System.nanoTime() < deadline) {
                if (!p.isAlive()) {
                    throw new IllegalStateException("s3proxy exited: " + Files.readString(log));
                }
                if (responds(url)) {
                    return p;
                }
                p.waitFor(100, TimeUnit.MILLISECONDS);
            }
            p.destroy();
            throw new IllegalStateException("s3proxy did not answer within 60 s: " + Files.readString(log));
        } catch (IOException e) {
            throw new IllegalStateException("cannot start s3proxy", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static boolean responds(String url) {
        try {
            HttpURLConnection c =
                    (HttpURLConnection) URI.create(url + "/").toURL().openConnection();
            c.setConnectTimeout(500);
            c.setReadTimeout(1000);
            int status = c.getResponseCode();
            c.disconnect();
            return status > 0;
        } catch (IOException e) {
            return false;
        }
    }
}
