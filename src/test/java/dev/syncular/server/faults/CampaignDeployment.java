package dev.syncular.server.faults;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.testsupport.CampaignDatabase;
import dev.syncular.server.testsupport.FaultSchedule;
import dev.syncular.server.testsupport.PodClocks;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.RestartableS3;
import dev.syncular.server.testsupport.ServerProcess;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * What the seeds of a fault campaign share ({@link FaultCampaign}): the campaign's database ({@link CampaignDatabase})
 * and two packaged pods on it, each on a fixed port (a restarted pod comes back on the same address), serving the
 * bundled schema in a storage schema of their own.
 */
final class CampaignDeployment implements AutoCloseable {
    final String name;
    final CampaignDatabase db;
    final CompiledSchema schema;
    final String storageSchema =
            "it_campaign_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    /** Names each pod's LISTEN connection ({@code HOSTNAME}, the hub's application_name), so a step can end it. */
    final String hostPrefix = "campaign-" + UUID.randomUUID().toString().substring(0, 6) + "-";

    /** The pods' {@code syncular.storage.replica-max-lag} when the database has a standby (default 5s). */
    static final String REPLICA_MAX_LAG = "1s";

    final AtomicReferenceArray<ServerProcess> pods = new AtomicReferenceArray<>(2);
    final int[] ports = new int[2];
    /** Whether the database serves (false from a fault that took it down until it is back). */
    volatile boolean dbUp = true;

    /**
     * The pods' segment store on an S3 stand-in ({@link FaultSchedule.Kind#STOP_S3}), every rows segment referenced
     * (none inlined), so each bootstrap goes through it; empty: segments in PostgreSQL (the default store).
     */
    final Optional<RestartableS3> s3;

    /** The pods' stepped wall clocks ({@link FaultSchedule.Kind#CLOCK_STEP}); empty: the machine's clock. */
    final Optional<PodClocks> clocks;

    private CampaignDeployment(
            String name,
            CampaignDatabase db,
            Optional<RestartableS3> s3,
            Optional<PodClocks> clocks,
            CompiledSchema schema) {
        this.name = name;
        this.db = db;
        this.s3 = s3;
        this.clocks = clocks;
        this.schema = schema;
    }

    /** Starts pod a (it creates the storage schema), then pod b on it; closes {@code db} when a pod fails to start. */
    static CampaignDeployment start(String name, CampaignDatabase db) throws Exception {
        return start(name, db, Optional.empty(), Optional.empty());
    }

    /** {@link #start(String, CampaignDatabase)} with the pods' segments on {@code s3}, which it closes at the end. */
    static CampaignDeployment start(
            String name, CampaignDatabase db, Optional<RestartableS3> s3, Optional<PodClocks> clocks) throws Exception {
        CampaignDeployment d = new CampaignDeployment(
                name, db, s3, clocks, SchemaLoader.parse(Files.readString(ServerProcess.BUNDLED_SCHEMA)));
        try {
            for (int i = 0; i < 2; i++) {
                d.pods.set(i, d.pod(i).start());
                d.ports[i] = d.pods.get(i).port();
            }
            return d;
        } catch (Exception | Error e) {
            d.close();
            throw e;
        }
    }

    ServerProcess.Builder pod(int i) {
        ServerProcess.Builder b = ServerProcess.bare(name + "-" + (char) ('a' + i));
        if (!db.replicas().isEmpty()) {
            // pull-only rounds read the standby; a pause of replay of a few seconds takes it out of rotation
            b.env("SYNCULAR_STORAGE_REPLICAS", String.join(",", db.replicas()))
                    .env("SYNCULAR_STORAGE_REPLICA_MAX_LAG", REPLICA_MAX_LAG);
        }
        clocks.ifPresent(c -> c.env(i).forEach(b::env));
        s3.ifPresent(store -> b.config(store.podConfig())
                .env("SYNCULAR_SEGMENTS_STORE", "s3")
                .env("SYNCULAR_LIMITS_INLINE_SEGMENT_MAX_BYTES", "0"));
        return b.env("QUARKUS_DATASOURCE_REACTIVE_URL", db.url())
                .env("SYNCULAR_PG_USER", db.user())
                .env("SYNCULAR_PG_PASSWORD", db.password())
                .env("SYNCULAR_DEV_AUTH_ENABLED", "true")
                .env("SYNCULAR_STORAGE_PG_SCHEMA", storageSchema)
                .env("SYNCULAR_SIGNED_URLS_KEY", "it-shared-signing-key-0123456789abcdef")
                .env("HOSTNAME", hostPrefix + i)
                .jvmFlags(ServerProcess.CHART_JVM_FLAGS)
                .port(ports[i]);
    }

    Connection jdbc() throws SQLException {
        return db.connect();
    }

    /** Terminates pod {@code p}'s LISTEN backend(s) (found by the hub's application_name); how many. */
    int terminateListen(int p) throws SQLException {
        try (Connection c = jdbc();
                PreparedStatement st = c.prepareStatement("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        + " WHERE application_name LIKE ? AND query ILIKE 'LISTEN%'")) {
            st.setString(1, "syncular-rt-%-" + hostPrefix + p);
            int n = 0;
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    n += rs.getBoolean(1) ? 1 : 0;
                }
            }
            return n;
        }
    }

    int listenBackends(int p) throws SQLException {
        try (Connection c = jdbc();
                PreparedStatement st = c.prepareStatement("SELECT count(*) FROM pg_stat_activity"
                        + " WHERE application_name LIKE ? AND query ILIKE 'LISTEN%'")) {
            st.setString(1, "syncular-rt-%-" + hostPrefix + p);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /**
     * Pull-only rounds the pods' replica was asked to serve, by outcome ({@code served}, {@code behind},
     * {@code unavailable}), summed over the pods ({@code syncular_replica_reads_total} on each pod's management port;
     * a pod that does not answer counts nothing).
     */
    Map<String, Long> replicaReads() {
        Map<String, Long> out = new TreeMap<>();
        for (int p = 0; p < 2; p++) {
            String body =
                    FaultCampaign.httpBody("http://127.0.0.1:" + pods.get(p).managementPort() + "/q/metrics");
            for (PrometheusScrape.Sample s : PrometheusScrape.parse(body).samples) {
                if (s.name().equals("syncular_replica_reads_total")) {
                    out.merge(s.labels().get("outcome"), (long) s.value(), Long::sum);
                }
            }
        }
        return out;
    }

    @Override
    public void close() throws Exception {
        try {
            ServerProcess.closeAll(pods.get(0), pods.get(1));
        } finally {
            try {
                db.close();
            } finally {
                if (s3.isPresent()) {
                    s3.get().close();
                }
            }
        }
    }
}
