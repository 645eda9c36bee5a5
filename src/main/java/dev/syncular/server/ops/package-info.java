/**
 * Operations around the protocol engine: the §4.6 pruning pass and its retention policy (commit log and §2.3
 * push results), the §5.1 segment expiry and §5.9.2 blob orphan sweep jobs — each run on one pod of the
 * deployment per interval through a database claim ({@code JobClaims}) — the backfill-checkpoint API (§2.4),
 * the liveness, startup and serve-gate readiness checks with their metrics (a readiness failure is logged with
 * its cause), and the scope-resolver failure meter and log ({@code ScopeResolverFailures}, §3.2).
 *
 * <p>Part of the Quarkus edge: it may depend on {@code storage}, {@code storage.postgres},
 * {@code segments}, {@code blobs}, {@code sync} and {@code config}; nothing below depends on it.
 */
package dev.syncular.server.ops;
