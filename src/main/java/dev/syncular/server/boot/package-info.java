/**
 * The composition root: the one place the engine, the realtime hub and channel, and the blob service are put
 * together from their parts. {@link dev.syncular.server.boot.Assembly} builds each of them (the only caller of
 * the {@code SyncEngine} constructor outside {@code sync}) and turns {@code syncular.*} configuration into
 * their limits and options once: {@link dev.syncular.server.boot.Assembly#configured} (limits, §2.4
 * checkpoints, §5.3 images, round admission), {@link dev.syncular.server.boot.Assembly#realtimeSettings}
 * (§8.8) and {@link dev.syncular.server.boot.Assembly#blobService(dev.syncular.server.blobs.BlobsConfig,
 * dev.syncular.server.blobs.BlobStore, dev.syncular.server.storage.SyncStorage,
 * dev.syncular.server.sync.ScopeResolver, dev.syncular.server.schema.SchemaWindow)} (§5.9).
 * {@link dev.syncular.server.boot.ConfiguredParts} turns {@code syncular.signed-urls.*} and {@code syncular.leases.*}
 * into the engine's §5.4 segment URLs and §7.3 auth leases (or their off values), with the keys they need.
 * {@link dev.syncular.server.boot.RealtimeParts} and {@link dev.syncular.server.boot.Realtime} are what a hub is
 * built from and what it comes with. {@link dev.syncular.server.boot.StorageProducer} is the pod's storage bean:
 * {@code boot} is the one package besides the PostgreSQL implementations ({@code storage.postgres},
 * {@code segments.postgres}, {@code blobs.postgres}) that names them or a Vert.x SQL type; everyone else injects a
 * storage role. {@link dev.syncular.server.boot.ReplicaProducer} also provides the remote operations'
 * {@code storage.QueryReads}; {@link dev.syncular.server.boot.SignalListeners} builds realtime hubs' listening
 * connections ({@code storage.SignalListener}) from the pool's connection options, and
 * {@link dev.syncular.server.boot.SchemaStores} the stores of a PostgreSQL schema of their own (the conformance
 * host's instances: storage, segment and blob stores, the storage's backup, the schema's removal).
 * Every CDI producer of the pod is here ({@code ArchitectureTest}): {@link dev.syncular.server.boot.EngineProducer}
 * and {@link dev.syncular.server.boot.ReplicaProducer} (schema window, stores, engine, realtime hub and channel, blob
 * service, read replicas, remote operations' reads), {@link dev.syncular.server.boot.AuthProducer} (the built-in
 * authentication, JWT or development), {@link dev.syncular.server.boot.PolicyProducer} (the write policy),
 * {@link dev.syncular.server.boot.OperationsProducer} (REMOTE.md registries, executor and watches) and
 * {@link dev.syncular.server.boot.ObservabilityProducer} (tracing, the meters' {@code uri} tags); and
 * {@link dev.syncular.server.boot.StartupSequence} is the pod's start-up written as one ordered list of steps
 * (checks, schema and storage migration, stores, operation registries, realtime) instead of observer priorities
 * spread over packages. {@link dev.syncular.server.boot.ServerMain} is the process entry point: the server, or a
 * one-shot command of the same artifact.
 *
 * <p>The conformance host builds an engine and a hub per instance with the same {@link
 * dev.syncular.server.boot.Assembly} and {@link dev.syncular.server.boot.SchemaStores}. It sits above every package
 * it assembles ({@code sync}, {@code realtime}, {@code http}, the storage implementations, {@code observability}, {@code health}, {@code jobs}) and below
 * {@code conformance} only.
 *
 * <p>Configuration (issue 46: each feature maps its own {@code syncular.*} group): {@code SchemaConfig}
 * ({@code syncular.schema.*}, the served schema and its §9 window) and {@code ConfigChecks}, which runs every
 * mapping's one cross-field check first at start-up.
 */
package dev.syncular.server.boot;
