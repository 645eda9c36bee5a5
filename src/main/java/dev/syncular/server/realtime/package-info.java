/**
 * The realtime binding (§8) on {@code quarkus-websockets-next}: the socket at {@code <mount>/realtime?clientId=…}
 * authenticated at upgrade like {@code POST /sync} ({@link dev.syncular.server.realtime.RealtimeUpgrade}, §8.1,
 * §10.1 JSON on refusal), the per-connection session ({@link dev.syncular.server.realtime.RealtimeSession}:
 * registrations, §8.2 contiguity, suppression and acks, §8.3 wake-ups) and the pod's hub
 * ({@link dev.syncular.server.realtime.RealtimeHub}: one PostgreSQL {@code LISTEN} connection per pod, each
 * notified commit read once and fanned out to the local sockets, §8.5 heartbeats). Nothing about a connection
 * lives outside the pod that holds it; pods share only the database.
 *
 * <p>Part of the Quarkus edge, on top: may depend on every lower package and on its edge peers {@code http},
 * {@code auth}, {@code config}, {@code ops} (scope-resolver failure metrics); nothing depends on it.
 */
package dev.syncular.server.realtime;
