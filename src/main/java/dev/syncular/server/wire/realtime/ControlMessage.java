package dev.syncular.server.wire.realtime;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.wire.WireException;

/**
 * A realtime JSON control message (SPEC.md §8.1–§8.6). Parse with {@link ControlMessages}; render
 * with {@link ControlMessages#render(ControlMessage)}.
 *
 * <p>Server → client events ({@code "event"} discriminator): {@link Hello}, {@link Wake},
 * {@link Heartbeat}, {@link PresenceFanout}, {@link PresenceError}. Client → server messages:
 * {@link Ack} ({@code "type":"ack"}) and {@link PresencePublish} (which the spec carries under
 * {@code "event":"presence"} with only {@code scopeKey} and {@code doc}). {@link Unknown} is a
 * tolerated event (or type) name that this implementation does not define.
 *
 * <p>All numeric fields are integers within ±(2^53−1). The constructors enforce the shape rules
 * (safe-integer range, non-null fields, non-empty presence scope keys, the presence
 * {@code doc}-present-iff-not-{@code leave} tie) and throw {@link WireException} with code
 * {@code sync.invalid_request} otherwise, so an instance is always renderable.
 *
 * <p><b>Presence documents</b> are kept as Jackson {@link ObjectNode}s (a host-defined JSON
 * object; {@code null} where the spec carries {@code doc: null}). The records copy the node on
 * construction and on access, so instances are effectively immutable and compare by deep JSON
 * equality.
 */
public sealed interface ControlMessage {

    /** Server → client connect handshake, {@code event: "hello"} (§8.1). */
    record Hello(
            long protocolVersion,
            String sessionId,
            String actorId,
            String clientId,
            long cursor,
            long latestCursor,
            boolean requiresSync,
            long timestamp)
            implements ControlMessage {
        public Hello {
            ControlMessages.checkSafe(protocolVersion, "hello.data.protocolVersion");
            ControlMessages.checkNotNull(sessionId, "hello.data.sessionId");
            ControlMessages.checkNotNull(actorId, "hello.data.actorId");
            ControlMessages.checkNotNull(clientId, "hello.data.clientId");
            ControlMessages.checkSafe(cursor, "hello.data.cursor");
            ControlMessages.checkSafe(latestCursor, "hello.data.latestCursor");
            ControlMessages.checkSafe(timestamp, "hello.data.timestamp");
        }
    }

    /**
     * Server → client wake-up, {@code event: "sync"} (§8.3). {@code requiresPull} is always the
     * literal {@code true} on the wire and is therefore not a component.
     */
    record Wake(long cursor, WakeReason reason, long timestamp) implements ControlMessage {
        public Wake {
            ControlMessages.checkSafe(cursor, "sync.data.cursor");
            ControlMessages.checkNotNull(reason, "sync.data.reason");
            ControlMessages.checkSafe(timestamp, "sync.data.timestamp");
        }
    }

    /** Server → client heartbeat, {@code event: "heartbeat"} (§8.5). */
    record Heartbeat(long timestamp) implements ControlMessage {
        public Heartbeat {
            ControlMessages.checkSafe(timestamp, "heartbeat.data.timestamp");
        }
    }

    /** Client → server delta acknowledgement, {@code {"type":"ack","cursor":N}} (§8.2). */
    record Ack(long cursor) implements ControlMessage {
        public Ack {
            ControlMessages.checkSafe(cursor, "ack.cursor");
        }
    }

    /**
     * Client → server presence publish, {@code event: "presence"} with {@code scopeKey} and
     * {@code doc} (§8.6.2). A {@code null} doc is a leave.
     */
    record PresencePublish(String scopeKey, ObjectNode doc) implements ControlMessage {
        public PresencePublish {
            ControlMessages.checkScopeKey(scopeKey);
            doc = doc == null ? null : doc.deepCopy();
        }

        /** A copy of the published document, or {@code null} for a leave. */
        @Override
        public ObjectNode doc() {
            return doc == null ? null : doc.deepCopy();
        }

        public boolean isLeave() {
            return doc == null;
        }
    }

    /**
     * Server → client presence fanout, {@code event: "presence"} with a {@code kind} (§8.6.2).
     * {@code doc} is an object for {@code join}/{@code update} and {@code null} for {@code leave}.
     */
    record PresenceFanout(
            String scopeKey, PresenceKind kind, String actorId, String clientId, ObjectNode doc, long timestamp)
            implements ControlMessage {
        public PresenceFanout {
            ControlMessages.checkScopeKey(scopeKey);
            ControlMessages.checkNotNull(kind, "presence.data.kind");
            ControlMessages.checkNotNull(actorId, "presence.data.actorId");
            ControlMessages.checkNotNull(clientId, "presence.data.clientId");
            if (kind == PresenceKind.LEAVE && doc != null) {
                throw WireException.invalid("presence leave must carry doc: null");
            }
            if (kind != PresenceKind.LEAVE && doc == null) {
                throw WireException.invalid("presence join/update must carry a doc object");
            }
            ControlMessages.checkSafe(timestamp, "presence.data.timestamp");
            doc = doc == null ? null : doc.deepCopy();
        }

        /** A copy of the peer's document, or {@code null} for a leave. */
        @Override
        public ObjectNode doc() {
            return doc == null ? null : doc.deepCopy();
        }
    }

    /**
     * Server → client publisher-directed presence error, {@code event: "presence"} with an
     * {@code error} (§8.6.2).
     */
    record PresenceError(String scopeKey, PresenceErrorCode error, long timestamp) implements ControlMessage {
        public PresenceError {
            ControlMessages.checkScopeKey(scopeKey);
            ControlMessages.checkNotNull(error, "presence.data.error");
            ControlMessages.checkSafe(timestamp, "presence.data.timestamp");
        }
    }

    /**
     * A tolerated control message whose discriminator value (event name, or {@code type} for a
     * client → server message) is not defined by §8 (forward compatibility, §8.1). Not renderable.
     */
    record Unknown(String name) implements ControlMessage {
        public Unknown {
            ControlMessages.checkNotNull(name, "control message name");
        }
    }
}
