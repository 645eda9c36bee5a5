package dev.syncular.server.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.cli.HttpFailure;
import dev.syncular.server.jobs.BackfillCommand;
import dev.syncular.server.sync.SyncScenariosContract;
import dev.syncular.server.testsupport.BlobHttp;
import dev.syncular.server.testsupport.Notes;
import dev.syncular.server.testsupport.PackagedServer;
import dev.syncular.server.testsupport.ServerProcess;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.testsupport.TestJwks;
import dev.syncular.server.testsupport.TestPostgres;
import dev.syncular.server.testsupport.TestS3;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.smallrye.jwt.build.Jwt;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The chart's output runs the service: the Deployment's container and the backfill Job's container, rendered
 * by {@code helm template} from a values file like an operator's (existing PostgreSQL and bucket, static S3
 * keys, JWT from a JWKS, the admin token and signing key, the schema IR by {@code --set-file}, a declared
 * checkpoint), are started as processes of the packaged artifact with exactly their arguments and environment —
 * each {@code secretKeyRef} resolved from the test's "Secrets", each mounted ConfigMap written to a directory
 * standing in for its mount path. The server must accept every property the chart writes, get ready, serve a
 * JWT-authenticated round; the Job must claim, fill and activate the checkpoint and exit 0.
 */
@StartsProcesses
class ChartInstallIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PG_SCHEMA =
            "it_chart_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private static final String ADMIN_TOKEN = "chart-admin-" + UUID.randomUUID();
    private static final String ISSUER = "https://idp.test/";
    private static final String AUDIENCE = "syncular-test";
    private static final String TENANT =
            "tenant-" + UUID.randomUUID().toString().substring(0, 8);
    private static final String FULLNAME = RenderedChart.RELEASE + "-syncular-server";

    /** The Secrets the values reference by name, as the cluster would hold them. */
    private static final Map<String, Map<String, String>> SECRETS = Map.of(
            "syncular-db", Map.of("username", TestPostgres.user(), "password", TestPostgres.password()),
            "syncular-s3", Map.of("access-key-id", TestS3.ACCESS_KEY, "secret-access-key", TestS3.SECRET_KEY),
            "syncular-admin", Map.of("token", ADMIN_TOKEN),
            "syncular-signing", Map.of("key", "chart-it-signing-key-0123456789abcdef"));

    static RenderedChart chart;
    static Path mounts;
    static ServerProcess server;

    @BeforeAll
    static void install() throws Exception {
        mounts = Files.createTempDirectory("chart-mounts");
        Path values = mounts.resolve("values.yaml");
        Files.writeString(
                values,
                String.join(
                        "\n",
                        "postgresql:",
                        "  url: " + TestPostgres.url(),
                        "  existingSecret: syncular-db",
                        "  pgSchema: " + PG_SCHEMA,
                        "s3:",
                        "  segmentsStore: s3",
                        "  blobsStore: s3",
                        "  bucket: " + TestS3.newBucket(),
                        "  region: " + TestS3.REGION,
                        "  keyPrefix: chart/",
                        "  endpointOverride: " + TestS3.endpoint(),
                        "  pathStyleAccess: true",
                        "  credentials:",
                        "    source: secret",
                        "    existingSecret: syncular-s3",
                        "checkpoints:",
                        "  - {partition: " + TENANT + ", name: fill-priority, schemaVersion: 1}",
                        "auth:",
                        "  jwt:",
                        "    jwksUrl: " + TestJwks.jwksUrl(),
                        "    issuer: " + ISSUER,
                        "    audience: [" + AUDIENCE + "]",
                        "    partitionClaim: tenant",
                        "admin: {existingSecret: syncular-admin}",
                        "signedUrls: {existingSecret: syncular-signing}",
                        "backfill:",
                        "  enabled: true",
                        "  partition: " + TENANT,
                        "  checkpoint: fill-priority",
                        "  schemaVersion: 1",
                        "  table: notes",
                        "  set: {priority: 8}",
                        "  batchSize: 2",
                        ""));
        chart = RenderedChart.render(
                t -> t.withValuesFile(values).setFile("schema.ir", Path.of(PackagedServer.SCHEMA_PATH)));
        mount("config", chart.get(ConfigMap.class, FULLNAME + "-config"));
        mount("schema", chart.get(ConfigMap.class, FULLNAME + "-schema"));
        Container c = chart.get(Deployment.class, FULLNAME)
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0);
        server = ServerProcess.bare("chart-server").env(resolve(c.getEnv())).start();
    }

    @AfterAll
    static void uninstall() throws Exception {
        if (server != null) {
            server.close();
        }
        TestPostgres.dropSchema(PG_SCHEMA);
    }

    /** Writes a ConfigMap's files where its volume is mounted, {@code /etc/syncular/<name>} standing for {@code mounts/<name>}. */
    private static void mount(String name, ConfigMap map) throws Exception {
        Path dir = Files.createDirectories(mounts.resolve(name));
        for (Map.Entry<String, String> f : map.getData().entrySet()) {
            Files.writeString(dir.resolve(f.getKey()), f.getValue().replace("/etc/syncular/", mounts + "/"));
        }
    }

    /** The container's environment as the kubelet would set it: values as they are, secretKeyRefs resolved. */
    private static Map<String, String> resolve(List<EnvVar> env) {
        Map<String, String> out = new LinkedHashMap<>();
        for (EnvVar e : env) {
            if (e.getValueFrom() != null) {
                SecretKeySelector ref = e.getValueFrom().getSecretKeyRef();
                String v = SECRETS.getOrDefault(ref.getName(), Map.of()).get(ref.getKey());
                assertNotNull(v, e.getName() + ": no key " + ref.getKey() + " in Secret " + ref.getName());
                out.put(e.getName(), v);
            } else {
                out.put(e.getName(), e.getValue().replace("/etc/syncular/", mounts + "/"));
            }
        }
        return out;
    }

    private static String token(String actor) {
        return Jwt.issuer(ISSUER)
                .audience(AUDIENCE)
                .subject(actor)
                .claim("tenant", TENANT)
                .claim("syncular_scopes", Map.of("project_id", List.of("p1")))
                .issuedAt(Instant.now())
                .expiresAt(Instant.now().plusSeconds(300))
                .jws()
                .keyId(TestJwks.KID)
                .sign(TestJwks.privateKey());
    }

    /** The SSP2 transport with a bearer token instead of the dev header. */
    private static SyncTestClient client(String actor) {
        String token = token(actor);
        SyncTestClient.Transport bearer = new SyncTestClient.Transport() {
            @Override
            public byte[] roundTrip(SyncTestClient client, byte[] request) {
                return ok(BlobHttp.send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/sync"))
                        .header("Authorization", "Bearer " + token)
                        .header("Content-Type", "application/vnd.syncular.sync.v2")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(request))
                        .build()));
            }

            @Override
            public byte[] downloadSegment(SyncTestClient client, String segmentId, String scopesHeader) {
                return ok(BlobHttp.send(HttpRequest.newBuilder(URI.create(server.baseUrl() + "/segments/" + segmentId))
                        .header("Authorization", "Bearer " + token)
                        .header("X-Syncular-Scopes", scopesHeader)
                        .GET()
                        .build()));
            }
        };
        return new SyncTestClient(SyncScenariosContract.SCHEMA, bearer, actor, actor + "-" + UUID.randomUUID())
                .subscribe("notes", "notes", Map.of("project_id", List.of("p1")));
    }

    private static byte[] ok(HttpResponse<byte[]> r) {
        if (r.statusCode() != 200) {
            throw new HttpFailure(r.statusCode(), BlobHttp.text(r));
        }
        return r.body();
    }

    private static JsonNode checkpoint() throws Exception {
        HttpResponse<byte[]> r = BlobHttp.send(
                HttpRequest.newBuilder(URI.create(server.baseUrl() + "/admin/checkpoints?partition=" + TENANT))
                        .header("Authorization", "Bearer " + ADMIN_TOKEN)
                        .GET()
                        .build());
        assertEquals(200, r.statusCode(), BlobHttp.text(r));
        JsonNode list = JSON.readTree(r.body());
        assertEquals(1, list.size(), list.toString());
        return list.get(0);
    }

    @Test
    void theRenderedDeploymentServesAndTheRenderedJobActivatesTheCheckpoint() throws Exception {
        // the declared checkpoint is installed and this pod, which declares it, stays in rotation
        assertEquals("declared", checkpoint().get("state").asText());
        assertEquals(200, server.status("/q/health/ready"));

        SyncTestClient alice = client("alice");
        String commit = alice.upsert("notes", Notes.note("n1", null), null);
        alice.syncUntilIdle();
        assertTrue(SyncTestClient.applied(alice.result(commit)), String.valueOf(alice.result(commit)));

        // the Job: the same artifact with the Job's arguments and environment
        Container job = chart.get(Job.class, FULLNAME + "-backfill-fill-priority")
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0);
        List<String> args = new ArrayList<>(job.getArgs());
        assertEquals(BackfillCommand.NAME, args.get(0));
        ServerProcess.Result run = ServerProcess.bare("chart-backfill")
                .env(resolve(job.getEnv()))
                .args(args)
                .run(Duration.ofMinutes(3));
        assertEquals(BackfillCommand.EXIT_OK, run.exitCode(), run.log());

        JsonNode activated = checkpoint();
        assertEquals("activated", activated.get("state").asText());
        assertEquals(1, activated.get("observedRows").asLong());
        SyncTestClient bob = client("bob");
        bob.syncUntilIdle();
        int priority = SyncScenariosContract.SCHEMA.table("notes").columnIndex("priority");
        assertEquals(8L, bob.table("notes").get("n1").values()[priority]);
    }
}
