package dev.syncular.server.wire.realtime;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.wire.WireException;
import dev.syncular.server.wire.realtime.ControlMessage.Ack;
import dev.syncular.server.wire.realtime.ControlMessage.Heartbeat;
import dev.syncular.server.wire.realtime.ControlMessage.Hello;
import dev.syncular.server.wire.realtime.ControlMessage.PresenceError;
import dev.syncular.server.wire.realtime.ControlMessage.PresenceFanout;
import dev.syncular.server.wire.realtime.ControlMessage.PresencePublish;
import dev.syncular.server.wire.realtime.ControlMessage.Unknown;
import dev.syncular.server.wire.realtime.ControlMessage.Wake;
import java.math.BigDecimal;

/**
 * Parser and renderer for the realtime JSON control messages (SPEC.md §8.1–§8.6).
 *
 * <p>Uses only the Jackson tree model (no data binding), so it is native-image friendly.
 *
 * <p>Rules implemented:
 *
 * <ul>
 *   <li>Direction is carried by the discriminator key: server → client events carry
 *       {@code event}; the client → server ack carries {@code "type":"ack"}; the client → server
 *       presence publish carries {@code "event":"presence"} with {@code scopeKey} + {@code doc}.
 *   <li>An unknown event (or client {@code type}) name is tolerated and parses to {@link
 *       Unknown}; its {@code data} is not inspected.
 *   <li>A known event whose {@code data} is missing or of the wrong shape is a parse error.
 *   <li>Every numeric field is an integer within ±(2^53−1). An integral value written with a
 *       fraction or exponent ({@code 57.0}, {@code 5.7e1}) is accepted, as it is the same number
 *       in JavaScript; a fractional, out-of-range or non-finite number is a parse error.
 *   <li>Closed sets (wake reason, presence kind, presence error code) reject other strings;
 *       {@code requiresPull} must be the literal {@code true}.
 *   <li>Unknown extra fields at the root or inside {@code data} are ignored (as the reference
 *       TypeScript parser does). Input must be exactly one JSON value (trailing tokens rejected).
 * </ul>
 *
 * <p>All failures are {@link WireException} with code {@code sync.invalid_request} and a static
 * message that never contains ids, cursors or values.
 */
public final class ControlMessages {

    /** Largest magnitude of a realtime numeric field: 2^53 − 1. */
    public static final long MAX_SAFE_INTEGER = 9_007_199_254_740_991L;

    private static final BigDecimal MAX_SAFE_DECIMAL = BigDecimal.valueOf(MAX_SAFE_INTEGER);

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            // Keep floats exact (no double rounding) so integrality and range checks are exact and
            // host-defined presence documents round-trip their numbers faithfully.
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .configure(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES, false)
            .build();

    private static final JsonNodeFactory NODES = MAPPER.getNodeFactory();

    private ControlMessages() {}

    // ------------------------------------------------------------------ parsing

    /**
     * Parses a server → client control event ({@code hello}, {@code sync}, {@code heartbeat},
     * {@code presence} fanout or error). Unknown event names yield {@link Unknown}.
     *
     * @throws WireException {@code sync.invalid_request} when the text is not a JSON object with
     *     a string {@code event}, or a known event is malformed
     */
    public static ControlMessage parseServerMessage(String json) {
        ObjectNode root = readRoot(json);
        JsonNode eventNode = root.get("event");
        if (eventNode == null) {
            throw WireException.invalid("server control message lacks an event name");
        }
        String event = requireString(eventNode, "event must be a string");
        switch (event) {
            case "hello":
                return parseHello(requireData(root, "hello.data must be a JSON object"));
            case "sync":
                return parseWake(requireData(root, "sync.data must be a JSON object"));
            case "heartbeat":
                return new Heartbeat(requireInt(
                        requireData(root, "heartbeat.data must be a JSON object")
                                .get("timestamp"),
                        "heartbeat.data.timestamp"));
            case "presence":
                return parseServerPresence(requireData(root, "presence.data must be a JSON object"));
            default:
                return new Unknown(event);
        }
    }

    /**
     * Parses a client → server control message: {@code {"type":"ack","cursor":N}} or a presence
     * publish {@code {"event":"presence","data":{"scopeKey":…,"doc":{…}|null}}}. Other
     * {@code type} or {@code event} names yield {@link Unknown}. A message carrying both
     * {@code type} and {@code event} has no single direction and is malformed.
     *
     * @throws WireException {@code sync.invalid_request} when malformed
     */
    public static ControlMessage parseClientMessage(String json) {
        ObjectNode root = readRoot(json);
        JsonNode typeNode = root.get("type");
        JsonNode eventNode = root.get("event");
        if (typeNode != null && eventNode != null) {
            throw WireException.invalid("client control message carries both type and event");
        }
        if (typeNode != null) {
            String type = requireString(typeNode, "type must be a string");
            if (type.equals("ack")) {
                return new Ack(requireInt(root.get("cursor"), "ack.cursor"));
            }
            return new Unknown(type);
        }
        if (eventNode != null) {
            String event = requireString(eventNode, "event must be a string");
            if (event.equals("presence")) {
                ObjectNode data = requireData(root, "presence.data must be a JSON object");
                String scopeKey = requireScopeKey(data.get("scopeKey"));
                JsonNode doc = data.get("doc");
                if (doc == null || !(doc.isNull() || doc.isObject())) {
                    throw WireException.invalid("presence.data.doc must be a JSON object or null");
                }
                return new PresencePublish(scopeKey, doc.isNull() ? null : (ObjectNode) doc);
            }
            return new Unknown(event);
        }
        throw WireException.invalid("client control message lacks a type or event name");
    }

    private static Hello parseHello(ObjectNode d) {
        return new Hello(
                requireInt(d.get("protocolVersion"), "hello.data.protocolVersion"),
                requireString(d.get("sessionId"), "hello.data.sessionId must be a string"),
                requireString(d.get("actorId"), "hello.data.actorId must be a string"),
                requireString(d.get("clientId"), "hello.data.clientId must be a string"),
                requireInt(d.get("cursor"), "hello.data.cursor"),
                requireInt(d.get("latestCursor"), "hello.data.latestCursor"),
                requireBoolean(d.get("requiresSync"), "hello.data.requiresSync must be a boolean"),
                requireInt(d.get("timestamp"), "hello.data.timestamp"));
    }

    private static Wake parseWake(ObjectNode d) {
        JsonNode requiresPull = d.get("requiresPull");
        if (requiresPull == null || !requiresPull.isBoolean() || !requiresPull.booleanValue()) {
            throw WireException.invalid("sync.data.requiresPull must be the literal true");
        }
        String reasonText = requireString(d.get("reason"), "sync.data.reason must be a string");
        WakeReason reason = WakeReason.fromWire(reasonText);
        if (reason == null) {
            throw WireException.invalid("sync.data.reason is not a defined wake reason");
        }
        return new Wake(
                requireInt(d.get("cursor"), "sync.data.cursor"),
                reason,
                requireInt(d.get("timestamp"), "sync.data.timestamp"));
    }

    private static ControlMessage parseServerPresence(ObjectNode d) {
        String scopeKey = requireScopeKey(d.get("scopeKey"));
        boolean hasError = d.has("error");
        boolean hasKind = d.has("kind");
        if (hasError && hasKind) {
            throw WireException.invalid("presence event carries both kind and error");
        }
        if (hasError) {
            String text = requireString(d.get("error"), "presence.data.error must be a string");
            PresenceErrorCode code = PresenceErrorCode.fromWire(text);
            if (code == null) {
                throw WireException.invalid("presence.data.error is not a defined presence error");
            }
            return new PresenceError(scopeKey, code, requireInt(d.get("timestamp"), "presence.data.timestamp"));
        }
        if (!hasKind) {
            throw WireException.invalid("server presence event carries neither kind nor error");
        }
        String kindText = requireString(d.get("kind"), "presence.data.kind must be a string");
        PresenceKind kind = PresenceKind.fromWire(kindText);
        if (kind == null) {
            throw WireException.invalid("presence.data.kind is not a defined presence kind");
        }
        String actorId = requireString(d.get("actorId"), "presence.data.actorId must be a string");
        String clientId = requireString(d.get("clientId"), "presence.data.clientId must be a string");
        JsonNode doc = d.get("doc");
        ObjectNode docObject;
        if (kind == PresenceKind.LEAVE) {
            if (doc == null || !doc.isNull()) {
                throw WireException.invalid("presence leave must carry doc: null");
            }
            docObject = null;
        } else {
            if (doc == null || !doc.isObject()) {
                throw WireException.invalid("presence join/update must carry a doc object");
            }
            docObject = (ObjectNode) doc;
        }
        return new PresenceFanout(
                scopeKey,
                kind,
                actorId,
                clientId,
                docObject,
                requireInt(d.get("timestamp"), "presence.data.timestamp"));
    }

    private static ObjectNode readRoot(String json) {
        if (json == null) {
            throw WireException.invalid("control message is not valid JSON");
        }
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw WireException.invalid("control message is not valid JSON");
        }
        if (root == null || !root.isObject()) {
            throw WireException.invalid("control message must be a JSON object");
        }
        return (ObjectNode) root;
    }

    private static ObjectNode requireData(ObjectNode root, String message) {
        JsonNode data = root.get("data");
        if (data == null || !data.isObject()) {
            throw WireException.invalid(message);
        }
        return (ObjectNode) data;
    }

    private static String requireString(JsonNode node, String message) {
        if (node == null || !node.isTextual()) {
            throw WireException.invalid(message);
        }
        return node.textValue();
    }

    private static boolean requireBoolean(JsonNode node, String message) {
        if (node == null || !node.isBoolean()) {
            throw WireException.invalid(message);
        }
        return node.booleanValue();
    }

    private static String requireScopeKey(JsonNode node) {
        String key = requireString(node, "presence.data.scopeKey must be a string");
        checkScopeKey(key);
        return key;
    }

    /**
     * Reads an integer within ±(2^53−1). {@code field} is a static field path used in the error
     * message.
     */
    static long requireInt(JsonNode node, String field) {
        String message = field + " must be an integer within the safe range";
        if (node == null || !node.isNumber()) {
            throw WireException.invalid(message);
        }
        if (node.isIntegralNumber()) {
            if (!node.canConvertToLong()) {
                throw WireException.invalid(message);
            }
            long v = node.longValue();
            checkSafe(v, field);
            return v;
        }
        if (node.isDouble() || node.isFloat()) {
            double dv = node.doubleValue();
            if (Double.isNaN(dv) || Double.isInfinite(dv)) {
                throw WireException.invalid(message);
            }
        }
        BigDecimal d = node.decimalValue();
        // Range first: cheap even for huge exponents, and bounds the integrality check below.
        if (d.abs().compareTo(MAX_SAFE_DECIMAL) > 0) {
            throw WireException.invalid(message);
        }
        if (d.signum() != 0 && d.stripTrailingZeros().scale() > 0) {
            throw WireException.invalid(message);
        }
        return d.longValueExact();
    }

    // ------------------------------------------------------------------ invariants

    static void checkSafe(long v, String field) {
        if (v > MAX_SAFE_INTEGER || v < -MAX_SAFE_INTEGER) {
            throw WireException.invalid(field + " must be an integer within the safe range");
        }
    }

    static void checkNotNull(Object v, String field) {
        if (v == null) {
            throw WireException.invalid(field + " is required");
        }
    }

    static void checkScopeKey(String key) {
        if (key == null) {
            throw WireException.invalid("presence.data.scopeKey must be a string");
        }
        if (key.isEmpty()) {
            throw WireException.invalid("presence.data.scopeKey must be non-empty");
        }
    }

    // ------------------------------------------------------------------ rendering

    /**
     * Renders a control message as compact JSON text, fields in the spec's order. {@link Ack}
     * renders with the {@code type} discriminator; every other message with {@code event}.
     *
     * @throws WireException {@code sync.invalid_request} for {@link Unknown}, which carries no
     *     content to render
     */
    public static String render(ControlMessage message) {
        return toJson(toTree(message));
    }

    /** The message as a Jackson tree (field order as rendered by {@link #render}). */
    public static ObjectNode toTree(ControlMessage message) {
        ObjectNode root = NODES.objectNode();
        if (message instanceof Ack ack) {
            root.put("type", "ack");
            root.put("cursor", ack.cursor());
            return root;
        }
        ObjectNode data = NODES.objectNode();
        if (message instanceof Hello h) {
            root.put("event", "hello");
            data.put("protocolVersion", h.protocolVersion());
            data.put("sessionId", h.sessionId());
            data.put("actorId", h.actorId());
            data.put("clientId", h.clientId());
            data.put("cursor", h.cursor());
            data.put("latestCursor", h.latestCursor());
            data.put("requiresSync", h.requiresSync());
            data.put("timestamp", h.timestamp());
        } else if (message instanceof Wake w) {
            root.put("event", "sync");
            data.put("cursor", w.cursor());
            data.put("requiresPull", true);
            data.put("reason", w.reason().wire());
            data.put("timestamp", w.timestamp());
        } else if (message instanceof Heartbeat hb) {
            root.put("event", "heartbeat");
            data.put("timestamp", hb.timestamp());
        } else if (message instanceof PresencePublish p) {
            root.put("event", "presence");
            data.put("scopeKey", p.scopeKey());
            data.set("doc", p.isLeave() ? NODES.nullNode() : p.doc());
        } else if (message instanceof PresenceFanout f) {
            root.put("event", "presence");
            data.put("scopeKey", f.scopeKey());
            data.put("kind", f.kind().wire());
            data.put("actorId", f.actorId());
            data.put("clientId", f.clientId());
            ObjectNode doc = f.doc();
            data.set("doc", doc == null ? NODES.nullNode() : doc);
            data.put("timestamp", f.timestamp());
        } else if (message instanceof PresenceError e) {
            root.put("event", "presence");
            data.put("scopeKey", e.scopeKey());
            data.put("error", e.error().wire());
            data.put("timestamp", e.timestamp());
        } else if (message instanceof Unknown) {
            throw WireException.invalid("an unknown control message cannot be rendered");
        } else {
            throw WireException.invalid("control message is null");
        }
        root.set("data", data);
        return root;
    }

    /** Parses JSON text into a tree with this codec's number handling (for tests and tools). */
    public static JsonNode readTree(String json) {
        try {
            return MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw WireException.invalid("control message is not valid JSON");
        }
    }

    private static String toJson(JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("rendering a JSON tree failed", e);
        }
    }
}
