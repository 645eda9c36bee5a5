package dev.syncular.server.wire;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.testsupport.ReferenceMaterial;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Test-only inverse of the §11.1 rendering: builds wire values from the golden vectors' JSON renderings
 * (the wire-v3 request, response and push cases ship without their .bin files). Raw {@code json} fields
 * are re-serialized compactly, as {@code JSON.stringify} does.
 */
final class Renderings {
    static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Base64.Decoder B64 = Base64.getDecoder();

    private Renderings() {}

    /** The Syncular reference material on the test classpath (src/test/resources/syncular). */
    static Path referenceDir() {
        return ReferenceMaterial.dir();
    }

    static JsonNode read(Path p) {
        try {
            return MAPPER.readTree(p.toFile());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static JsonNode parse(String text) {
        try {
            return MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Deep equality with numbers compared by value (57 == 57L == 57.0). */
    static boolean sameJson(JsonNode a, JsonNode b) {
        return a.equals(
                (x, y) -> {
                    if (x.isNumber() && y.isNumber()) {
                        return x.decimalValue().compareTo(y.decimalValue()) == 0 ? 0 : 1;
                    }
                    return x.equals(y) ? 0 : 1;
                },
                b);
    }

    static Message message(JsonNode m) {
        int kind = m.get("msgKind").asText().equals("request") ? FrameType.MSG_REQUEST : FrameType.MSG_RESPONSE;
        List<Frame> frames = new ArrayList<>();
        for (JsonNode f : m.get("frames")) {
            frames.add(frame(f));
        }
        return new Message(m.get("wireVersion").asInt(), kind, frames);
    }

    static Frame frame(JsonNode f) {
        switch (f.get("type").asText()) {
            case "REQ_HEADER":
                return new ReqHeader(
                        f.get("clientId").asText(), f.get("schemaVersion").asInt(), optText(f, "logEpoch"));
            case "PUSH_COMMIT": {
                List<PushOperation> ops = new ArrayList<>();
                for (JsonNode o : f.get("operations")) {
                    ops.add(new PushOperation(
                            o.get("table").asText(),
                            o.get("rowId").asText(),
                            o.get("op").asText().equals("upsert") ? Op.UPSERT : Op.DELETE,
                            optLong(o, "baseVersion"),
                            optBytes(o, "payload")));
                }
                return new PushCommit(f.get("clientCommitId").asText(), ops);
            }
            case "PULL_HEADER":
                return new PullHeader(
                        f.get("limitCommits").asInt(),
                        f.get("limitSnapshotRows").asInt(),
                        f.get("maxSnapshotPages").asInt(),
                        f.get("accept").asInt());
            case "SUBSCRIPTION":
                return new SubscriptionFrame(
                        f.get("id").asText(),
                        f.get("table").asText(),
                        scopeLists(f.get("scopes")),
                        optJson(f, "params"),
                        f.get("cursor").asLong(),
                        optJson(f, "bootstrapState"));
            case "RESP_HEADER":
                return new RespHeader(
                        optInt(f, "requiredSchemaVersion"),
                        optInt(f, "latestSchemaVersion"),
                        f.get("logEpoch").asText(),
                        f.get("resetRequired").asBoolean());
            case "LEASE":
                return new Lease(f.get("leaseId").asText(), f.get("expiresAtMs").asLong());
            case "PUSH_RESULT": {
                List<OpResult> results = new ArrayList<>();
                for (JsonNode r : f.get("results")) {
                    int idx = r.get("opIndex").asInt();
                    switch (r.get("status").asText()) {
                        case "applied" -> results.add(new OpResult.Applied(idx));
                        case "conflict" ->
                            results.add(new OpResult.Conflict(
                                    idx,
                                    r.get("code").asText(),
                                    r.get("message").asText(),
                                    r.get("serverVersion").asLong(),
                                    optBytes(r, "serverRow"),
                                    optBytes(r, "conflictColumns")));
                        default ->
                            results.add(new OpResult.Error(
                                    idx,
                                    r.get("code").asText(),
                                    r.get("message").asText(),
                                    r.get("retryable").asBoolean()));
                    }
                }
                return new PushResult(
                        f.get("clientCommitId").asText(),
                        CommitStatus.valueOf(f.get("status").asText().toUpperCase()),
                        optLong(f, "commitSeq"),
                        results);
            }
            case "SUB_START":
                return new SubStart(
                        f.get("id").asText(),
                        SubscriptionStatus.valueOf(f.get("status").asText().toUpperCase()),
                        f.get("reasonCode").asText(),
                        scopeLists(f.get("effectiveScopes")),
                        f.get("bootstrap").asBoolean());
            case "COMMIT": {
                List<String> tables = new ArrayList<>();
                f.get("tables").forEach(t -> tables.add(t.asText()));
                List<Change> changes = new ArrayList<>();
                for (JsonNode c : f.get("changes")) {
                    Map<String, String> scopes = new LinkedHashMap<>();
                    c.get("scopes")
                            .fields()
                            .forEachRemaining(
                                    e -> scopes.put(e.getKey(), e.getValue().asText()));
                    changes.add(new Change(
                            c.get("tableIndex").asInt(),
                            c.get("rowId").asText(),
                            c.get("op").asText().equals("upsert") ? Op.UPSERT : Op.DELETE,
                            optLong(c, "rowVersion"),
                            scopes,
                            optBytes(c, "row")));
                }
                return new CommitFrame(
                        f.get("commitSeq").asLong(),
                        f.get("createdAtMs").asLong(),
                        f.get("actorId").asText(),
                        tables,
                        changes);
            }
            case "SEGMENT_REF":
                return new SegmentRef(
                        f.get("segmentId").asText(),
                        f.get("mediaType").asText().equals("rows") ? MediaType.ROWS : MediaType.SQLITE,
                        f.get("table").asText(),
                        f.get("byteLength").asLong(),
                        f.get("rowCount").asLong(),
                        f.get("asOfCommitSeq").asLong(),
                        f.get("scopeDigest").asText(),
                        optText(f, "rowCursor"),
                        optText(f, "nextRowCursor"),
                        optText(f, "url"),
                        optLong(f, "urlExpiresAtMs"));
            case "SEGMENT_INLINE":
                return new SegmentInline(optBytes(f, "payload"));
            case "SUB_END":
                return new SubEnd(f.get("nextCursor").asLong(), optJson(f, "bootstrapState"));
            case "ERROR":
                return new ErrorFrame(
                        f.get("code").asText(),
                        f.get("message").asText(),
                        f.get("category").asText(),
                        f.get("retryable").asBoolean(),
                        f.get("recommendedAction").asText(),
                        optJson(f, "details"));
            case "UNKNOWN":
                return new UnknownFrame(f.get("frameType").asInt(), optBytes(f, "payload"));
            default:
                throw new IllegalArgumentException("unknown rendered frame type");
        }
    }

    static RowLayout columns(JsonNode cols, String primaryKey) {
        List<ColumnDef> defs = new ArrayList<>();
        int pk = -1;
        for (JsonNode c : cols) {
            if (c.get("name").asText().equals(primaryKey)) {
                pk = defs.size();
            }
            defs.add(new ColumnDef(
                    c.get("name").asText(),
                    ColumnType.ofName(c.get("type").asText()),
                    c.get("nullable").asBoolean()));
        }
        return new RowLayout(defs, pk);
    }

    /** A row value from its rendering (inverse of {@link DebugJson#value}). */
    static Object value(ColumnType type, JsonNode v) {
        if (v.isNull()) {
            return null;
        }
        return switch (type) {
            case STRING -> v.asText();
            case INTEGER -> v.asLong();
            case FLOAT -> v.asDouble();
            case BOOLEAN -> v.asBoolean();
            case JSON, BLOB_REF -> compact(v);
            case BYTES, CRDT -> B64.decode(v.asText());
        };
    }

    static RowsSegment segment(JsonNode s) {
        RowLayout layout = columns(s.get("columns"), null);
        List<List<SegmentRow>> blocks = new ArrayList<>();
        for (JsonNode b : s.get("blocks")) {
            List<SegmentRow> rows = new ArrayList<>();
            for (JsonNode r : b) {
                Object[] values = new Object[layout.size()];
                for (int i = 0; i < layout.size(); i++) {
                    values[i] = value(
                            layout.column(i).type(),
                            r.get("values").get(layout.column(i).name()));
                }
                rows.add(new SegmentRow(r.get("serverVersion").asLong(), values));
            }
            blocks.add(rows);
        }
        return new RowsSegment(s.get("table").asText(), s.get("schemaVersion").asInt(), layout, blocks);
    }

    static SparseRow sparseRow(RowLayout layout, JsonNode values) {
        boolean[] present = new boolean[layout.size()];
        Object[] vals = new Object[layout.size()];
        for (int i = 0; i < layout.size(); i++) {
            JsonNode v = values.get(layout.column(i).name());
            if (v != null) {
                present[i] = true;
                vals[i] = value(layout.column(i).type(), v);
            }
        }
        return new SparseRow(present, vals);
    }

    static String compact(JsonNode v) {
        try {
            return MAPPER.writeValueAsString(v);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, List<String>> scopeLists(JsonNode o) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        o.fields().forEachRemaining(e -> {
            List<String> vals = new ArrayList<>();
            e.getValue().forEach(v -> vals.add(v.asText()));
            out.put(e.getKey(), vals);
        });
        return out;
    }

    private static String optText(JsonNode f, String name) {
        return f.hasNonNull(name) ? f.get(name).asText() : null;
    }

    private static Long optLong(JsonNode f, String name) {
        return f.hasNonNull(name) ? f.get(name).asLong() : null;
    }

    private static Integer optInt(JsonNode f, String name) {
        return f.hasNonNull(name) ? f.get(name).asInt() : null;
    }

    private static byte[] optBytes(JsonNode f, String name) {
        return f.hasNonNull(name) ? B64.decode(f.get(name).asText()) : null;
    }

    private static String optJson(JsonNode f, String name) {
        return f.has(name) ? compact(f.get(name)) : null;
    }
}
