/**
 * What an operator sees of a running pod: metrics, traces, the event tail and the tenant-load accounting.
 *
 * <p>Metrics (Micrometer, exported by Prometheus on {@code /q/metrics} of the management interface;
 * {@code HttpUriTags} keeps the {@code uri} tag of the HTTP server meters to route templates), one bean per
 * concern, every tag from a closed set (never an actor, client, partition or row id; the one exception below):
 * {@code SyncMetrics} — the engine's rounds, pushed commits, pulled rows by lane, segment bytes by delivery and
 * SQLite images, told through the engine's {@link dev.syncular.server.sync.SyncObserver} seam;
 * {@code ServeGateMetrics} (§2.4); {@code BlobMetrics} (§5.9 bytes through the blob routes);
 * {@code PruningMetrics} (§4.6); {@code ReactionMetrics} (§6.9 reactions planned — through the seam —
 * delivered, retried and dead-lettered by type, the delivery call's latency and the undelivered count);
 * {@code WebhookMetrics} (outbound webhook calls by endpoint and outcome, their latency, circuit-breaker state,
 * calls in flight and the pool bound); {@code FairnessMetrics} (rounds refused by a fairness limit, by limit,
 * and rounds in flight — the engine's {@code RoundAdmission} listener); {@code OperationMetrics} (REMOTE.md
 * calls and watches); {@code ReplicaMetrics} and {@code RecentCommitMetrics}; {@code ScopeResolverFailures}, the
 * §3.2 resolver's failure meter and log.
 *
 * <p>The one exception to closed tag sets, bounded instead: the loudest tenants. {@code TenantLoad} counts per
 * partition, over the last minute and in bounded memory, database time, committed bytes (both through the
 * seam), fan-out bytes (told by the realtime hub) and refusals by reason; {@code TenantMetrics} holds the gauges
 * tagged with only this pod's top N partitions (refreshed by {@code jobs.TenantLoadJob}).
 *
 * <p>{@code VisibilityLag}: the visibility lag of every commit at every subscribed client it reaches on this pod — its
 * delta handed to the socket (told by the realtime hub) or the pull that passes it (through the seam) — as
 * histograms with a bucket boundary at the objective of {@code SloConfig} ({@code syncular.slo.*}), the pulls of clients
 * that were away kept apart. {@code TopGauges}: gauges whose series are a bounded top N that changes (the loudest
 * tenants, {@code realtime.StalestClients}).
 *
 * <p>{@code OperationalEvents} is the admin API's per-pod, in-memory event tail (rejections, conflicts, gate
 * refusals, prunes), also fed by the seam. The composition root ({@code boot.ObservabilityProducer}) hands the engine and the edges their
 * {@code sync.Tracing} (off unless {@code quarkus.otel.sdk.disabled=false}).
 *
 * <p>Part of the Quarkus edge: it depends on the storage roles ({@code storage}; a transient storage failure is
 * classified by {@code storage.StorageBusy}, never by the PostgreSQL storage), {@code sync}, {@code operations} and
 * {@code config}; the health checks, jobs, policy and the edges above read it.
 */
package dev.syncular.server.observability;
