/**
 * Operations around the protocol engine: the §4.6 pruning pass and its retention policy (commit log and §2.3
 * push results), the §5.1 segment expiry and §5.9.2 blob orphan sweep jobs — each run on one pod of the
 * deployment per interval through a database claim ({@code JobClaims}) — the backfill-checkpoint API (§2.4),
 * the liveness, startup and serve-gate readiness checks with their metrics (a readiness failure is logged with
 * its cause), and the scope-resolver failure meter and log ({@code ScopeResolverFailures}, §3.2).
 *
 * <p>Metrics (Micrometer, exported by Prometheus on {@code /q/metrics} of the management interface;
 * {@code HttpUriTags} keeps the {@code uri} tag of the HTTP server meters to route templates), one bean per
 * concern, every tag from a
 * closed set (never an actor, client, partition or row id; the one exception below): {@code SyncMetrics} — the engine's rounds, pushed
 * commits, pulled rows by lane, segment bytes by delivery and SQLite images, told through the engine's
 * {@link dev.syncular.server.sync.SyncObserver} seam; {@code ServeGateMetrics} (§2.4); {@code BlobMetrics}
 * (§5.9 bytes through the blob routes); {@code PruningMetrics} (§4.6); {@code ReactionMetrics} (§6.9 reactions planned — through
 * the seam — delivered, retried and dead-lettered by type, the delivery call's latency and the undelivered count
 * the delivery worker reads on its pass); {@code WebhookMetrics} (outbound webhook calls by endpoint and outcome,
 * their latency, circuit-breaker state, calls in flight and the pool bound); {@code FairnessMetrics} (rounds refused
 * by a fairness limit, by limit, and rounds in flight — the engine's {@code RoundAdmission} listener).
 * The one exception to closed tag sets, bounded instead: the loudest tenants — {@code TenantLoad} counts per
 * partition, over the last minute and in bounded memory, database time, committed bytes (both through the seam),
 * fan-out bytes (told by the realtime hub) and refusals by reason (the admission listener, the seam and the hub);
 * {@code TenantLoadJob} refreshes {@code TenantMetrics}, gauges tagged with only this pod's top N partitions, and
 * publishes them to the shared storage ({@code TenantLoadStorage}) for the console, every pod on its own.
 * {@code OperationalEvents} is the admin
 * API's per-pod, in-memory event tail (rejections, conflicts, gate refusals, prunes), also fed by the seam.
 * {@code TracingProducer} hands the engine and the edges their {@code sync.Tracing} (off unless
 * {@code quarkus.otel.sdk.disabled=false}).
 *
 * <p>Part of the Quarkus edge: it may depend on {@code storage}, {@code storage.postgres},
 * {@code segments}, {@code blobs}, {@code sync} and {@code config}; nothing below depends on it.
 *
 * <p>Configuration (issue 46: each feature maps its own {@code syncular.*} group): {@code PruningConfig} ({@code syncular.pruning.*}, §4.6), {@code TenantsConfig} ({@code syncular.tenants.*}) and {@code AdminConfig} ({@code syncular.admin.*}: the admin token, its sign-in throttle, the event ring), each checked by the constraints on its methods.
 */
package dev.syncular.server.ops;
