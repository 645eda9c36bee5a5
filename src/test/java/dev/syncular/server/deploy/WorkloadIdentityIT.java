package dev.syncular.server.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.testsupport.TestS3;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * S3 through workload identity, the chart's {@code s3.credentials.source=default} with a ServiceAccount role
 * annotation: the packaged server gets what EKS injects into such a pod ({@code AWS_ROLE_ARN},
 * {@code AWS_WEB_IDENTITY_TOKEN_FILE}) and no key; the SDK's default chain exchanges the token with STS (a JDK
 * HTTP server answering {@code AssumeRoleWithWebIdentity}, reached through {@code AWS_ENDPOINT_URL_STS}) and
 * signs its S3 requests with the session credentials. The S3 side is a recording endpoint too (s3proxy refuses
 * session tokens with 501): it sees the start-up bucket check signed with the assumed key and token.
 */
@StartsProcesses
class WorkloadIdentityIT {
    private static final String ROLE = "arn:aws:iam::123456789012:role/syncular-s3";

    @Test
    void theDefaultChainAssumesTheRoleWithTheProjectedToken() throws Exception {
        BlockingQueue<Map<String, String>> calls = new LinkedBlockingQueue<>();
        HttpServer sts = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        sts.createContext("/", exchange -> {
            Map<String, String> form = new HashMap<>();
            for (String pair :
                    new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8).split("&")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    form.put(pair.substring(0, eq), URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
                }
            }
            calls.add(form);
            byte[] body = ("<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
                            + "<AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIA-ASSUMED</AccessKeyId>"
                            + "<SecretAccessKey>assumed-secret</SecretAccessKey><SessionToken>session-token</SessionToken>"
                            + "<Expiration>2099-01-01T00:00:00Z</Expiration></Credentials>"
                            + "<AssumedRoleUser><Arn>" + ROLE
                            + "/s</Arn><AssumedRoleId>AROA:s</AssumedRoleId></AssumedRoleUser>"
                            + "</AssumeRoleWithWebIdentityResult><ResponseMetadata><RequestId>r1</RequestId></ResponseMetadata>"
                            + "</AssumeRoleWithWebIdentityResponse>")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "text/xml");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        BlockingQueue<String> s3Requests = new LinkedBlockingQueue<>();
        HttpServer s3 = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        s3.createContext("/", exchange -> {
            s3Requests.add(
                    exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath() + " | "
                            + exchange.getRequestHeaders().getFirst("Authorization") + " | "
                            + exchange.getRequestHeaders().getFirst("X-Amz-Security-Token"));
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        sts.start();
        s3.start();
        Path token = Files.createTempFile("web-identity", ".jwt");
        Files.writeString(token, "projected.service-account.token");
        String schema = "it_wi_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        Map<String, String> config = new HashMap<>();
        config.put(
                "quarkus.s3.endpoint-override",
                "http://127.0.0.1:" + s3.getAddress().getPort());
        config.put("quarkus.s3.path-style-access", "true");
        config.put("quarkus.s3.aws.region", TestS3.REGION);
        config.put("quarkus.s3.aws.credentials.type", "default");
        config.put("syncular.segments.store", "s3");
        config.put("syncular.s3.bucket", "wi-bucket");
        try (ServerProcess server = ServerProcess.builder("workload-identity", schema)
                .config(config)
                .env("AWS_ROLE_ARN", ROLE)
                .env("AWS_WEB_IDENTITY_TOKEN_FILE", token.toString())
                .env(
                        "AWS_ENDPOINT_URL_STS",
                        "http://127.0.0.1:" + sts.getAddress().getPort())
                .env("AWS_REGION", TestS3.REGION)
                .start()) {
            Map<String, String> call = calls.poll(30, TimeUnit.SECONDS);
            assertNotNull(call, "no AssumeRoleWithWebIdentity call");
            assertEquals("AssumeRoleWithWebIdentity", call.get("Action"));
            assertEquals(ROLE, call.get("RoleArn"));
            assertEquals("projected.service-account.token", call.get("WebIdentityToken"));
            // ready: the start-up bucket check went out signed with the assumed role's session credentials
            String headBucket = s3Requests.poll(30, TimeUnit.SECONDS);
            assertNotNull(headBucket, "no S3 request");
            assertTrue(
                    headBucket.startsWith("HEAD /wi-bucket | AWS4-HMAC-SHA256 Credential=ASIA-ASSUMED/"), headBucket);
            assertTrue(headBucket.endsWith("| session-token"), headBucket);
            assertEquals(200, server.status("/q/health/ready"));
        } finally {
            sts.stop(0);
            s3.stop(0);
            TestPostgres.dropSchema(schema);
        }
    }
}
