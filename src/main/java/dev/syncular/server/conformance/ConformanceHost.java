package dev.syncular.server.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.boot.SchemaStores;
import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.realtime.RealtimeConfig;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaException;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.sync.CrdtMergerRegistry;
import dev.syncular.server.sync.SyncLimits;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.runtime.configuration.ConfigUtils;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

/**
 * The instance registry of the conformance host (docs/CONFORMANCE.md).
 * Each instance lives in its own PostgreSQL schema of the configured database; closing it drops the schema.
 */
@ApplicationScoped
public class ConformanceHost {
    private static final Logger LOG = Logger.getLogger(ConformanceHost.class);

    private final Map<String, ConformanceInstance> instances = new ConcurrentHashMap<>();

    @Inject
    SchemaStores schemaStores;

    @Inject
    ConformanceConfig config;

    @Inject
    RealtimeConfig realtime;

    @Inject
    SyncularConfig server;

    /** §5.10.2: the production registry (built-in {@code yjs-doc} plus host beans); instance schemas compile against it. */
    @Inject
    CrdtMergerRegistry crdtMergers;

    public boolean enabled() {
        return config.enabled();
    }

    void onStart(@Observes StartupEvent event) {
        if (!enabled()) {
            return;
        }
        if (LaunchMode.current() == LaunchMode.NORMAL && ConfigUtils.isProfileActive("prod")) {
            throw new ConfigurationException(
                    "syncular.conformance.enabled must not be set in the prod profile: the "
                            + "conformance host lets any caller choose its actor and scopes; run it with -Dquarkus.profile=dev");
        }
        LOG.warn("************************************************************************************");
        LOG.warn("* CONFORMANCE HOST ENABLED: /__conformance routes accept host-controlled identities, *");
        LOG.warn("* scopes and clocks. Never expose this server to real users.                         *");
        LOG.warn("************************************************************************************");
    }

    void onStop(@Observes ShutdownEvent event) {
        for (String id : instances.keySet()) {
            close(id).await().indefinitely();
        }
    }

    /** {@code POST /__conformance/instances}: a fresh, empty instance from {@code ServerCreateOptions}. */
    public Uni<ConformanceInstance> create(JsonNode options) {
        if (options == null || !options.isObject() || !options.has("schema") || !options.has("partition")) {
            return Uni.createFrom()
                    .failure(new SyncError(ErrorCode.INVALID_REQUEST, "schema and partition are required"));
        }
        CompiledSchema schema;
        try {
            schema = SchemaLoader.compile(options.get("schema"), crdtMergers.crdtTypes());
        } catch (SchemaException e) {
            return Uni.createFrom()
                    .failure(new SyncError(
                            ErrorCode.INVALID_REQUEST,
                            "schema does not compile",
                            Map.of("reason", String.valueOf(e.details().get("reason")))));
        } catch (Exception e) {
            return Uni.createFrom().failure(new SyncError(ErrorCode.INVALID_REQUEST, "schema does not compile"));
        }
        JsonNode limitsNode = options.path("limits");
        SyncLimits limits = new SyncLimits(
                limitsNode.path("maxOperationsPerRequest").asInt(SyncLimits.DEFAULTS.maxOperationsPerRequest()),
                limitsNode.path("inlineSegmentMaxBytes").asInt(SyncLimits.DEFAULTS.inlineSegmentMaxBytes()),
                limitsNode.path("segmentTtlMs").asLong(SyncLimits.DEFAULTS.segmentTtlMs()));
        long now = options.path("nowMs").asLong(System.currentTimeMillis());
        String id = UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        String pgSchema = "conformance_" + id;
        SchemaStores.Stores stores = schemaStores.in(pgSchema);
        JsonNode signed = options.path("signedUrls");
        Long ttlSeconds = signed.isObject() ? signed.path("ttlSeconds").asLong(600) : null;
        String port = ConfigProvider.getConfig()
                .getOptionalValue(
                        LaunchMode.current() == LaunchMode.TEST ? "quarkus.http.test-port" : "quarkus.http.port",
                        String.class)
                .orElse("8080");
        String base =
                "http://localhost:" + port + server.mountPrefix() + "/__conformance/instances/" + id + "/segments";
        ConformanceInstance instance = new ConformanceInstance(
                id,
                options.get("partition").asText(),
                schema,
                stores,
                limits,
                now,
                ttlSeconds,
                base,
                limitsNode.path("maxDeltaBytes").asLong(realtime.maxDeltaBytes().asLongValue()),
                limitsNode
                        .path("maxPresenceBytes")
                        .asLong(realtime.maxPresenceBytes().asLongValue()),
                crdtMergers,
                leaseTtl(options.path("leases")));
        return stores.ensureSchema(schema).map(v -> {
            instances.put(id, instance);
            return instance;
        });
    }

    /** {@code leases: {ttlMs}} (capability {@code leases}): the TTL, or {@code null} when absent (feature off). */
    private static Long leaseTtl(JsonNode leases) {
        if (!leases.isObject()) {
            return null;
        }
        long ttl = leases.path("ttlMs").asLong(0);
        if (ttl <= 0) {
            throw new SyncError(ErrorCode.INVALID_REQUEST, "leases.ttlMs must be a positive integer");
        }
        return ttl;
    }

    public ConformanceInstance get(String id) {
        ConformanceInstance i = instances.get(id);
        if (i == null) {
            throw new SyncError(ErrorCode.NOT_FOUND, "unknown conformance instance");
        }
        return i;
    }

    /** Frees everything the instance holds: its PostgreSQL schema and its registry entry. */
    public Uni<Void> close(String id) {
        ConformanceInstance i = instances.remove(id);
        if (i == null) {
            return Uni.createFrom().voidItem();
        }
        return Uni.createFrom()
                .item(() -> {
                    i.closeRealtime();
                    return i;
                })
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                .chain(() -> i.stores.drop());
    }

    public int size() {
        return instances.size();
    }
}
