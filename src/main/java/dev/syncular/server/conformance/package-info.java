/**
 * The conformance host: a registry of isolated server instances — each a real engine over real PostgreSQL
 * storage and segment store in a PostgreSQL schema of its own — and the HTTP surface that drives them
 * through the same {@code /sync}, segment and realtime (§8, a hub per instance) bindings as production, with the host-controlled doubles
 * (allowed scopes, a failing resolver, a virtual clock). Instance schemas compile against, and pushes merge
 * {@code crdt} columns with, the production CRDT merger registry (§5.10.2; capability {@code crdt}).
 * The optional capabilities {@code leases} (§7.3, a resolver outage signal and lease revocation),
 * {@code backup-restore} ({@code storage.StorageBackup}: the instance's storage captured and restored, then its log
 * epoch rotated, §2.1) and {@code idempotency-fault} (§6.3: {@code IdempotencyLookupFault}, a decorator of the
 * instance's storage over {@code ForwardingSyncStorage} and {@code ForwardingPushTx}, whose next locked idempotency
 * lookup finds the record unreadable) run the production engine too. Enabled only by
 * {@code syncular.conformance.enabled=true}.
 *
 * <p>On top of every package: a separate host assembled by the composition root's code ({@code boot}: its engines,
 * hubs, blob services, listening connections and per-schema stores) with options of its own, served through
 * {@code http}'s sync, segment and body-reading resources. It names no PostgreSQL implementation and no SQL client
 * type; nothing depends on it.
 *
 * <p>Configuration (issue 46: each feature maps its own {@code syncular.*} group): {@code ConformanceConfig}
 * ({@code syncular.conformance.*}).
 */
package dev.syncular.server.conformance;
