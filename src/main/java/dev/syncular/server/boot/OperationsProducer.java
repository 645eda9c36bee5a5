package dev.syncular.server.boot;

import dev.syncular.server.operations.CommandRegistry;
import dev.syncular.server.operations.ConfiguredQueryAuthorizer;
import dev.syncular.server.operations.DeclaredCommands;
import dev.syncular.server.operations.OperationObserver;
import dev.syncular.server.operations.OperationsConfig;
import dev.syncular.server.operations.QueryAuthorizer;
import dev.syncular.server.operations.QueryDefinition;
import dev.syncular.server.operations.QueryExecutor;
import dev.syncular.server.operations.QueryIrException;
import dev.syncular.server.operations.QueryIrLoader;
import dev.syncular.server.operations.QueryRegistry;
import dev.syncular.server.operations.QueryWatches;
import dev.syncular.server.operations.RemoteCommand;
import dev.syncular.server.operations.RemoteOperations;
import dev.syncular.server.operations.TransactionBoundQueries;
import dev.syncular.server.operations.WatchConfig;
import dev.syncular.server.rollout.SchemaChangePlanner;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.QueryReads;
import dev.syncular.server.storage.RowTables;
import dev.syncular.server.storage.SchemaPlanReads;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.sync.CrdtMergerRegistry;
import dev.syncular.server.sync.RegisteredQueries;
import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.Tracing;
import io.quarkus.arc.DefaultBean;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.vertx.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * Wires the remote operations from {@code syncular.operations.*}: the registry (read and checked at start-up:
 * a document the server refuses stops it with one line), the executor, the §6 watches, the built-in privileged authorizer
 * (a {@code @DefaultBean}: a team's own {@link QueryAuthorizer} bean replaces it) and the request handler.
 */
@ApplicationScoped
public class OperationsProducer {
    private static final Logger LOG = Logger.getLogger(OperationsProducer.class);

    /** The plan of a schema change against this deployment ({@code POST /admin/schema/plan}, the console). */
    @Produces
    @Singleton
    SchemaChangePlanner schemaChangePlanner(SchemaPlanReads storage, SchemaWindow window, CrdtMergerRegistry mergers) {
        return new SchemaChangePlanner(storage, window, mergers.crdtTypes(), System::currentTimeMillis);
    }

    @Produces
    @Singleton
    QueryRegistry registry(OperationsConfig config, SchemaWindow window) {
        OperationsConfig.Queries q = config.queries();
        QueryIrLoader.Registration reg =
                new QueryIrLoader.Registration(q.privileged().orElse(Set.of()), q.maxRows(), q.maxRowsByQuery());
        List<QueryDefinition> all = new ArrayList<>();
        for (String path : q.path().orElse(List.of())) {
            if (path.isBlank()) {
                continue;
            }
            byte[] bytes;
            try {
                bytes = Files.readAllBytes(Path.of(path.trim()));
            } catch (IOException e) {
                throw new ConfigurationException("syncular.operations.queries.path: cannot read " + path.trim() + " ("
                        + e.getClass().getSimpleName() + ")");
            }
            try {
                all.addAll(QueryIrLoader.load(bytes, path.trim(), window.current(), reg));
            } catch (QueryIrException e) {
                throw new ConfigurationException("syncular.operations.queries.path: " + e.getMessage());
            }
        }
        for (String name : reg.privileged()) {
            if (all.stream().noneMatch(d -> d.name().equals(name))) {
                throw new ConfigurationException("syncular.operations.queries.privileged names " + name
                        + ", which no queries IR document defines");
            }
        }
        QueryRegistry registry;
        try {
            registry = new QueryRegistry(all);
        } catch (QueryIrException e) {
            throw new ConfigurationException("syncular.operations.queries.path: " + e.getMessage());
        }
        if (!all.isEmpty()) {
            LOG.infof("remote operations: %d registered queries", all.size());
        }
        return registry;
    }

    @Produces
    @Singleton
    @DefaultBean
    QueryAuthorizer authorizer(OperationsConfig config) {
        return new ConfiguredQueryAuthorizer(config.queries().privilegedActors().orElse(Set.of()));
    }

    @Produces
    @Singleton
    QueryExecutor executor(QueryReads reads, RowTables storage, SchemaWindow window) {
        return new QueryExecutor(reads, storage, window.current());
    }

    /** SPEC §6.7 / §6.8 {@code queryAuthoritative}, for the engine's push transactions ({@code boot.EngineProducer}). */
    @Produces
    @Singleton
    RegisteredQueries transactionQueries(QueryRegistry registry, QueryExecutor executor) {
        return new TransactionBoundQueries(registry, executor);
    }

    @Produces
    @Singleton
    CommandRegistry commands(@Any Instance<RemoteCommand> beans, OperationsConfig config, SchemaWindow window) {
        List<RemoteCommand> all = new ArrayList<>();
        beans.forEach(all::add);
        Optional<String> declared = config.commands().path().filter(p -> !p.isBlank());
        if (declared.isPresent()) {
            String path = declared.get().trim();
            try {
                all.addAll(DeclaredCommands.load(Files.readAllBytes(Path.of(path)), window.current()));
            } catch (IOException e) {
                throw new ConfigurationException("syncular.operations.commands.path: cannot read " + path + " ("
                        + e.getClass().getSimpleName() + ")");
            } catch (IllegalArgumentException e) {
                throw new ConfigurationException("syncular.operations.commands.path: " + path + ": " + e.getMessage());
            }
        }
        CommandRegistry registry;
        try {
            registry = new CommandRegistry(all);
        } catch (IllegalArgumentException e) {
            throw new ConfigurationException("remote commands: " + e.getMessage());
        }
        if (registry.size() > 0) {
            LOG.infof("remote operations: %d registered commands", registry.size());
        }
        return registry;
    }

    @Produces
    @Singleton
    RemoteOperations operations(
            QueryRegistry registry,
            QueryExecutor executor,
            SchemaWindow window,
            ScopeResolver resolver,
            QueryAuthorizer authorizer,
            SyncStorage storage,
            CommandRegistry commands,
            SyncEngine engine,
            @Any Instance<OperationObserver> observers,
            Tracing tracing) {
        // the meters and the admin event tail (ops), in one
        List<OperationObserver> all = new ArrayList<>();
        observers.forEach(all::add);
        return new RemoteOperations(
                registry,
                executor,
                window.current(),
                resolver,
                authorizer,
                storage,
                commands,
                engine,
                OperationObserver.of(all),
                tracing);
    }

    /** The pod's §6 watches ({@code syncular.operations.watch.*}); the socket and the commit signal are wired in {@code realtime}. */
    @Produces
    @Singleton
    QueryWatches watches(RemoteOperations operations, OperationsConfig config, Vertx vertx, QueryReads reads) {
        OperationsConfig.Watch w = config.watch();
        return new QueryWatches(
                operations,
                new WatchConfig(
                        w.maxPerConnection(),
                        w.maxPerPod(),
                        w.maxPerPartition(),
                        w.minRerunInterval(),
                        w.maxConcurrentRuns(),
                        w.maxConcurrentRunsPerPartition(),
                        w.maxMessageBytes().asLongValue()),
                vertx,
                reads);
    }
}
