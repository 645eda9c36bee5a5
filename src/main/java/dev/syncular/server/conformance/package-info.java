/**
 * The conformance host: a registry of isolated server instances — each a real engine over real PostgreSQL
 * storage and segment store in a PostgreSQL schema of its own — and the HTTP surface that drives them
 * through the same {@code /sync}, segment and realtime (§8, a hub per instance) bindings as production, with the host-controlled doubles
 * (allowed scopes, a failing resolver, a virtual clock). Instance schemas compile against, and pushes merge
 * {@code crdt} columns with, the production CRDT merger registry (§5.10.2; capability {@code crdt}).
 * The optional capabilities {@code leases} (§7.3, a resolver outage signal and lease revocation),
 * {@code backup-restore} ({@code StorageBackup}: the instance's storage captured and restored, then its log epoch
 * rotated, §2.1) and {@code idempotency-fault} (§6.3) run the production engine too. Enabled only by
 * {@code syncular.conformance.enabled=true}.
 *
 * <p>Part of the Quarkus edge, on top: its engines, hubs and blob services come from the composition root
 * ({@code boot}), like the pod's; it may depend on every lower package and on its edge peer {@code http}
 * (the sync, segment and body-reading resources); nothing depends on it.
 *
 * <p>Configuration (issue 46: each feature maps its own {@code syncular.*} group): {@code ConformanceConfig} ({@code syncular.conformance.*}).
 */
package dev.syncular.server.conformance;
