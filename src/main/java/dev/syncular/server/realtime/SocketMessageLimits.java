package dev.syncular.server.realtime;

import dev.syncular.server.config.SyncularConfig;
import dev.syncular.server.operations.OperationsConfig;
import io.quarkus.vertx.http.HttpServerOptionsCustomizer;
import io.vertx.core.http.HttpServerOptions;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

/**
 * The inbound message sizes of the pod's sockets, set from the caps they serve: a §8.7 socket round may be as large
 * as a {@code POST /sync} body ({@code syncular.max-request-bytes}), sent as one WebSocket message or as many, each
 * of them in one frame or in fragments; a REMOTE.md §6 watch message up to
 * {@code syncular.operations.watch.max-message-bytes} is read and, above it, answered
 * {@code operation.invalid_request} (docs/OPERATIONS.md).
 *
 * <p>The transport (Vert.x over Netty) reads a message whole before the endpoint sees it, under two server-wide
 * limits ({@code quarkus.websockets-next.server.max-message-size} and {@code max-frame-size}, whose defaults of
 * 256 KiB and 64 KiB this sets — leave them unset):
 *
 * <ul>
 *   <li>a message holds at most {@link #maxMessageBytes} — a round's cap and its channel tag byte, or the watch
 *       cap and one byte if that is larger. A message the transport cannot hold is dropped by it, and reported to
 *       the endpoint ({@link #overflowed}), which answers it: 1009 with its reason on the sync socket, {@code
 *       operation.invalid_request} on the watch socket — never a silent drop;
 *   <li>a frame holds at most {@link #maxFrameBytes}: the largest message and {@value #FRAME_SLACK_BYTES} bytes
 *       more, so a round sent as one frame a little past the cap still reaches the endpoint's answer. A frame
 *       declared larger is refused at its header, before a byte of it is buffered; the transport then drops the
 *       connection without a close frame (the client sees 1006).
 * </ul>
 *
 * A round's bytes are counted against its cap and the pod's buffer budget ({@code round.RequestIntake}, the intake
 * {@code POST /sync} feeds too) as each message arrives; what the transport holds while a message arrives is bounded by these limits per connection.
 */
@Singleton
public class SocketMessageLimits implements HttpServerOptionsCustomizer {
    /** RFC 6455 §7.4.1: a message too big to process. */
    public static final int MESSAGE_TOO_BIG = 1009;

    /** A frame may be this much larger than the largest message and still be read (its answer is the endpoint's). */
    static final int FRAME_SLACK_BYTES = 1 << 20;

    private final int maxMessageBytes;
    private final int maxFrameBytes;

    @Inject
    public SocketMessageLimits(SyncularConfig config, OperationsConfig operations) {
        this(
                config.maxRequestBytes().asLongValue(),
                operations.watch().maxMessageBytes().asLongValue());
    }

    SocketMessageLimits(long maxRequestBytes, long maxWatchMessageBytes) {
        long message = Math.max(maxRequestBytes + 1, maxWatchMessageBytes + 1);
        if (message > Integer.MAX_VALUE - 2L * FRAME_SLACK_BYTES) {
            throw new IllegalArgumentException("syncular.max-request-bytes is too large for a socket message");
        }
        this.maxMessageBytes = (int) message;
        this.maxFrameBytes = maxMessageBytes + FRAME_SLACK_BYTES;
    }

    /** The largest message the transport holds for an endpoint. */
    public int maxMessageBytes() {
        return maxMessageBytes;
    }

    /** The largest frame the transport reads. */
    public int maxFrameBytes() {
        return maxFrameBytes;
    }

    @Override
    public void customizeHttpServer(HttpServerOptions options) {
        apply(options);
    }

    @Override
    public void customizeHttpsServer(HttpServerOptions options) {
        apply(options);
    }

    private void apply(HttpServerOptions options) {
        // never lower: a larger value set explicitly (quarkus.websockets-next.server.*) stays
        options.setMaxWebSocketMessageSize(Math.max(options.getMaxWebSocketMessageSize(), maxMessageBytes));
        options.setMaxWebSocketFrameSize(Math.max(options.getMaxWebSocketFrameSize(), maxFrameBytes));
    }

    /**
     * Whether {@code error}, reported by the transport for a connection, says that it dropped a message larger than
     * {@code max-message-size} (the rest of that message is dropped too; the connection itself goes on). Vert.x
     * reports it as an {@link IllegalStateException} naming the limit, and nothing else that way.
     */
    public static boolean overflowed(Throwable error) {
        return error instanceof IllegalStateException
                && error.getMessage() != null
                && error.getMessage().contains("overflow max message size");
    }

    /** Whether the dropped message ({@link #overflowed}) was a text message (else binary). */
    public static boolean overflowedText(Throwable error) {
        return error.getMessage().startsWith("Cannot process text frame");
    }

    /** The close reason of a §8.7 round over {@code maxRequestBytes} (at most 123 bytes, RFC 6455 §5.5). */
    static String roundTooLarge(long maxRequestBytes) {
        return "sync.invalid_request: sync round exceeds " + maxRequestBytes + " bytes";
    }
}
