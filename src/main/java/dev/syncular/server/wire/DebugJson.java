package dev.syncular.server.wire;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.JsonGeneratorDelegate;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.StringWriter;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * The canonical JSON debug rendering of §11.1 — developer tooling and the golden-vector oracle, never
 * parsed on a production path. Field order follows the spec's field tables; absent {@code opt()} fields
 * are omitted; binary fields are base64; enums render by name; {@code json} fields embed parsed; numbers print as
 * JavaScript's {@code JSON.stringify} prints them ({@link JsNumber}: {@code 2}, {@code 1e+21}, {@code 1e-7}).
 */
public final class DebugJson {
    private static final ObjectMapper MAPPER = Json.mapper();
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final Base64.Encoder B64 = Base64.getEncoder();

    private DebugJson() {}

    /** The rendering as indented text, every floating-point number as JavaScript prints it ({@link JsNumber}). */
    public static String toText(JsonNode node) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = new JsNumbers(MAPPER.getFactory().createGenerator(out))) {
            g.useDefaultPrettyPrinter();
            MAPPER.writeTree(g, node);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return out.toString();
    }

    /** A generator writing doubles by ECMAScript Number::toString, non-finite ones as null (rule 10). */
    private static final class JsNumbers extends JsonGeneratorDelegate {
        JsNumbers(JsonGenerator g) {
            super(g, false);
        }

        @Override
        public void writeNumber(double v) throws IOException {
            if (Double.isFinite(v)) {
                delegate.writeNumber(JsNumber.text(v));
            } else {
                delegate.writeNull();
            }
        }
    }

    /** Renders a decoded message (rule 1: {@code END} omitted). */
    public static ObjectNode render(Message m) {
        ObjectNode o = F.objectNode();
        o.put("magic", "SSP2");
        o.put("wireVersion", m.wireVersion());
        o.put("msgKind", m.isRequest() ? "request" : "response");
        ArrayNode frames = o.putArray("frames");
        for (Frame f : m.frames()) {
            frames.add(frame(f));
        }
        return o;
    }

    public static ObjectNode frame(Frame f) {
        ObjectNode o = F.objectNode();
        o.put("type", f instanceof UnknownFrame ? "UNKNOWN" : FrameType.name(f.type()));
        if (f instanceof ReqHeader h) {
            o.put("clientId", h.clientId());
            o.put("schemaVersion", h.schemaVersion());
            putOpt(o, "logEpoch", h.logEpoch());
        } else if (f instanceof PushCommit c) {
            o.put("clientCommitId", c.clientCommitId());
            ArrayNode ops = o.putArray("operations");
            for (PushOperation op : c.operations()) {
                ObjectNode x = ops.addObject();
                x.put("table", op.table());
                x.put("rowId", op.rowId());
                x.put("op", op.op().wireName);
                if (op.baseVersion() != null) {
                    x.put("baseVersion", op.baseVersion());
                }
                if (op.payload() != null) {
                    x.put("payload", B64.encodeToString(op.payload()));
                }
            }
        } else if (f instanceof PullHeader p) {
            o.put("limitCommits", p.limitCommits());
            o.put("limitSnapshotRows", p.limitSnapshotRows());
            o.put("maxSnapshotPages", p.maxSnapshotPages());
            o.put("accept", p.accept());
        } else if (f instanceof SubscriptionFrame s) {
            o.put("id", s.id());
            o.put("table", s.table());
            o.set("scopes", scopeLists(s.scopes()));
            putJson(o, "params", s.params());
            o.put("cursor", s.cursor());
            putJson(o, "bootstrapState", s.bootstrapState());
        } else if (f instanceof RespHeader h) {
            if (h.requiredSchemaVersion() != null) {
                o.put("requiredSchemaVersion", h.requiredSchemaVersion());
            }
            if (h.latestSchemaVersion() != null) {
                o.put("latestSchemaVersion", h.latestSchemaVersion());
            }
            o.put("logEpoch", h.logEpoch());
            o.put("resetRequired", h.resetRequired());
        } else if (f instanceof Lease l) {
            o.put("leaseId", l.leaseId());
            o.put("expiresAtMs", l.expiresAtMs());
        } else if (f instanceof PushResult r) {
            o.put("clientCommitId", r.clientCommitId());
            o.put("status", r.status().wireName);
            if (r.commitSeq() != null) {
                o.put("commitSeq", r.commitSeq());
            }
            ArrayNode results = o.putArray("results");
            for (OpResult res : r.results()) {
                results.add(opResult(res));
            }
        } else if (f instanceof PushResultDetails d) {
            o.put("clientCommitId", d.clientCommitId());
            ArrayNode entries = o.putArray("entries");
            for (PushResultDetails.Entry e : d.entries()) {
                ObjectNode x = entries.addObject();
                x.put("opIndex", e.opIndex());
                x.set("detailsJson", parse(e.detailsJson()));
            }
        } else if (f instanceof SubStart s) {
            o.put("id", s.id());
            o.put("status", s.status().wireName);
            o.put("reasonCode", s.reasonCode());
            o.set("effectiveScopes", scopeLists(s.effectiveScopes()));
            o.put("bootstrap", s.bootstrap());
        } else if (f instanceof CommitFrame c) {
            o.put("commitSeq", c.commitSeq());
            o.put("createdAtMs", c.createdAtMs());
            o.put("actorId", c.actorId());
            ArrayNode tables = o.putArray("tables");
            c.tables().forEach(tables::add);
            ArrayNode changes = o.putArray("changes");
            for (Change ch : c.changes()) {
                ObjectNode x = changes.addObject();
                x.put("tableIndex", ch.tableIndex());
                x.put("rowId", ch.rowId());
                x.put("op", ch.op().wireName);
                if (ch.rowVersion() != null) {
                    x.put("rowVersion", ch.rowVersion());
                }
                ObjectNode scopes = x.putObject("scopes");
                ch.scopes().forEach(scopes::put);
                if (ch.row() != null) {
                    x.put("row", B64.encodeToString(ch.row()));
                }
            }
        } else if (f instanceof SegmentRef s) {
            o.put("segmentId", s.segmentId());
            o.put("mediaType", s.mediaType().wireName);
            o.put("table", s.table());
            o.put("byteLength", s.byteLength());
            o.put("rowCount", s.rowCount());
            o.put("asOfCommitSeq", s.asOfCommitSeq());
            o.put("scopeDigest", s.scopeDigest());
            putOpt(o, "rowCursor", s.rowCursor());
            putOpt(o, "nextRowCursor", s.nextRowCursor());
            putOpt(o, "url", s.url());
            if (s.urlExpiresAtMs() != null) {
                o.put("urlExpiresAtMs", s.urlExpiresAtMs());
            }
        } else if (f instanceof SegmentInline s) {
            o.put("payload", B64.encodeToString(s.payload()));
        } else if (f instanceof SubEnd s) {
            o.put("nextCursor", s.nextCursor());
            putJson(o, "bootstrapState", s.bootstrapState());
        } else if (f instanceof ErrorFrame e) {
            o.put("code", e.code());
            o.put("message", e.message());
            o.put("category", e.category());
            o.put("retryable", e.retryable());
            o.put("recommendedAction", e.recommendedAction());
            putJson(o, "details", e.details());
        } else if (f instanceof UnknownFrame u) {
            o.put("frameType", u.frameType());
            o.put("payload", B64.encodeToString(u.payload()));
        }
        return o;
    }

    private static ObjectNode opResult(OpResult res) {
        ObjectNode x = F.objectNode();
        x.put("opIndex", res.opIndex());
        if (res instanceof OpResult.Applied) {
            x.put("status", "applied");
        } else if (res instanceof OpResult.Conflict c) {
            x.put("status", "conflict");
            x.put("code", c.code());
            x.put("message", c.message());
            x.put("serverVersion", c.serverVersion());
            x.put("serverRow", B64.encodeToString(c.serverRow()));
            x.put("conflictColumns", B64.encodeToString(c.conflictColumns()));
        } else if (res instanceof OpResult.Error e) {
            x.put("status", "error");
            x.put("code", e.code());
            x.put("message", e.message());
            x.put("retryable", e.retryable());
        }
        return x;
    }

    /** Rule 8: a rows segment with its column table and row blocks. */
    public static ObjectNode render(RowsSegment seg) {
        ObjectNode o = F.objectNode();
        o.put("magic", "SSG2");
        o.put("formatVersion", RowsSegment.FORMAT_VERSION);
        o.put("table", seg.table());
        o.put("schemaVersion", seg.schemaVersion());
        o.set("columns", columns(seg.columns()));
        ArrayNode blocks = o.putArray("blocks");
        for (List<SegmentRow> block : seg.blocks()) {
            ArrayNode b = blocks.addArray();
            for (SegmentRow row : block) {
                ObjectNode r = b.addObject();
                r.put("serverVersion", row.serverVersion());
                ObjectNode values = r.putObject("values");
                for (int i = 0; i < seg.columns().size(); i++) {
                    ColumnDef c = seg.columns().column(i);
                    values.set(c.name(), value(c.type(), row.values()[i]));
                }
            }
        }
        return o;
    }

    /** Rule 11: a sparse push row with only its present columns in {@code values}. */
    public static ObjectNode render(RowLayout layout, SparseRow row) {
        ObjectNode o = F.objectNode();
        o.set("columns", columns(layout));
        ObjectNode values = o.putObject("values");
        for (int i = 0; i < layout.size(); i++) {
            if (row.isPresent(i)) {
                ColumnDef c = layout.column(i);
                values.set(c.name(), value(c.type(), row.value(i)));
            }
        }
        return o;
    }

    public static ArrayNode columns(RowLayout layout) {
        ArrayNode cols = F.arrayNode();
        for (ColumnDef c : layout.columns()) {
            ObjectNode x = cols.addObject();
            x.put("name", c.name());
            x.put("type", c.type().wireName);
            x.put("nullable", c.nullable());
        }
        return cols;
    }

    /** One row-codec value: NULL → null, bytes → base64, json → parsed, floats as JavaScript numbers. */
    public static JsonNode value(ColumnType type, Object v) {
        if (v == null) {
            return F.nullNode();
        }
        switch (type) {
            case STRING:
                return F.textNode((String) v);
            case INTEGER:
                return F.numberNode((Long) v);
            case FLOAT: {
                double d = (Double) v;
                if (Double.isNaN(d) || Double.isInfinite(d)) {
                    return F.nullNode(); // rule 10
                }
                if (d == Math.rint(d) && Math.abs(d) < 9.007199254740992E15) {
                    return F.numberNode((long) d);
                }
                return F.numberNode(d);
            }
            case BOOLEAN:
                return F.booleanNode((Boolean) v);
            case JSON:
            case BLOB_REF:
                return parse((String) v);
            default:
                return F.textNode(B64.encodeToString((byte[]) v));
        }
    }

    private static void putOpt(ObjectNode o, String name, String value) {
        if (value != null) {
            o.put(name, value);
        }
    }

    private static void putJson(ObjectNode o, String name, String raw) {
        if (raw != null) {
            o.set(name, parse(raw));
        }
    }

    private static ObjectNode scopeLists(Map<String, List<String>> scopes) {
        ObjectNode o = F.objectNode();
        for (Map.Entry<String, List<String>> e : scopes.entrySet()) {
            ArrayNode a = o.putArray(e.getKey());
            e.getValue().forEach(a::add);
        }
        return o;
    }

    private static JsonNode parse(String raw) {
        try {
            return MAPPER.readTree(raw);
        } catch (JsonProcessingException e) {
            throw WireException.invalid("json value is not a JSON document");
        }
    }
}
