/**
 * Operations around the protocol engine: the §4.6 pruning pass and its retention policy, the §5.1
 * segment expiry and §5.9.2 blob orphan sweep jobs, the backfill-checkpoint API (§2.4), and the liveness,
 * startup and serve-gate readiness checks with their metrics.
 *
 * <p>Part of the Quarkus edge: it may depend on {@code storage}, {@code storage.postgres},
 * {@code segments}, {@code blobs}, {@code sync} and {@code config}; nothing below depends on it.
 */
package dev.syncular.server.ops;
