/**
 * The deployment's background jobs, each run on one pod per interval through a database claim
 * ({@code JobClaims}): the §4.6 pruning pass ({@code PruningJob}, {@code Pruner}) and its retention policy
 * (commit log and §2.3 push results), the §5.1 segment expiry and the §5.9.2 blob orphan sweep; the §2.4
 * backfill of checkpoint columns ({@code Backfills}, {@code ColumnFill}) and its one-shot command
 * ({@code BackfillCommand}); the one-shot move of a plain commit log to hash partitions
 * ({@code RepartitionLogCommand}); and {@code TenantLoadJob}, which refreshes this pod's loudest-tenant gauges and
 * publishes them to the shared storage for the console, every pod on its own.
 *
 * <p>Part of the Quarkus edge: it depends on {@code storage}, {@code segments}, {@code sync},
 * {@code observability}, {@code health} and {@code config}; the admin API, the console and the start-up
 * command read it.
 */
package dev.syncular.server.jobs;
