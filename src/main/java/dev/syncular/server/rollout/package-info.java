/**
 * Schema rollouts: the plan of a schema change before it runs ({@code SchemaChangePlanner}) — whether it is allowed,
 * the storage's statements with their locks and estimated times, the backfills, the §9 window it implies, the clients
 * it affects and the serve gate during the rollout — decided by the same code that applies a schema at start-up.
 *
 * <p>Depends on {@code schema}, {@code storage} and {@code wire}; the admin API and the console read it.
 */
package dev.syncular.server.rollout;
