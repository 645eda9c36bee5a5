package dev.syncular.server.operations;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * One decoded client message of the REMOTE.md §6 watch socket, and the server messages it is answered with.
 *
 * <p>Client messages (§4 tagged encoding, the whole message an object value): {@code watch}
 * ({@code revision: 1}, {@code watchId}, {@code clientId}, {@code operationId}, {@code params}; no other member)
 * and {@code unwatch} ({@code revision: 1}, {@code watchId}). Server messages: {@code snapshot}
 * ({@code revision}, {@code watchId}, {@code operationId}, {@code rows}, {@code maxCommitSeq}: a full
 * replacement), {@code watch_error} ({@code revision}, {@code watchId}, {@code code}, {@code message},
 * {@code retryable}) — the shapes Syncular's {@code RemoteOperationWatchHub} sends — and, for a message that
 * names no usable {@code watchId}, the §5 {@code kind: "error"} object.
 */
public sealed interface WatchMessage {
    Set<String> WATCH_MEMBERS = Set.of("revision", "kind", "watchId", "clientId", "operationId", "params");
    Set<String> UNWATCH_MEMBERS = Set.of("revision", "kind", "watchId");

    /** {@code watch}: register {@code watchId} for the registered query {@code operationId} with {@code params}. */
    record Watch(String watchId, String clientId, String operationId, OperationValue params) implements WatchMessage {}

    /** {@code unwatch}: remove {@code watchId}, suppressing a run still in flight for it. */
    record Unwatch(String watchId) implements WatchMessage {}

    /**
     * A client message that is not a valid {@code watch} or {@code unwatch}: answered {@code watch_error} when it
     * names a {@code watchId} ({@code ""} when it does not, then answered {@code kind: "error"}).
     */
    record Invalid(String watchId, OperationException failure) implements WatchMessage {}

    /** A client message above the socket's message cap (docs/OPERATIONS.md: {@code operation.invalid_request}). */
    static Invalid tooLarge() {
        return new Invalid("", OperationException.invalid("the watch message exceeds the socket's message cap"));
    }

    /** Decodes one client message; never throws (an invalid message is {@link Invalid}). */
    static WatchMessage decode(byte[] bytes, long maxBytes) {
        if (bytes.length > maxBytes) {
            return tooLarge();
        }
        OperationValue decoded;
        try {
            decoded = TaggedValueCodec.decode(bytes);
        } catch (OperationException e) {
            return new Invalid("", e);
        }
        if (!(decoded instanceof OperationValue.Obj m)) {
            return new Invalid("", OperationException.invalid("the watch message must be an object"));
        }
        String watchId = m.get("watchId") instanceof OperationValue.Text t ? t.value() : "";
        OperationValue revision = m.get("revision");
        if (!(revision instanceof OperationValue.Number n && n.value() == 1)
                && !(revision instanceof OperationValue.Integer i && i.value() == 1)) {
            return new Invalid(watchId, OperationException.invalid("revision must be 1"));
        }
        if (watchId.isEmpty()) {
            return new Invalid("", OperationException.invalid("watchId must be a non-empty string"));
        }
        String kind = m.get("kind") instanceof OperationValue.Text t ? t.value() : "";
        switch (kind) {
            case "unwatch" -> {
                if (!UNWATCH_MEMBERS.equals(m.fields().keySet())) {
                    return new Invalid(
                            watchId, OperationException.invalid("the unwatch message has missing or unknown members"));
                }
                return new Unwatch(watchId);
            }
            case "watch" -> {
                if (!WATCH_MEMBERS.equals(m.fields().keySet())) {
                    return new Invalid(
                            watchId, OperationException.invalid("the watch message has missing or unknown members"));
                }
                if (!(m.get("clientId") instanceof OperationValue.Text clientId)
                        || !(m.get("operationId") instanceof OperationValue.Text operationId)) {
                    return new Invalid(watchId, OperationException.invalid("clientId and operationId must be strings"));
                }
                return new Watch(watchId, clientId.value(), operationId.value(), m.get("params"));
            }
            default -> {
                return new Invalid(watchId, OperationException.invalid("kind must be watch or unwatch"));
            }
        }
    }

    /** The {@code snapshot} of {@code watchId} from a §5 query success object. */
    static OperationValue snapshot(String watchId, OperationValue.Obj success) {
        Map<String, OperationValue> out = new LinkedHashMap<>();
        out.put("revision", new OperationValue.Number(1));
        out.put("kind", new OperationValue.Text("snapshot"));
        out.put("watchId", new OperationValue.Text(watchId));
        out.put("operationId", success.get("operationId"));
        out.put("rows", success.get("rows"));
        out.put("maxCommitSeq", success.get("maxCommitSeq"));
        return new OperationValue.Obj(out);
    }

    /**
     * The {@code watch_error} of {@code watchId} for {@code failure} (the §5 error object's code, message and
     * retryable), or that §5 error object itself when {@code watchId} is {@code ""}.
     */
    static OperationValue error(String watchId, Throwable failure) {
        OperationValue.Obj error = (OperationValue.Obj) RemoteOperations.error(failure);
        if (watchId.isEmpty()) {
            return error;
        }
        Map<String, OperationValue> out = new LinkedHashMap<>();
        out.put("revision", new OperationValue.Number(1));
        out.put("kind", new OperationValue.Text("watch_error"));
        out.put("watchId", new OperationValue.Text(watchId));
        out.put("code", error.get("code"));
        out.put("message", error.get("message"));
        out.put("retryable", error.get("retryable"));
        return new OperationValue.Obj(out);
    }
}
