package dev.syncular.server.boot;

import dev.syncular.server.auth.DevAuthStartupCheck;
import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.blobs.postgres.PostgresBlobStore;
import dev.syncular.server.blobs.s3.S3BlobStore;
import dev.syncular.server.config.DatasourceStartupCheck;
import dev.syncular.server.config.EmbeddedDatabase;
import dev.syncular.server.config.EmbeddedPostgresConfigSourceFactory;
import dev.syncular.server.config.ServesRequests;
import dev.syncular.server.config.StoreKind;
import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.health.StorageReadiness;
import dev.syncular.server.operations.CommandRegistry;
import dev.syncular.server.operations.QueryRegistry;
import dev.syncular.server.realtime.PodRealtime;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentsConfig;
import dev.syncular.server.segments.SignedUrlsConfig;
import dev.syncular.server.segments.postgres.PostgresSegmentStore;
import dev.syncular.server.segments.s3.S3SegmentStore;
import dev.syncular.server.storage.ServerStorage;
import dev.syncular.server.storage.StorageConfig;
import dev.syncular.server.storage.StorageException;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.function.UnaryOperator;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

/**
 * The pod's start-up, in one place and in this order, on the main thread (never an event loop), before the HTTP
 * server takes requests; a step that fails stops the boot with its message:
 *
 * <ol>
 *   <li>a database is configured ({@link DatasourceStartupCheck});
 *   <li>requests would be authenticated as configured ({@link DevAuthStartupCheck}): JWT, host beans, or dev auth
 *       only when enabled;
 *   <li>Mutiny captures no thread context (below);
 *   <li>the signed-URL key, when segments are served by the pod itself (§5.4);
 *   <li>the schema: the served window compiled (§9), then the storage tables created or migrated, and the segment
 *       store's table or bucket checked ({@code readiness} marked migrated after it);
 *   <li>the blob store's table or bucket (§5.9);
 *   <li>the remote-operation registries read (REMOTE.md §2: a refused document stops the boot, not the first
 *       request);
 *   <li>realtime: the hub's LISTEN connection and heartbeats (§8).
 * </ol>
 *
 * Scheduled jobs (pruning, segment expiry, blob sweep, tenant load, reaction delivery) start with Quarkus's scheduler
 * once start-up is over, each under its database claim; readiness follows the stores and the hub. Beans are looked
 * up as each step runs, so none is built before the checks that guard it.
 */
@ApplicationScoped
public class StartupSequence {
    private static final Logger LOG = Logger.getLogger(StartupSequence.class);
    private static final Duration STARTUP_DDL_TIMEOUT = Duration.ofMinutes(2);

    private final Instance<DatasourceStartupCheck> datasource;
    private final Instance<DevAuthStartupCheck> auth;
    private final Instance<SyncularConfig> config;
    private final Instance<SchemaWindow> window;
    private final Instance<ServerStorage> storage;
    private final Instance<SegmentStore> segments;
    private final Instance<StorageReadiness> readiness;
    private final Instance<BlobStore> blobs;
    private final Instance<QueryRegistry> queries;
    private final Instance<CommandRegistry> commands;
    private final Instance<PodRealtime> realtime;

    @Inject
    public StartupSequence(
            Instance<DatasourceStartupCheck> datasource,
            Instance<DevAuthStartupCheck> auth,
            Instance<SyncularConfig> config,
            Instance<SchemaWindow> window,
            Instance<ServerStorage> storage,
            Instance<SegmentStore> segments,
            Instance<StorageReadiness> readiness,
            Instance<BlobStore> blobs,
            Instance<QueryRegistry> queries,
            Instance<CommandRegistry> commands,
            Instance<PodRealtime> realtime) {
        this.datasource = datasource;
        this.auth = auth;
        this.config = config;
        this.window = window;
        this.storage = storage;
        this.segments = segments;
        this.readiness = readiness;
        this.blobs = blobs;
        this.queries = queries;
        this.commands = commands;
        this.realtime = realtime;
    }

    void start(@Observes @Priority(1) StartupEvent event) {
        datasource.get().check();
        auth.get().check();
        removeContextCaptures();
        checkSignedUrls(mapping(SignedUrlsConfig.class), mapping(SegmentsConfig.class), config.get());
        ensureStorage();
        ensureBlobs(blobs.get());
        queries.get().all().size();
        commands.get().size();
        realtime.get().start();
    }

    /**
     * Mutiny without thread-context capture. The packaged configuration propagates no thread context
     * ({@code mp.context.ThreadContext.propagated=None}): a request's callbacks run on its Vert.x context, which
     * carries its traces, request scope and log fields. The context-propagation hooks that Quarkus installs into
     * Mutiny still looked up the current thread context for every operator built and every future completed, to
     * capture nothing: they are removed (Mutiny's callback decorators, there are no others, and its
     * {@code CompletableFuture} wrapper).
     */
    private static void removeContextCaptures() {
        Infrastructure.clearInterceptors();
        Infrastructure.setCompletableFutureWrapper(UnaryOperator.identity());
    }

    /**
     * The signed-URL key is checked at start-up, not at the first bootstrap (the S3 segment store presigns instead);
     * not for a one-shot command ({@code boot.ServerMain}: no listener), which mints no URL.
     */
    private static void checkSignedUrls(SignedUrlsConfig signed, SegmentsConfig segments, SyncularConfig config) {
        if (ServesRequests.thisProcess() && segments.store() != StoreKind.S3) {
            ConfiguredParts.signer(signed, mapping(StorageConfig.class), config);
        }
    }

    private static <T> T mapping(Class<T> type) {
        return ConfigProvider.getConfig().unwrap(SmallRyeConfig.class).getConfigMapping(type);
    }

    /**
     * Creates or migrates the storage tables for the served schema, then checks the segment store. When the stored
     * schema is newer than this build the pod goes on starting but stays unready (the serve gate refuses).
     */
    private void ensureStorage() {
        SchemaWindow window = this.window.get();
        ServerStorage storage = this.storage.get();
        SegmentStore segments = this.segments.get();
        SyncularConfig config = this.config.get();
        long t0 = System.nanoTime();
        try {
            if (mapping(StorageConfig.class).pgSchemaSetting().isEmpty()) {
                refuseAnEmptyDefaultBesideLegacyTables(storage);
            }
            storage.ensureSchema(window.current(), Assembly.checkpoints(config))
                    .await()
                    .atMost(STARTUP_DDL_TIMEOUT);
        } catch (StorageException e) {
            if (!StorageException.SCHEMA_NOT_READY.equals(e.code())) {
                ConfigurationException clear = StartupErrors.storage(
                        e, storage.pgSchema(), window.current().version(), embeddedDataDir());
                throw clear != null ? clear : e;
            }
            // A newer build already migrated this database: stay up but unready (the serve gate refuses).
            LOG.warn("stored schema is newer than this build; readiness stays DOWN");
            return;
        } catch (RuntimeException e) {
            Config c = ConfigProvider.getConfig();
            ConfigurationException clear = StartupErrors.database(
                    e,
                    c.getOptionalValue(EmbeddedPostgresConfigSourceFactory.URL_PROPERTY, String.class)
                            .orElse("(unset)"),
                    c.getOptionalValue(EmbeddedPostgresConfigSourceFactory.USER_PROPERTY, String.class)
                            .orElse("(unset)"));
            throw clear != null ? clear : e;
        }
        if (segments instanceof PostgresSegmentStore pg) {
            pg.ensureSchema().await().atMost(STARTUP_DDL_TIMEOUT);
        } else if (segments instanceof S3SegmentStore s3) {
            // a missing bucket or bad credentials stop the boot, not the first bootstrap
            s3.checkBucket().await().atMost(STARTUP_DDL_TIMEOUT);
        }
        readiness.get().markMigrated();
        LOG.infof(
                "Sync storage ready in schema \"%s\" (schema version %d, %d tables) in %d ms",
                storage.pgSchema(),
                window.current().version(),
                window.current().tables().size(),
                (System.nanoTime() - t0) / 1_000_000);
    }

    /**
     * With {@code syncular.storage.pg-schema} unset, the tables go to {@value StorageConfig#DEFAULT_PG_SCHEMA}:
     * a database whose sync tables are in {@value StorageConfig#LEGACY_PG_SCHEMA} (the default before 0.2.0)
     * and not there would start empty beside them, every client of the deployment reset. Refused, naming the setting.
     */
    private static void refuseAnEmptyDefaultBesideLegacyTables(ServerStorage storage) {
        if (!storage.holdsSyncTables(storage.pgSchema()).await().atMost(STARTUP_DDL_TIMEOUT)
                && storage.holdsSyncTables(StorageConfig.LEGACY_PG_SCHEMA)
                        .await()
                        .atMost(STARTUP_DDL_TIMEOUT)) {
            throw new ConfigurationException(StartupErrors.tablesInLegacySchema(storage.pgSchema()));
        }
    }

    /** The data directory of the embedded dev/test PostgreSQL when it is the database in use, else {@code null}. */
    private static String embeddedDataDir() {
        String dir = System.getProperty(EmbeddedDatabase.DATA_DIR_PROPERTY);
        Config c = ConfigProvider.getConfig();
        String url = c.getOptionalValue(EmbeddedPostgresConfigSourceFactory.URL_PROPERTY, String.class)
                .orElse("");
        String embedded = c.getOptionalValue(EmbeddedPostgresConfigSourceFactory.EMBEDDED_URL_PROPERTY, String.class)
                .orElse(null);
        return dir != null && url.equals(embedded) ? dir : null;
    }

    /**
     * Builds the blob store (a missing bucket stops the boot) and creates the embedded table, after
     * {@link #ensureStorage} created the PostgreSQL schema.
     */
    private static void ensureBlobs(BlobStore store) {
        if (store instanceof PostgresBlobStore pg) {
            pg.ensureSchema().await().atMost(STARTUP_DDL_TIMEOUT);
        } else if (store instanceof S3BlobStore s3) {
            LOG.infof("Blob store: S3 bucket \"%s\"", s3.bucket());
        }
    }
}
