package dev.syncular.server.realtime;

import io.quarkus.runtime.configuration.MemorySize;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.PositiveOrZero;
import java.time.Duration;
import java.util.Optional;

/** The realtime channel (§8): WebSocket at {@code <mount>/realtime}, deltas fanned out across pods. */
@ConfigMapping(prefix = "syncular.realtime")
public interface RealtimeConfig {
    /** Off: upgrades are refused (404 {@code sync.not_found}); commits are still announced for other pods. */
    @WithDefault("true")
    boolean enabled();

    /** Open sockets per pod; one more is refused with 429 {@code sync.websocket_connection_limit}. */
    @WithDefault("10000")
    int maxConnections();

    /**
     * The pod's memory for its sockets ({@code realtime.SocketBudget}): a fixed 16 KiB per open socket plus every
     * socket's outbound bytes not yet written. An upgrade with no room is refused 429
     * {@code sync.websocket_connection_limit} (reason {@code socket_budget}); a delta with no room becomes a
     * {@code catchup-required} wake-up. Unset = a quarter of the JVM's maximum heap.
     */
    Optional<MemorySize> socketBudget();

    /** An encoded delta above this size is replaced by a {@code delta-too-large} wake-up (§8.3). */
    @WithDefault("256K")
    MemorySize maxDeltaBytes();

    /**
     * Delta bytes per second one partition fans out to the sockets of this pod (2 s of burst); past it the
     * partition's deltas become {@code catchup_required} wake-ups and its clients pull. {@code 0} = off.
     */
    @WithDefault("32M")
    MemorySize fanoutBytesPerSecondPerPartition();

    /** Deltas sent but not yet acknowledged per connection; one more drops to a wake-up (§8.2). */
    @WithDefault("64")
    int maxUnackedDeltas();

    /** §8.5 heartbeat interval; a socket not heard from (any frame, pong included) for 3 intervals is closed. */
    @WithDefault("30s")
    Duration heartbeatInterval();

    /** Drain on shutdown: how long in-flight socket rounds may take before the remaining sockets close. */
    @WithDefault("10s")
    Duration shutdownGrace();

    /** §8.6 presence; off: {@code presence} events are ignored like any unknown event (§8.1). */
    @WithDefault("true")
    boolean presenceEnabled();

    /** §8.6.2 size cap of a published presence document (serialized JSON); over it: {@code presence.too_large}. */
    @WithDefault("16K")
    MemorySize maxPresenceBytes();

    /**
     * Presence publishes a second one connection may send on (issue 45); past it, and past {@link
     * #presenceBurst}, the newest document per scope key is held and sent when the rate allows. {@code 0}: no cap.
     */
    @WithDefault("10")
    @PositiveOrZero(message = "must be 0 or more")
    double presenceRate();

    /** Presence publishes one connection may send at once before {@link #presenceRate} applies. */
    @WithDefault("20")
    @Min(value = 1, message = "must be at least 1")
    int presenceBurst();

    /**
     * §8.7 backpressure: bytes a connection may have waiting to be written; a delta past it is replaced by a
     * {@code catchup-required} wake-up, and any message past twice it closes the connection (code 4290).
     */
    @WithDefault("256K")
    MemorySize outboundBufferBytes();

    /**
     * A connection whose outbound buffer has not emptied once this long after a delta was refused for the budget
     * is closed (code 4290).
     */
    @WithDefault("30s")
    Duration outboundStuckTimeout();

    /**
     * Browser authentication of the upgrade (RFC 6750 §2.3): the query parameter of the upgrade URL that may carry
     * the bearer token when the request has no {@code Authorization} header (a browser WebSocket cannot set
     * one). {@code off}: tokens are read from the header only.
     */
    @WithDefault("access_token")
    String tokenQueryParameter();

    /**
     * The cookie that may carry the bearer token of the upgrade when neither the {@code Authorization} header nor
     * the query parameter does. {@code off} (the default): no cookie is read.
     */
    @WithDefault("off")
    String tokenCookie();
}
