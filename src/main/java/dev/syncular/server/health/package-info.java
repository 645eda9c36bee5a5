/**
 * The pod's health checks (SmallRye Health on the management interface): liveness; the start-up check that
 * the §2.4 schema and storage migration finished ({@code StorageReadiness}, set by the start-up sequence); and
 * the serve-gate readiness check, DOWN exactly when {@code POST /sync} would answer
 * {@code sync.schema_not_ready} (§2.4: a stored schema newer than this build, or a pending checkpoint this pod
 * did not declare) or the storage cannot be read, so Kubernetes takes the pod out of rotation on its own. A
 * readiness failure is logged with its cause.
 *
 * <p>Part of the Quarkus edge: it depends on {@code storage}, {@code sync} and {@code observability}.
 */
package dev.syncular.server.health;
