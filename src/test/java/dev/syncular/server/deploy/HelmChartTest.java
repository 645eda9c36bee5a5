package dev.syncular.server.deploy;

import static dev.syncular.server.deploy.RenderedChart.RELEASE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.networking.v1.Ingress;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The Helm chart in the build: {@code helm lint --strict}, and {@code helm template} for the default values (which
 * stop naming the required database settings), for the minimal values ({@code ci/minimal-values.yaml}: the
 * defaults plus the database) and for the full production values ({@code ci/production-values.yaml} with the schema IR by {@code --set-file}),
 * every document parsed strictly into the Kubernetes model ({@link RenderedChart}); then what matters to an
 * operator: the three probes, secrets only by reference, the locked-down security context with a writable
 * {@code /tmp}, a grace period that covers the drain, the PDB, HPA, spread, monitor, ingress, network policy
 * and the backfill Job, and the configuration file the server reads.
 */
class HelmChartTest {
    private static final String FULLNAME = RELEASE + "-syncular-server";
    private static final Path SCHEMA_IR = Path.of("src", "main", "resources", "schema", "quickstart.syncular.ir.json");
    private static final Pattern SECRET_NAME = Pattern.compile(".*(PASSWORD|TOKEN|SECRET|_KEY(_ID)?)$");

    private static RenderedChart production() {
        return RenderedChart.render(
                t -> t.withValuesFile(RenderedChart.PRODUCTION_VALUES).setFile("schema.ir", SCHEMA_IR));
    }

    private static Container server(Deployment d) {
        return d.getSpec().getTemplate().getSpec().getContainers().get(0);
    }

    private static Map<String, EnvVar> env(Container c) {
        return c.getEnv().stream().collect(Collectors.toMap(EnvVar::getName, e -> e));
    }

    @Test
    void lintsStrictly() {
        LintResult lint = new Helm(RenderedChart.lintable()).lint().strict().call();
        assertFalse(lint.isFailed(), String.join("\n", lint.getMessages()));
    }

    @Test
    void minimalValuesRenderALockedDownServer() throws Exception {
        RenderedChart chart = RenderedChart.minimal(t -> t);
        assertEquals(
                Set.of(
                        "ConfigMap/" + FULLNAME + "-config",
                        "Deployment/" + FULLNAME,
                        "PodDisruptionBudget/" + FULLNAME,
                        "Pod/" + FULLNAME + "-test-ready",
                        "Service/" + FULLNAME,
                        "ServiceAccount/" + FULLNAME),
                chart.kinds());

        Deployment d = chart.get(Deployment.class, FULLNAME);
        assertEquals(2, d.getSpec().getReplicas());
        PodSpec pod = d.getSpec().getTemplate().getSpec();
        Container c = server(d);
        assertProbes(c);
        assertLockedDown(pod, c);
        assertEquals(
                "ghcr.io/syncular/syncular-server-java:"
                        + RenderedChart.chartYaml().get("appVersion").asText(),
                c.getImage(),
                "the image the release workflow publishes for this version");
        assertEquals(FULLNAME, pod.getServiceAccountName());
        assertFalse(pod.getAutomountServiceAccountToken());

        // the drain fits the grace period (docs/REALTIME.md): preStop pause + shutdown grace + margin
        assertEquals(5, c.getLifecycle().getPreStop().getSleep().getSeconds());
        assertTrue(pod.getTerminationGracePeriodSeconds() >= 5 + 10 + 5);
        assertEquals("10s", chart.config().getProperty("syncular.realtime.shutdown-grace"));

        // spread over nodes and zones, of this release's serving pods only
        List<TopologySpreadConstraint> spread = pod.getTopologySpreadConstraints();
        assertEquals(
                List.of("kubernetes.io/hostname", "topology.kubernetes.io/zone"),
                spread.stream().map(TopologySpreadConstraint::getTopologyKey).toList());
        assertEquals(
                d.getSpec().getSelector().getMatchLabels(),
                spread.get(0).getLabelSelector().getMatchLabels());

        PodDisruptionBudget pdb = chart.get(PodDisruptionBudget.class, FULLNAME);
        assertEquals(1, pdb.getSpec().getMaxUnavailable().getIntVal());
        assertEquals(
                d.getSpec().getSelector().getMatchLabels(),
                pdb.getSpec().getSelector().getMatchLabels());
        Service svc = chart.get(Service.class, FULLNAME);
        assertEquals(d.getSpec().getSelector().getMatchLabels(), svc.getSpec().getSelector());
        assertEquals("server", svc.getSpec().getSelector().get("app.kubernetes.io/component"));

        // helm test: /q/health/ready through the Service
        Pod test = chart.get(Pod.class, FULLNAME + "-test-ready");
        assertEquals(
                List.of("helm.sh/hook: test", "helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded"),
                RenderedChart.hookAnnotations("tests/test-ready.yaml"));
        assertTrue(test.getSpec()
                .getContainers()
                .get(0)
                .getArgs()
                .contains("http://" + FULLNAME + ":8080/q/health/ready"));
        assertEquals(
                Boolean.TRUE,
                test.getSpec().getContainers().get(0).getSecurityContext().getReadOnlyRootFilesystem());

        Properties config = chart.config();
        assertEquals("syncular", config.getProperty("syncular.storage.pg-schema"));
        assertEquals("embedded", config.getProperty("syncular.segments.store"));
        assertNull(config.getProperty("syncular.schema.path"), "no schema IR given: the bundled one");
        // hostile-load limits: slow bodies cut, idle connections (stalled request heads) closed, budget from the heap
        assertEquals("10s", config.getProperty("syncular.limits.body-timeout"));
        assertEquals("8K", config.getProperty("syncular.limits.body-min-rate"));
        assertEquals("60s", config.getProperty("quarkus.http.idle-timeout"));
        assertNull(config.getProperty("syncular.limits.buffer-budget"), "a quarter of the heap");
        assertNull(config.getProperty("syncular.realtime.socket-budget"), "a quarter of the heap");
        // the visibility objective and the stalest clients
        assertEquals("1s", config.getProperty("syncular.slo.visibility"));
        assertEquals("10m", config.getProperty("syncular.slo.offline-after"));
        assertEquals("10", config.getProperty("syncular.slo.stalest"));
        assertEquals("10s", config.getProperty("syncular.slo.refresh-interval"));
        assertSecretsReferencedNeverInlined(chart);
    }

    @Test
    void productionValuesRenderTheWholeInstall() throws Exception {
        RenderedChart chart = production();
        assertEquals(
                Set.of(
                        "ConfigMap/" + FULLNAME + "-config",
                        "ConfigMap/" + FULLNAME + "-schema",
                        "ConfigMap/" + FULLNAME + "-dashboard",
                        "Deployment/" + FULLNAME,
                        "HorizontalPodAutoscaler/" + FULLNAME,
                        "Ingress/" + FULLNAME,
                        "Job/" + FULLNAME + "-backfill-fill-priority",
                        "NetworkPolicy/" + FULLNAME,
                        "PodDisruptionBudget/" + FULLNAME,
                        "Pod/" + FULLNAME + "-test-ready",
                        "Service/" + FULLNAME,
                        "ServiceAccount/" + FULLNAME,
                        "ServiceMonitor/" + FULLNAME),
                chart.kinds());

        Deployment d = chart.get(Deployment.class, FULLNAME);
        assertNull(d.getSpec().getReplicas(), "the HPA owns the replica count");
        Container c = server(d);
        assertProbes(c);
        assertLockedDown(d.getSpec().getTemplate().getSpec(), c);
        assertEquals(List.of("-Xmx256m"), c.getArgs());
        Map<String, EnvVar> env = env(c);
        assertSecretRef(env, "SYNCULAR_PG_USER", "syncular-db", "username");
        assertSecretRef(env, "SYNCULAR_PG_PASSWORD", "syncular-db", "password");
        assertSecretRef(env, "SYNCULAR_ADMIN_TOKEN", "syncular-admin", "token");
        assertSecretRef(env, "SYNCULAR_SIGNED_URLS_KEY", "syncular-signing", "key");
        assertFalse(env.containsKey("SYNCULAR_S3_ACCESS_KEY_ID"), "workload identity: no static keys");
        assertEquals(
                "/etc/syncular/config/application.properties",
                env.get("QUARKUS_CONFIG_LOCATIONS").getValue());
        // metrics and OpenAPI on the management interface, whose port the container and the Service declare
        assertEquals("9000", env.get("QUARKUS_MANAGEMENT_PORT").getValue());
        assertSecretsReferencedNeverInlined(chart);

        // the configuration file the server reads (QUARKUS_CONFIG_LOCATIONS)
        Properties config = chart.config();
        assertEquals(
                "postgresql://pg.db.svc.cluster.local:5432/syncular?sslmode=require",
                config.getProperty("quarkus.datasource.reactive.url"));
        assertEquals("sync", config.getProperty("syncular.storage.pg-schema"));
        assertEquals("/etc/syncular/schema/syncular.ir.json", config.getProperty("syncular.schema.path"));
        assertEquals("s3", config.getProperty("syncular.segments.store"));
        assertEquals("s3", config.getProperty("syncular.blobs.store"));
        assertEquals("my-app-sync", config.getProperty("syncular.s3.bucket"));
        assertEquals("syncular/", config.getProperty("syncular.s3.key-prefix"));
        assertEquals("eu-central-1", config.getProperty("quarkus.s3.aws.region"));
        assertEquals("default", config.getProperty("quarkus.s3.aws.credentials.type"));
        assertEquals("64", config.getProperty("quarkus.s3.async-client.max-concurrency"));
        assertEquals("https://idp.example.com/.well-known/jwks.json", config.getProperty("syncular.auth.jwt.jwks-url"));
        assertEquals("syncular", config.getProperty("syncular.auth.jwt.audience"));
        assertEquals("tenant", config.getProperty("syncular.auth.jwt.partition-claim"));
        assertEquals("lists", config.getProperty("syncular.auth.jwt.scope-claims.list_id"));
        assertEquals("RS256,ES256", config.getProperty("syncular.auth.jwt.signature-algorithms"));
        assertEquals("tenant-1", config.getProperty("syncular.checkpoints[0].partition"));
        assertEquals("fill-priority", config.getProperty("syncular.checkpoints[0].name"));
        assertEquals("2", config.getProperty("syncular.checkpoints[0].schema-version"));
        assertEquals("https://sync.example.com/segments", config.getProperty("syncular.signed-urls.base-url"));
        assertEquals("true", config.getProperty("quarkus.log.console.json.enabled"));
        assertEquals("30m", config.getProperty("syncular.admin.console.session-ttl"));
        assertEquals("roles", config.getProperty("syncular.admin.console.role-claim"));
        assertNull(config.getProperty("syncular.admin.console.role"), "JWT sign-in to the console is off by default");
        for (String key : config.stringPropertyNames()) {
            assertFalse(
                    SECRET_NAME
                                    .matcher(key.toUpperCase().replace('.', '_').replace('-', '_'))
                                    .matches()
                            && !key.endsWith("key-prefix"),
                    "a secret in the configuration file: " + key);
        }
        assertEquals(
                Files.readString(SCHEMA_IR).strip(),
                chart.get(ConfigMap.class, FULLNAME + "-schema")
                        .getData()
                        .get("syncular.ir.json")
                        .strip());

        ServiceAccount sa = chart.get(ServiceAccount.class, FULLNAME);
        assertEquals(
                "arn:aws:iam::123456789012:role/syncular-s3",
                sa.getMetadata().getAnnotations().get("eks.amazonaws.com/role-arn"));

        PodDisruptionBudget pdb = chart.get(PodDisruptionBudget.class, FULLNAME);
        assertEquals(2, pdb.getSpec().getMinAvailable().getIntVal());
        assertNull(pdb.getSpec().getMaxUnavailable());
        HorizontalPodAutoscaler hpa = chart.get(HorizontalPodAutoscaler.class, FULLNAME);
        assertEquals(3, hpa.getSpec().getMinReplicas());
        assertEquals(12, hpa.getSpec().getMaxReplicas());
        assertEquals(FULLNAME, hpa.getSpec().getScaleTargetRef().getName());
        assertEquals(
                List.of("cpu", "memory"),
                hpa.getSpec().getMetrics().stream()
                        .map(m -> m.getResource().getName())
                        .toList());

        ServiceMonitor monitor = chart.get(ServiceMonitor.class, FULLNAME);
        assertEquals("/q/metrics", monitor.getSpec().getEndpoints().get(0).getPath());
        assertEquals("management", monitor.getSpec().getEndpoints().get(0).getPort());
        assertEquals("kube-prometheus-stack", monitor.getMetadata().getLabels().get("release"));

        Ingress ingress = chart.get(Ingress.class, FULLNAME);
        assertEquals(
                "3600", ingress.getMetadata().getAnnotations().get("nginx.ingress.kubernetes.io/proxy-read-timeout"));
        assertEquals(
                FULLNAME,
                ingress.getSpec()
                        .getRules()
                        .get(0)
                        .getHttp()
                        .getPaths()
                        .get(0)
                        .getBackend()
                        .getService()
                        .getName());
        NetworkPolicy np = chart.get(NetworkPolicy.class, FULLNAME);
        assertEquals(List.of("Ingress", "Egress"), np.getSpec().getPolicyTypes());
        assertEquals(2, np.getSpec().getIngress().get(0).getFrom().size());
        assertEquals(
                d.getSpec().getSelector().getMatchLabels(),
                np.getSpec().getPodSelector().getMatchLabels());

        // the backfill: the same image in command mode, the same configuration and secrets, a Helm hook
        Job job = chart.get(Job.class, FULLNAME + "-backfill-fill-priority");
        assertEquals(
                List.of(
                        "helm.sh/hook: post-install,post-upgrade",
                        "helm.sh/hook-weight: \"10\"",
                        "helm.sh/hook-delete-policy: before-hook-creation"),
                RenderedChart.hookAnnotations("backfill-job.yaml"));
        Container b = job.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertEquals(c.getImage(), b.getImage());
        assertEquals(
                List.of(
                        "backfill",
                        "--partition",
                        "tenant-1",
                        "--checkpoint",
                        "fill-priority",
                        "--schema-version",
                        "2",
                        "--table",
                        "todos",
                        "--set",
                        "position=0",
                        "--batch-size",
                        "500",
                        "--attempts",
                        "5"),
                b.getArgs());
        assertEquals("Never", job.getSpec().getTemplate().getSpec().getRestartPolicy());
        assertEquals(
                "backfill",
                job.getSpec().getTemplate().getMetadata().getLabels().get("app.kubernetes.io/component"),
                "the Service never routes to the Job's pod");
        assertLockedDown(job.getSpec().getTemplate().getSpec(), b);
        Map<String, EnvVar> jobEnv = env(b);
        assertSecretRef(jobEnv, "SYNCULAR_PG_PASSWORD", "syncular-db", "password");
        assertEquals("false", jobEnv.get("SYNCULAR_PRUNING_ENABLED").getValue());
        assertEquals(c.getVolumeMounts(), b.getVolumeMounts());
    }

    /** The alerting rules: the cluster's NOTIFY queue and the realtime fan-out's backlog, with their thresholds. */
    @Test
    void prometheusRulesAlertOnTheNotifyQueueAndTheFanoutBacklog() {
        assertTrue(
                RenderedChart.minimal(t -> t).kinds().stream().noneMatch(k -> k.startsWith("PrometheusRule/")),
                "off by default");
        RenderedChart chart = RenderedChart.minimal(t -> t.set("prometheusRule.enabled", "true")
                .set("prometheusRule.labels.release", "kube-prometheus-stack")
                .set("prometheusRule.notifyQueueUsageAbove", "0.3"));
        PrometheusRule rule = chart.get(PrometheusRule.class, FULLNAME);
        assertEquals("kube-prometheus-stack", rule.getMetadata().getLabels().get("release"));
        Map<String, String> exprs = new TreeMap<>();
        rule.getSpec()
                .getGroups()
                .forEach(g -> g.getRules()
                        .forEach(r -> exprs.put(r.getAlert(), r.getExpr().getStrVal())));
        assertEquals(
                Set.of(
                        "SyncularNotifyQueueFilling",
                        "SyncularFanoutBacklog",
                        "SyncularFanoutOverflow",
                        "SyncularReplicaOutOfRotation",
                        "SyncularVisibilityBurnFast",
                        "SyncularVisibilityBurnSlow"),
                exprs.keySet());
        assertTrue(
                exprs.get("SyncularReplicaOutOfRotation").contains("syncular_replica_in_rotation")
                        && exprs.get("SyncularReplicaOutOfRotation").endsWith("== 0"),
                exprs.toString());
        assertTrue(
                exprs.get("SyncularNotifyQueueFilling").contains("syncular_postgres_notification_queue_usage")
                        && exprs.get("SyncularNotifyQueueFilling").endsWith("> 0.3"),
                exprs.toString());
        assertTrue(
                exprs.get("SyncularFanoutBacklog").contains("syncular_realtime_fanout_backlog")
                        && exprs.get("SyncularFanoutBacklog").endsWith("> 1000"),
                exprs.toString());
        assertTrue(
                exprs.get("SyncularFanoutOverflow").contains("syncular_realtime_fanout_overflows_total"),
                exprs.toString());
        // the visibility objective: the share of deliveries above the slo.visibility bucket, over two windows each,
        // against the error budget 1 - 0.99 burning 14.4 (1h, 5m) or 6 (6h, 30m) times too fast
        String fast = exprs.get("SyncularVisibilityBurnFast");
        assertTrue(
                fast.contains("syncular_client_visibility_seconds_bucket{namespace=\"apps\",le=\"1.0\"}[1h]")
                        && fast.contains("syncular_client_visibility_seconds_count")
                        && fast.contains("[5m]")
                        && fast.contains("> 0.144"),
                fast);
        String slow = exprs.get("SyncularVisibilityBurnSlow");
        assertTrue(slow.contains("[6h]") && slow.contains("[30m]") && slow.contains("> 0.06"), slow);
        // 250ms is the bucket the exporter writes as 0.25
        PrometheusRule quarter = RenderedChart.minimal(
                        t -> t.set("prometheusRule.enabled", "true").set("slo.visibility", "250ms"))
                .get(PrometheusRule.class, FULLNAME);
        assertTrue(
                quarter.getSpec().getGroups().stream()
                        .flatMap(g -> g.getRules().stream())
                        .anyMatch(r -> r.getExpr().getStrVal().contains("le=\"0.25\"")),
                "le of 250ms");
    }

    @Test
    void staticS3KeysComeFromTheirSecret() {
        RenderedChart chart = RenderedChart.render(t -> t.set("s3.blobsStore", "s3")
                .set("s3.bucket", "b")
                .set("s3.endpointOverride", "https://minio.example.com")
                .set("s3.pathStyleAccess", "true")
                .set("s3.credentials.existingSecret", "minio-keys")
                .set("postgresql.urlKey", "url")
                .set("postgresql.existingSecret", "db"));
        Map<String, EnvVar> env = env(server(chart.get(Deployment.class, FULLNAME)));
        assertSecretRef(env, "SYNCULAR_S3_ACCESS_KEY_ID", "minio-keys", "access-key-id");
        assertSecretRef(env, "SYNCULAR_S3_SECRET_ACCESS_KEY", "minio-keys", "secret-access-key");
        assertSecretRef(env, "SYNCULAR_PG_URL", "db", "url");
        Properties config = chart.config();
        assertEquals("static", config.getProperty("quarkus.s3.aws.credentials.type"));
        assertEquals("https://minio.example.com", config.getProperty("quarkus.s3.endpoint-override"));
        assertEquals("true", config.getProperty("quarkus.s3.path-style-access"));
        assertNull(config.getProperty("quarkus.datasource.reactive.url"), "the URL comes from the Secret");
        assertSecretsReferencedNeverInlined(chart);
    }

    /** The application policy (docs/POLICY.md): the document mounted as a file, webhooks configured, keys from Secrets. */
    @Test
    void policyDocumentAndWebhooksReachTheServer() {
        String doc = "{\"validators\":[{\"table\":\"todos\",\"rule\":{\"maxLength\":{\"column\":\"title\",\"max\":200,"
                + "\"code\":\"app.title_too_long\"}}}]}";
        RenderedChart chart = RenderedChart.minimal(t -> t.set("policy.document", doc)
                .set("policy.validatorWebhook.url", "https://policy.example.com/validate")
                .set("policy.validatorWebhook.existingSecret", "policy-keys")
                .set("policy.reactions.webhookUrl", "https://hooks.example.com/reactions")
                .set("policy.reactions.existingSecret", "reaction-keys")
                .set("policy.reactions.endpoints.billing.types[0]", "invoice.paid")
                .set("policy.reactions.endpoints.billing.types[1]", "invoice.refunded")
                .set("policy.reactions.endpoints.billing.url", "https://billing.example.com/syncular")
                .set("policy.reactions.endpoints.billing.timeout", "5s")
                .set("policy.reactions.endpoints.billing.existingSecret", "billing-keys")
                .set("policy.reactions.endpoints.search.types[0]", "todo.completed")
                .set("policy.reactions.endpoints.search.url", "https://search.example.com/hook"));
        Properties config = chart.config();
        assertEquals("/etc/syncular/policy/policy.json", config.getProperty("syncular.policy.file"));
        assertEquals(
                "https://policy.example.com/validate", config.getProperty("syncular.policy.validator-webhook.url"));
        assertEquals("2s", config.getProperty("syncular.policy.validator-webhook.timeout"));
        assertEquals("https://hooks.example.com/reactions", config.getProperty("syncular.reactions.webhook.url"));
        // per-type endpoints (docs/POLICY.md): types, url and timeout in the file, the signing key from a Secret
        assertEquals("invoice.paid,invoice.refunded", config.getProperty("syncular.reactions.endpoints.billing.types"));
        assertEquals(
                "https://billing.example.com/syncular", config.getProperty("syncular.reactions.endpoints.billing.url"));
        assertEquals("5s", config.getProperty("syncular.reactions.endpoints.billing.timeout"));
        assertEquals("todo.completed", config.getProperty("syncular.reactions.endpoints.search.types"));
        assertEquals(null, config.getProperty("syncular.reactions.endpoints.search.timeout"));
        ConfigMap policy = chart.get(ConfigMap.class, FULLNAME + "-policy");
        assertEquals(doc, policy.getData().get("policy.json"));
        Deployment d = chart.get(Deployment.class, FULLNAME);
        assertTrue(server(d).getVolumeMounts().stream()
                .anyMatch(m -> m.getName().equals("policy")
                        && m.getMountPath().equals("/etc/syncular/policy")
                        && Boolean.TRUE.equals(m.getReadOnly())));
        assertTrue(d.getSpec().getTemplate().getSpec().getVolumes().stream()
                .anyMatch(v -> v.getName().equals("policy")
                        && v.getConfigMap().getName().equals(FULLNAME + "-policy")));
        Map<String, EnvVar> env = env(server(d));
        assertSecretRef(env, "SYNCULAR_POLICY_VALIDATOR_WEBHOOK_SECRET", "policy-keys", "secret");
        assertSecretRef(env, "SYNCULAR_REACTIONS_WEBHOOK_SECRET", "reaction-keys", "secret");
        assertSecretRef(env, "SYNCULAR_REACTIONS_ENDPOINTS_BILLING_SECRET", "billing-keys", "secret");
        assertTrue(!env.containsKey("SYNCULAR_REACTIONS_ENDPOINTS_SEARCH_SECRET"), "search signs with the default key");
        assertSecretsReferencedNeverInlined(chart);
        Exception unsigned = assertThrows(
                Exception.class,
                () -> RenderedChart.minimal(t -> t.set("policy.reactions.webhookUrl", "https://hooks.example.com/r")));
        assertTrue(unsigned.getMessage().contains("needs policy.reactions.existingSecret"), unsigned.getMessage());
        Exception unsignedEndpoint = assertThrows(
                Exception.class,
                () -> RenderedChart.minimal(t -> t.set("policy.reactions.endpoints.billing.types[0]", "invoice.paid")
                        .set("policy.reactions.endpoints.billing.url", "https://billing.example.com/syncular")));
        assertTrue(
                unsignedEndpoint.getMessage().contains("policy.reactions.endpoints.billing needs existingSecret"),
                unsignedEndpoint.getMessage());
        Exception badName = assertThrows(
                Exception.class,
                () -> RenderedChart.minimal(t -> t.set("policy.reactions.endpoints.Billing_1.types[0]", "invoice.paid")
                        .set("policy.reactions.endpoints.Billing_1.url", "https://billing.example.com/syncular")
                        .set("policy.reactions.endpoints.Billing_1.existingSecret", "billing-keys")));
        assertTrue(badName.getMessage().contains("must match [a-z0-9]+"), badName.getMessage());
    }

    /**
     * Traces (README "Observability"): off by default (the server's own default, no OpenTelemetry key in the
     * configuration); enabled, the OTLP endpoint, protocol and ratio sampler reach the server's configuration.
     */
    @Test
    void tracingIsOffByDefaultAndItsExporterAndSamplerReachTheServer() {
        Properties off = RenderedChart.minimal(t -> t).config();
        assertEquals(null, off.getProperty("quarkus.otel.sdk.disabled"));
        Properties on = RenderedChart.minimal(t -> t.set("tracing.enabled", "true")
                        .set("tracing.endpoint", "http://collector.observability:4318")
                        .set("tracing.protocol", "http/protobuf")
                        .set("tracing.samplerRatio", "0.25"))
                .config();
        assertEquals("false", on.getProperty("quarkus.otel.sdk.disabled"));
        assertEquals("http://collector.observability:4318", on.getProperty("quarkus.otel.exporter.otlp.endpoint"));
        assertEquals("http/protobuf", on.getProperty("quarkus.otel.exporter.otlp.protocol"));
        assertEquals("parentbased_traceidratio", on.getProperty("quarkus.otel.traces.sampler"));
        assertEquals("0.25", on.getProperty("quarkus.otel.traces.sampler.arg"));
    }

    /**
     * Remote operations (docs/OPERATIONS.md): the queries IR document lands in its own ConfigMap, mounted read-only
     * and named by {@code syncular.operations.queries.path}; the privileged lists and the watch caps reach the
     * server's configuration; without a document no ConfigMap, mount or path.
     */
    @Test
    void operationsQueriesAndWatchCapsReachTheServer() {
        String doc = "{\"queryIrVersion\":4,\"queries\":[]}";
        RenderedChart chart = RenderedChart.minimal(t -> t.set("operations.queries", doc)
                .set("operations.privileged[0]", "allTodos")
                .set("operations.privilegedActors[0]", "reporting")
                .set("operations.privilegedActors[1]", "admin")
                .set("operations.maxRows", "500")
                .set("operations.watch.maxPerConnection", "20")
                .set("operations.watch.minRerunInterval", "250ms"));
        Properties config = chart.config();
        assertEquals(
                "/etc/syncular/operations/syncular.queries.ir.json",
                config.getProperty("syncular.operations.queries.path"));
        assertEquals("allTodos", config.getProperty("syncular.operations.queries.privileged"));
        assertEquals("reporting,admin", config.getProperty("syncular.operations.queries.privileged-actors"));
        assertEquals("500", config.getProperty("syncular.operations.queries.max-rows"));
        assertEquals("20", config.getProperty("syncular.operations.watch.max-per-connection"));
        assertEquals("10000", config.getProperty("syncular.operations.watch.max-per-pod"));
        assertEquals("250ms", config.getProperty("syncular.operations.watch.min-rerun-interval"));
        assertEquals(
                doc,
                chart.get(ConfigMap.class, FULLNAME + "-operations").getData().get("syncular.queries.ir.json"));
        assertEquals(null, config.getProperty("syncular.operations.commands.path"));
        String commands = "{\"commands\":[]}";
        RenderedChart declared = RenderedChart.minimal(t -> t.set("operations.commands", commands));
        assertEquals(
                "/etc/syncular/operations/commands.json",
                declared.config().getProperty("syncular.operations.commands.path"));
        assertEquals(
                commands,
                declared.get(ConfigMap.class, FULLNAME + "-operations")
                        .getData()
                        .get("commands.json"));
        assertEquals(null, declared.config().getProperty("syncular.operations.queries.path"));
        Deployment d = chart.get(Deployment.class, FULLNAME);
        assertTrue(server(d).getVolumeMounts().stream()
                .anyMatch(m -> m.getName().equals("operations")
                        && m.getMountPath().equals("/etc/syncular/operations")
                        && Boolean.TRUE.equals(m.getReadOnly())));
        assertTrue(d.getSpec().getTemplate().getSpec().getVolumes().stream()
                .anyMatch(v -> v.getName().equals("operations")
                        && v.getConfigMap().getName().equals(FULLNAME + "-operations")));
        RenderedChart none = RenderedChart.minimal(t -> t);
        assertEquals(null, none.config().getProperty("syncular.operations.queries.path"));
        assertTrue(server(none.get(Deployment.class, FULLNAME)).getVolumeMounts().stream()
                .noneMatch(m -> m.getName().equals("operations")));
    }

    /**
     * §9 schema window: older schema IR documents given by name land in the schema ConfigMap beside the current one
     * and reach the server as {@code syncular.schema.window}; with an existing ConfigMap, by key.
     */
    @Test
    void schemaWindowDocumentsReachTheServer() throws Exception {
        Path v1 = Path.of("src/test/resources/schema/window/v1.syncular.ir.json");
        Path v2 = Path.of("src/test/resources/schema/window/v2.syncular.ir.json");
        RenderedChart chart =
                RenderedChart.minimal(t -> t.setFile("schema.ir", v2).setFile("schema.window.v1", v1));
        assertEquals("/etc/syncular/schema/window-v1.json", chart.config().getProperty("syncular.schema.window"));
        assertEquals(
                Files.readString(v1).strip(),
                chart.get(ConfigMap.class, FULLNAME + "-schema")
                        .getData()
                        .get("window-v1.json")
                        .strip());

        RenderedChart existing = RenderedChart.minimal(t -> t.set("schema.existingConfigMap", "app-schemas")
                .set("schema.windowKeys[0]", "v1.json")
                .set("schema.windowKeys[1]", "v2.json"));
        assertEquals(
                "/etc/syncular/schema/v1.json,/etc/syncular/schema/v2.json",
                existing.config().getProperty("syncular.schema.window"));

        assertNull(
                RenderedChart.minimal(t -> t.setFile("schema.ir", v2)).config().getProperty("syncular.schema.window"));
        Exception orphan =
                assertThrows(Exception.class, () -> RenderedChart.minimal(t -> t.setFile("schema.window.v1", v1)));
        assertTrue(orphan.getMessage().contains("schema.window needs schema.ir"), orphan.getMessage());
    }

    /** {@code helm install} with the chart's defaults stops at template time naming the database settings. */
    /**
     * Read replicas (docs/SCALING.md, "Reads from replicas"): off by default (no {@code syncular.storage.replicas}),
     * the URLs joined into it when given, the lag limit, check interval and pool size passed on; a URL carrying
     * credentials is refused (the replicas use the primary's Secret, never inlined).
     */
    @Test
    void readReplicasReachTheServerWithoutCredentials() {
        Properties off = RenderedChart.minimal(t -> t).config();
        assertEquals(null, off.getProperty("syncular.storage.replicas"));
        assertEquals("5s", off.getProperty("syncular.storage.replica-max-lag"));
        assertEquals("1s", off.getProperty("syncular.storage.replica-check-interval"));
        assertEquals("20", off.getProperty("syncular.storage.replica-pool-max-size"));
        Properties on = RenderedChart.minimal(
                        t -> t.set("postgresql.replicas[0]", "postgresql://replica-1:5432/syncular")
                                .set("postgresql.replicas[1]", "postgresql://replica-2:5432/syncular")
                                .set("postgresql.replicaMaxLag", "2s")
                                .set("postgresql.replicaCheckInterval", "500ms")
                                .set("postgresql.replicaPoolMaxSize", "8"))
                .config();
        assertEquals(
                "postgresql://replica-1:5432/syncular,postgresql://replica-2:5432/syncular",
                on.getProperty("syncular.storage.replicas"));
        assertEquals("2s", on.getProperty("syncular.storage.replica-max-lag"));
        assertEquals("500ms", on.getProperty("syncular.storage.replica-check-interval"));
        assertEquals("8", on.getProperty("syncular.storage.replica-pool-max-size"));
        Exception inlined = assertThrows(
                Exception.class,
                () -> RenderedChart.minimal(
                        t -> t.set("postgresql.replicas[0]", "postgresql://u:secret@replica-1:5432/syncular")));
        assertTrue(inlined.getMessage().contains("without credentials"), inlined.getMessage());
    }

    @Test
    void defaultValuesFailNamingTheDatabaseSettings() {
        Exception url = assertThrows(Exception.class, () -> RenderedChart.render(t -> t));
        assertTrue(url.getMessage().contains("postgresql.url is required"), url.getMessage());
        Exception secret = assertThrows(
                Exception.class,
                () -> RenderedChart.render(t -> t.set("postgresql.url", "postgresql://pg:5432/syncular")));
        assertTrue(secret.getMessage().contains("postgresql.existingSecret is required"), secret.getMessage());
        Exception both =
                assertThrows(Exception.class, () -> RenderedChart.minimal(t -> t.set("postgresql.urlKey", "url")));
        assertTrue(both.getMessage().contains("not both"), both.getMessage());
        RenderedChart fromSecret = RenderedChart.render(
                t -> t.set("postgresql.existingSecret", "db").set("postgresql.urlKey", "url"));
        assertSecretRef(env(server(fromSecret.get(Deployment.class, FULLNAME))), "SYNCULAR_PG_URL", "db", "url");
    }

    @Test
    void refusesValuesThatWouldBreakTheService() {
        Exception grace = assertThrows(
                Exception.class, () -> RenderedChart.minimal(t -> t.set("terminationGracePeriodSeconds", "15")));
        assertTrue(
                grace.getMessage().contains("preStopSleepSeconds + realtime.shutdownGraceSeconds + 5 = 20"),
                grace.getMessage());
        Exception undeclared = assertThrows(
                Exception.class,
                () -> RenderedChart.minimal(t -> t.set("backfill.enabled", "true")
                        .set("backfill.partition", "t1")
                        .set("backfill.checkpoint", "c")
                        .set("backfill.table", "todos")
                        .set("backfill.set.position", "0")));
        assertTrue(undeclared.getMessage().contains("must be one of `checkpoints`"), undeclared.getMessage());
        Exception bucket =
                assertThrows(Exception.class, () -> RenderedChart.minimal(t -> t.set("s3.segmentsStore", "s3")));
        assertTrue(bucket.getMessage().contains("needs s3.bucket"), bucket.getMessage());
    }

    /** Every value of values.yaml is in the chart README's table (itself or a parent documented as a whole), and no stale row. */
    @Test
    void readmeListsEveryValue() throws Exception {
        Set<String> documented = new TreeSet<>();
        Matcher row = Pattern.compile("(?m)^\\| `([A-Za-z0-9.]+)` \\|")
                .matcher(Files.readString(RenderedChart.CHART.resolve("README.md")));
        while (row.find()) {
            documented.add(row.group(1));
        }
        Set<String> values = new TreeSet<>();
        flatten(
                new ObjectMapper(new YAMLFactory())
                        .readTree(RenderedChart.CHART.resolve("values.yaml").toFile()),
                "",
                values);
        for (String key : values) {
            String k = key;
            while (!documented.contains(k) && k.contains(".")) {
                k = k.substring(0, k.lastIndexOf('.'));
            }
            assertTrue(documented.contains(k), "value " + key + " is not in helm/syncular-server/README.md");
        }
        for (String d : documented) {
            assertTrue(
                    values.stream().anyMatch(v -> v.equals(d) || v.startsWith(d + ".")),
                    "README lists " + d + ", which values.yaml does not have");
        }
    }

    private static void flatten(JsonNode n, String prefix, Set<String> out) {
        if (n.isObject() && !n.isEmpty()) {
            n.fields().forEachRemaining(e -> flatten(e.getValue(), prefix + e.getKey() + ".", out));
        } else {
            out.add(prefix.substring(0, prefix.length() - 1));
        }
    }

    @Test
    void strictParsingCatchesAMisplacedField() {
        String misplaced = """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: p
                spec:
                  securityContext:
                    readOnlyRootFilesystem: true
                  containers:
                    - name: c
                      image: i
                """;
        AssertionError e = assertThrows(AssertionError.class, () -> RenderedChart.parse(misplaced));
        assertTrue(e.getMessage().contains("securityContext [readOnlyRootFilesystem]"), e.getMessage());
        AssertionError unknownKind = assertThrows(
                AssertionError.class,
                () -> RenderedChart.parse("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n"));
        assertTrue(unknownKind.getMessage().contains("does not know"), unknownKind.getMessage());
    }

    private static void assertProbes(Container c) {
        assertProbe(c.getStartupProbe(), "/q/health/started");
        assertProbe(c.getLivenessProbe(), "/q/health/live");
        assertProbe(c.getReadinessProbe(), "/q/health/ready");
        assertEquals(8080, c.getPorts().get(0).getContainerPort());
        assertEquals("http", c.getPorts().get(0).getName());
        assertEquals(9000, c.getPorts().get(1).getContainerPort());
        assertEquals("management", c.getPorts().get(1).getName());
    }

    private static void assertProbe(Probe p, String path) {
        assertNotNull(p, path);
        assertEquals(path, p.getHttpGet().getPath());
        assertEquals("http", p.getHttpGet().getPort().getStrVal());
    }

    /** Non-root, read-only root file system, no privilege escalation, no capabilities; /tmp an emptyDir. */
    private static void assertLockedDown(PodSpec pod, Container c) {
        assertEquals(Boolean.TRUE, pod.getSecurityContext().getRunAsNonRoot());
        assertEquals(
                "RuntimeDefault", pod.getSecurityContext().getSeccompProfile().getType());
        SecurityContext s = c.getSecurityContext();
        assertEquals(Boolean.TRUE, s.getRunAsNonRoot());
        assertEquals(Boolean.TRUE, s.getReadOnlyRootFilesystem());
        assertEquals(Boolean.FALSE, s.getAllowPrivilegeEscalation());
        assertEquals(List.of("ALL"), s.getCapabilities().getDrop());
        String tmpVolume = c.getVolumeMounts().stream()
                .filter(m -> m.getMountPath().equals("/tmp"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no /tmp mount"))
                .getName();
        Volume tmp = pod.getVolumes().stream()
                .filter(v -> v.getName().equals(tmpVolume))
                .findFirst()
                .orElseThrow();
        assertNotNull(tmp.getEmptyDir(), "/tmp is an emptyDir");
        assertEquals("1Gi", tmp.getEmptyDir().getSizeLimit().toString());
    }

    private static void assertSecretRef(Map<String, EnvVar> env, String name, String secret, String key) {
        EnvVar v = env.get(name);
        assertNotNull(v, name + " missing");
        assertNull(v.getValue(), name + " inlined");
        assertEquals(secret, v.getValueFrom().getSecretKeyRef().getName());
        assertEquals(key, v.getValueFrom().getSecretKeyRef().getKey());
    }

    /** No Secret is rendered, and every secret-looking variable of every container is a secretKeyRef. */
    private static void assertSecretsReferencedNeverInlined(RenderedChart chart) {
        assertTrue(chart.all(Secret.class).isEmpty(), "the chart renders no Secret");
        for (HasMetadata r : chart.resources) {
            PodSpec pod = r instanceof Deployment d
                    ? d.getSpec().getTemplate().getSpec()
                    : r instanceof Job j ? j.getSpec().getTemplate().getSpec() : null;
            if (pod == null) {
                continue;
            }
            for (Container c : pod.getContainers()) {
                for (EnvVar e : c.getEnv()) {
                    if (SECRET_NAME.matcher(e.getName()).matches()) {
                        assertNull(
                                e.getValue(),
                                e.getName() + " inlined in " + r.getMetadata().getName());
                        assertNotNull(e.getValueFrom().getSecretKeyRef(), e.getName());
                    }
                }
            }
        }
    }
}
