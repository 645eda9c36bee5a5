/**
 * The realtime binding (§8) on {@code quarkus-websockets-next}.
 *
 * <ul>
 *   <li>{@link dev.syncular.server.realtime.RealtimeUpgrade}: the upgrade at {@code <mount>/realtime?clientId=…},
 *       authenticated like {@code POST /sync} (§8.1; §10.1 JSON on refusal, never a half-open socket).</li>
 *   <li>{@link dev.syncular.server.realtime.RealtimeChannel}: one connection's messages — {@code hello}, acks
 *       (§8.2), presence publishes (§8.6), socket rounds (§8.7) — behind any socket endpoint
 *       ({@link dev.syncular.server.realtime.RealtimeEndpoint} for the pod, the conformance host's per
 *       instance). Its socket rounds are the socket framing of the round handler in {@code round}
 *       ({@code SocketRound}: the {@code 0x01} tag, no pipelining, the in-band failure). It resolves a connection's registrations through the scope resolver, or during a
 *       signalled outage through the client's valid §7.3 lease, as a round does.</li>
 *   <li>{@link dev.syncular.server.realtime.RealtimeSession}: registrations, §8.2 contiguity, suppression and
 *       acks, §8.7 interleaving (no delta while a round's response streams; a round's commits are wake-ups), §8.3
 *       wake-ups — {@code reset-required} when the partition's log epoch is rotated (§2.1), which
 *       every pod hears on its commit channel.</li>
 *   <li>{@link dev.syncular.server.realtime.OutboundBudget}: a connection's §8.7 outbound byte budget — deltas past
 *       it become wake-ups, a connection that does not drain is closed with 4290.</li>
 *   <li>{@link dev.syncular.server.realtime.SocketMessageLimits}: the inbound message and frame sizes of the pod's
 *       sockets, set from {@code syncular.max-request-bytes} (a §8.7 round as large as a {@code POST /sync} body, in
 *       one message or many) and the watch message cap; a message the transport drops for its size is answered
 *       (1009 with its reason, {@code operation.invalid_request} on the watch socket).</li>
 *   <li>{@link dev.syncular.server.realtime.RealtimeHub}: the coordinator of the pod's realtime parts below — builds,
 *       starts and drains them, and is what the channel and the composition see; it tells each partition's delta
 *       bytes and held presence publishes to a {@link dev.syncular.server.realtime.RealtimeHub.PartitionTraffic}
 *       (the loudest tenants, set by the composition's producer).</li>
 *   <li>{@link dev.syncular.server.realtime.SessionSet}: the hub's session set (§8.6.4), the pod's open
 *       connections by partition — joins and leaves (§8.1), the open count, the socket rounds in flight.</li>
 *   <li>{@link dev.syncular.server.realtime.CommitNotifications}: the hub's one listening connection to the
 *       storage's signal channels (the storage role {@code storage.SignalListener}, which owns the connection, its
 *       failover and reconnects with backoff; a re-{@code LISTEN} wakes every local socket, spread in time, §8.3,
 *       §8.4) — the commit channel's post-commit notifications (§8.2: one commit or a group's range) and epoch
 *       rotations (§2.1), handed to the
 *       {@link dev.syncular.server.realtime.RealtimeHub.CommitListener}s and the delta delivery, the control
 *       channel's operator disconnects, the presence channel.</li>
 *   <li>{@link dev.syncular.server.realtime.DeltaDelivery}: §8.2 fan-out — each notified commit read once in a
 *       {@link dev.syncular.server.realtime.FanoutReads} slot, per-session deltas or wake-ups (suppression, the
 *       serve gate, the partition's fan-out share), a partition's deliveries serialised in order; each distinct
 *       delta encoded once per fan-out ({@link dev.syncular.server.realtime.FanoutDeltas}, bounded in bytes per
 *       pod).</li>
 *   <li>{@link dev.syncular.server.realtime.Heartbeats}: §8.5 heartbeats and idle reaping, judged by
 *       {@link dev.syncular.server.realtime.SilenceWatch} (monotonic silence, no reaping after a stall of the
 *       pod).</li>
 *   <li>{@link dev.syncular.server.realtime.PresenceRelay}: §8.6 presence of the pod's connections (publishes held
 *       past a connection's {@link dev.syncular.server.realtime.PresenceRate}) and of the other pods into the
 *       registry; this pod's {@code hello}, {@code alive} and {@code bye}.</li>
 *   <li>{@link dev.syncular.server.realtime.PresenceRegistry} and {@link dev.syncular.server.realtime.PresenceBus}:
 *       §8.6 presence, in memory, shared between pods on the storage's presence channel
 *       ({@code storage.RealtimeSignals#publishPresence}).</li>
 *   <li>{@link dev.syncular.server.realtime.CredentialLifetime}: a socket ends (4401) when the credential of its
 *       upgrade stops being accepted (§8.1, §10.2 {@code sync.auth_required});
 *       {@link dev.syncular.server.realtime.UpgradeToken}: a browser's bearer token from the upgrade's query
 *       (RFC 6750 §2.3) or a cookie; {@link dev.syncular.server.realtime.OperatorDisconnects}: the admin
 *       disconnect of an actor's or a client's sockets (4403), heard by every pod on the storage's control
 *       channel.</li>
 *   <li>{@link dev.syncular.server.realtime.StalestClients}: the pod's stalest connected clients and partitions now
 *       ({@link dev.syncular.server.realtime.Stalest}: the age of the oldest commit each is owed and the
 *       {@link dev.syncular.server.realtime.Staleness} that holds it — the partition's pending fan-outs,
 *       {@link dev.syncular.server.realtime.PendingFanouts}, or what a session was owed as a wake-up), as bounded
 *       gauges and for the admin API and the console.</li>
 *   <li>{@link dev.syncular.server.realtime.SocketDrain}: the drain's concurrent 1001 closes, bounded by the
 *       grace; {@link dev.syncular.server.realtime.RealtimeFailures}: failures that are not propagated, logged
 *       and counted by kind.</li>
 *   <li>{@link dev.syncular.server.realtime.PodRealtime}: the pod's hub and channel (built by the composition
 *       root, {@code boot}), its limits (§8.8) and lifecycle; {@link dev.syncular.server.realtime.RealtimeReadinessCheck} ties readiness to it.</li>
 *   <li>{@link dev.syncular.server.realtime.OperationWatchUpgrade} and
 *       {@link dev.syncular.server.realtime.OperationWatchEndpoint}: the REMOTE.md §6 watch socket at
 *       {@code <mount>/operations/realtime}, authenticated like the sync socket;
 *       {@link dev.syncular.server.realtime.PodOperationWatches}: the pod's watches ({@code operations}) on the
 *       hub's commit channel ({@link dev.syncular.server.realtime.RealtimeHub.CommitListener}).</li>
 * </ul>
 *
 * <p>Nothing about a connection lives outside the pod that holds it; pods share only the database (commit,
 * presence and control notifications), reached through the storage roles {@code storage.RealtimeSignals} and
 * {@code storage.SignalListener} (the PostgreSQL ones are built by {@code boot}); it names no SQL client type. Below
 * the edge ({@code http}) and the composition root ({@code boot}, which assembles it): may depend on every lower
 * package (the round handler in {@code round} among them, {@code auth}, {@code config}, {@code observability} for the
 * scope-resolver failure metrics, the visibility objective and the bounded gauges); {@code boot}, {@code http} and the conformance host use it.
 *
 * <p>Configuration (issue 46: each feature maps its own {@code syncular.*} group): {@code RealtimeConfig}
 * ({@code syncular.realtime.*}, §8), checked by the constraints on its methods.
 */
package dev.syncular.server.realtime;
