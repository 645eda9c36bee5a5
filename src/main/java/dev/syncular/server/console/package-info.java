/**
 * The operator console at {@code <mount>/console}: server-rendered pages (Qute templates under
 * {@code templates/}, the style sheet and two small ES modules under {@code console/}, all from the jar — no CDN,
 * no font, no Node build) over the same storage and engine calls as the admin API, there exactly when the admin
 * API is ({@code syncular.admin.token}). {@code ConsoleAccess} is the door: sign-in with the admin token, sessions
 * stored hashed in the shared storage (every pod sees them) behind an {@code HttpOnly}, {@code SameSite=Strict}
 * cookie that expires, the session's CSRF token checked on every action, an audit line per request;
 * {@code ConsoleHeaders} puts a strict Content-Security-Policy on every console response (its filters bound to the
 * console's pages by {@code ConsoleRoute}). Pages: the overview
 * (serve gate, pending checkpoints, sockets, errors and the 15-minute series of {@code MeterRing}), partitions
 * (clients with their cursor lag; epoch rotation and pruning behind a confirmation), tenants (the loudest partitions
 * of the last minute summed over the pods, {@code jobs.TenantLoadJob}), stalest clients (the answering pod's connected
 * clients behind now and what holds them, {@code realtime.StalestClients}), the row inspector (coverage
 * by registered subscriptions), checkpoints (declare with a warning, activate), reactions (retry a dead letter),
 * live events (server-sent events) and remote operations.
 *
 * <p>The top of the edge: it may depend on every package below, {@code http} included (the admin API's audit
 * category, identifier checks and body reader); nothing depends on it.
 *
 * <p>Configuration (issue 46: each feature maps its own {@code syncular.*} group): {@code ConsoleConfig} ({@code syncular.admin.console.*}, the console's sessions).
 */
package dev.syncular.server.console;
