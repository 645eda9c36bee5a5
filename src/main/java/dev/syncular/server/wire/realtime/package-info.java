/**
 * The realtime channel's message formats (§8): the JSON control messages — handshake, wake-ups, acks,
 * heartbeat and presence (§8.1–§8.6) — with their parser and renderer, and the binary channel tags that
 * frame SSP2 deltas and socket sync rounds (§8.7). Formats only: the WebSocket endpoint and connection
 * registry live above.
 *
 * <p>Part of the bottom layer: it depends only on {@code wire} (for {@link
 * dev.syncular.server.wire.WireException}), the JDK and Jackson's tree model; no Quarkus, no I/O.
 */
package dev.syncular.server.wire.realtime;
