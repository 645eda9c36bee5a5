package dev.syncular.server.boot;

import dev.syncular.server.realtime.RealtimeChannel;
import dev.syncular.server.realtime.RealtimeHub;

/** A realtime hub (§8) and the channel that serves its sockets, as {@link Assembly#realtime} built them. */
public record Realtime(RealtimeHub hub, RealtimeChannel channel) {}
