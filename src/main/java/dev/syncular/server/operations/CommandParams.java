package dev.syncular.server.operations;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Json;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PushResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The command binding's values (REMOTE.md §3, §4, §5): decoded params as plain Java for {@link RemoteCommand}, the
 * reserved idempotency identity as JSON arrays, and the command's success object from the round's
 * {@code PUSH_RESULT}.
 */
final class CommandParams {

    private CommandParams() {}

    /**
     * A §4 value as plain Java: null, {@code Boolean}, {@code Double} (number), {@code Long} (integer),
     * {@code String}, {@code byte[]}, {@code List} and an insertion-ordered {@code Map}.
     */
    static Object plain(OperationValue v) {
        if (v == null || v instanceof OperationValue.Null) {
            return null;
        }
        if (v instanceof OperationValue.Bool b) {
            return b.value();
        }
        if (v instanceof OperationValue.Number n) {
            return n.value();
        }
        if (v instanceof OperationValue.Integer i) {
            return i.value();
        }
        if (v instanceof OperationValue.Text t) {
            return t.value();
        }
        if (v instanceof OperationValue.Bytes b) {
            return b.value().clone();
        }
        if (v instanceof OperationValue.Array a) {
            List<Object> out = new ArrayList<>();
            a.items().forEach(item -> out.add(plain(item)));
            return out;
        }
        Map<String, Object> out = new LinkedHashMap<>();
        ((OperationValue.Obj) v).fields().forEach((k, item) -> out.put(k, plain(item)));
        return out;
    }

    /** {@code JSON.stringify} of an array of strings: the §3 tuple encoding of the reserved identity. */
    static String jsonArray(List<String> parts) {
        try {
            return Json.writeValueAsString(parts);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The §5 command success object of a round's frames ({@code RESP_HEADER}, {@code PUSH_RESULT}, ...). */
    static OperationValue answer(String operationId, String requestId, List<Frame> frames) {
        PushResult result = null;
        for (Frame f : frames) {
            if (f instanceof PushResult r) {
                result = r;
                break;
            }
        }
        if (result == null) {
            throw new IllegalStateException("the command round answered no push result");
        }
        Map<String, OperationValue> out = new LinkedHashMap<>();
        out.put("revision", new OperationValue.Number(1));
        out.put("kind", new OperationValue.Text("command"));
        out.put("operationId", new OperationValue.Text(operationId));
        out.put("requestId", new OperationValue.Text(requestId));
        out.put(
                "status",
                new OperationValue.Text(
                        switch (result.status()) {
                            case APPLIED -> "applied";
                            case CACHED -> "cached";
                            case REJECTED -> "rejected";
                        }));
        if (result.commitSeq() != null && result.status() != CommitStatus.REJECTED) {
            out.put("commitSeq", new OperationValue.Number(result.commitSeq()));
        }
        List<OperationValue> results = new ArrayList<>();
        for (OpResult r : result.results()) {
            Map<String, OperationValue> o = new LinkedHashMap<>();
            o.put("opIndex", new OperationValue.Number(r.opIndex()));
            if (r instanceof OpResult.Applied) {
                o.put("status", new OperationValue.Text("applied"));
            } else if (r instanceof OpResult.Conflict c) {
                o.put("status", new OperationValue.Text("conflict"));
                o.put("code", new OperationValue.Text(c.code()));
                o.put("serverVersion", new OperationValue.Number(c.serverVersion()));
            } else if (r instanceof OpResult.Error e) {
                o.put("status", new OperationValue.Text("error"));
                o.put("code", new OperationValue.Text(e.code()));
                o.put("message", new OperationValue.Text(e.message()));
                o.put("retryable", new OperationValue.Bool(e.retryable()));
            }
            results.add(new OperationValue.Obj(o));
        }
        out.put("results", new OperationValue.Array(results));
        return new OperationValue.Obj(out);
    }
}
