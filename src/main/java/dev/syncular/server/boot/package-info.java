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
 * built from and what it comes with. {@link dev.syncular.server.boot.StorageProducer} is the pod's storage bean, the
 * one place besides {@code storage.postgres} that names the PostgreSQL storage: everyone else injects a role.
 * {@link dev.syncular.server.boot.EngineProducer} and {@link dev.syncular.server.boot.ReplicaProducer} are the pod's
 * CDI producers (schema window, stores, engine, realtime hub and channel, blob service, read replicas), and
 * {@link dev.syncular.server.boot.StartupSequence} is the pod's start-up written as one ordered list of steps
 * (checks, schema and storage migration, stores, operation registries, realtime) instead of observer priorities
 * spread over packages.
 *
 * <p>The conformance host builds an engine and a hub per instance with the same {@link
 * dev.syncular.server.boot.Assembly}. It sits above every package it assembles ({@code sync}, {@code realtime}, the
 * storage adapters, {@code ops}) and below {@code http}, {@code cli} and {@code conformance}.
 *
 * <p>Configuration (issue 46: each feature maps its own {@code syncular.*} group): {@code SchemaConfig} ({@code syncular.schema.*}, the served schema and its §9 window) and {@code ConfigChecks}, which runs every mapping's one cross-field check first at start-up.
 */
package dev.syncular.server.boot;
