package dev.syncular.server.schema;

import static dev.syncular.server.schema.SchemaException.q;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.syncular.server.wire.ColumnType;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Reads a schema JSON document into the plain {@link SchemaIr} model (§2.4 schema IR), rejecting a
 * document that is not well-formed with a {@link SchemaException}.
 *
 * <p>Two document shapes are accepted:
 * <ul>
 *   <li>the typegen schema IR ({@code irVersion}, {@code schemaVersion}, {@code schemaVersions},
 *       {@code tables[{name, primaryKey, columns, scopes[{pattern, variable, column}], indexes,
 *       references, extensions}]}, {@code subscriptions}, {@code extensions});</li>
 *   <li>the short host form ({@code {"version": N, "tables": [{name, columns, primaryKey, scopes}]}})
 *       whose scopes (§3.1) are {@code "prefix:{var}"} strings (column = variable) or
 *       {@code {pattern, column}} objects.</li>
 * </ul>
 * The version key is {@code schemaVersion} or {@code version} (§9 schema versioning). Unknown keys are
 * ignored (the IR grows additively under {@code irVersion} 1). Parsing uses Jackson's tree model only
 * (no data binding). The rules between fields are {@link SchemaCompiler}'s.
 */
final class SchemaIrParser {
    private static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private SchemaIrParser() {}

    /** Reads the JSON text strictly: duplicate keys and trailing tokens are {@code invalid_json}. */
    static JsonNode readTree(String json) {
        try {
            return MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw SchemaException.reason("invalid_json")
                    .error("schema document is not valid JSON: " + e.getOriginalMessage(), e);
        }
    }

    static SchemaIr parse(JsonNode root) {
        if (root == null || !root.isObject()) {
            throw SchemaException.reason("invalid_document").error("schema document must be a JSON object");
        }
        boolean irForm = root.has("irVersion");
        if (irForm) {
            JsonNode irv = root.get("irVersion");
            if (!irv.isIntegralNumber() || !irv.canConvertToInt() || irv.intValue() != SchemaLoader.IR_VERSION) {
                throw SchemaException.reason("ir_version")
                        .with("irVersion", irv.toString())
                        .error("schema IR irVersion must be " + SchemaLoader.IR_VERSION + ", got " + irv);
            }
        }
        int version = readVersion(root);
        List<SchemaVersionEntry> history = readHistory(root, version);

        JsonNode tablesNode = root.get("tables");
        if (tablesNode == null || !tablesNode.isArray()) {
            throw SchemaException.reason("tables_missing").error("schema must have a \"tables\" array");
        }
        List<SchemaIr.Table> tables = new ArrayList<>();
        for (int i = 0; i < tablesNode.size(); i++) {
            JsonNode t = tablesNode.get(i);
            if (!t.isObject()) {
                throw SchemaException.reason("invalid_table")
                        .with("index", i)
                        .error("tables[" + i + "] must be an object");
            }
            String name = requireString(t, "name", null, null, "tables[" + i + "]");
            tables.add(readTable(t, name));
        }

        JsonNode subscriptions = root.get("subscriptions");
        List<SchemaIr.Subscription> refs = new ArrayList<>();
        if (subscriptions != null && !subscriptions.isNull()) {
            readSubscriptions(subscriptions, refs);
        } else {
            subscriptions = null;
        }
        JsonNode extensions = root.get("extensions");
        if (extensions != null && !extensions.isNull() && !extensions.isObject()) {
            throw SchemaException.reason("invalid_extensions").error("schema \"extensions\" must be an object");
        }
        return new SchemaIr(
                irForm,
                version,
                history,
                tables,
                subscriptions,
                refs,
                extensions == null || extensions.isNull() ? null : extensions);
    }

    // ---------------------------------------------------------------- versions

    private static int readVersion(JsonNode root) {
        JsonNode sv = root.get("schemaVersion");
        JsonNode v = root.get("version");
        if (sv == null && v == null) {
            throw SchemaException.reason("schema_version")
                    .error("schema must declare \"schemaVersion\" (or \"version\")");
        }
        int a = sv == null ? -1 : versionValue(sv, "schemaVersion");
        int b = v == null ? -1 : versionValue(v, "version");
        if (sv != null && v != null && a != b) {
            throw SchemaException.reason("schema_version")
                    .with("schemaVersion", a)
                    .with("version", b)
                    .error("schema declares both \"schemaVersion\" " + a + " and \"version\" " + b);
        }
        return sv != null ? a : b;
    }

    private static int versionValue(JsonNode n, String key) {
        if (!n.isIntegralNumber() || !n.canConvertToInt() || n.intValue() < 1) {
            throw SchemaException.reason("schema_version")
                    .with(key, n.toString())
                    .error("schema \"" + key + "\" must be an integer >= 1, got " + n);
        }
        return n.intValue();
    }

    private static List<SchemaVersionEntry> readHistory(JsonNode root, int version) {
        JsonNode h = root.get("schemaVersions");
        List<SchemaVersionEntry> out = new ArrayList<>();
        if (h == null || h.isNull()) {
            return out;
        }
        if (!h.isArray()) {
            throw SchemaException.reason("schema_versions").error("schema \"schemaVersions\" must be an array");
        }
        int prev = 0;
        for (int i = 0; i < h.size(); i++) {
            JsonNode e = h.get(i);
            if (!e.isObject()) {
                throw SchemaException.reason("schema_versions").error("schemaVersions[" + i + "] must be an object");
            }
            JsonNode vn = e.get("version");
            if (vn == null || !vn.isIntegralNumber() || !vn.canConvertToInt() || vn.intValue() < 1) {
                throw SchemaException.reason("schema_versions")
                        .error("schemaVersions[" + i + "].version must be an integer >= 1");
            }
            int v = vn.intValue();
            if (v <= prev) {
                throw SchemaException.reason("schema_versions")
                        .with("version", v)
                        .error("schemaVersions must be strictly increasing (" + prev + " then " + v + ")");
            }
            prev = v;
            List<String> migrations = new ArrayList<>();
            JsonNode m = e.get("migrations");
            if (m != null && !m.isNull()) {
                if (!m.isArray()) {
                    throw SchemaException.reason("schema_versions")
                            .error("schemaVersions[" + i + "].migrations must be an array of strings");
                }
                for (JsonNode s : m) {
                    if (!s.isTextual()) {
                        throw SchemaException.reason("schema_versions")
                                .error("schemaVersions[" + i + "].migrations must be an array of strings");
                    }
                    migrations.add(s.textValue());
                }
            }
            out.add(new SchemaVersionEntry(v, migrations));
        }
        if (!out.isEmpty() && prev != version) {
            throw SchemaException.reason("schema_versions")
                    .with("schemaVersion", version)
                    .with("latest", prev)
                    .error("the last schemaVersions entry (" + prev + ") must equal schemaVersion " + version);
        }
        return out;
    }

    // ---------------------------------------------------------------- tables

    private static SchemaIr.Table readTable(JsonNode t, String table) {
        String where = "table " + q(table);
        JsonNode cols = t.get("columns");
        if (cols == null || !cols.isArray() || cols.isEmpty()) {
            throw SchemaException.reason("columns_missing")
                    .table(table)
                    .error(where + ": \"columns\" must be a non-empty array");
        }
        List<SchemaIr.Column> columns = new ArrayList<>();
        for (int i = 0; i < cols.size(); i++) {
            JsonNode c = cols.get(i);
            if (!c.isObject()) {
                throw SchemaException.reason("invalid_column")
                        .table(table)
                        .with("index", i)
                        .error(where + ": columns[" + i + "] must be an object");
            }
            columns.add(readColumn(c, table, i));
        }
        JsonNode pkNode = t.get("primaryKey");
        if (pkNode == null || !pkNode.isTextual() || pkNode.textValue().isEmpty()) {
            throw SchemaException.reason("primary_key_missing")
                    .table(table)
                    .error(where + ": \"primaryKey\" must name one column");
        }
        List<SchemaIr.Scope> scopes = ScopePatternParser.readScopes(t, table);
        List<SchemaIr.Index> indexes = readIndexes(t, table);
        List<SchemaIr.Reference> references = readReferences(t, table);
        JsonNode ext = t.get("extensions");
        if (ext != null && !ext.isNull() && !ext.isObject()) {
            throw SchemaException.reason("invalid_extensions")
                    .table(table)
                    .error(where + ": \"extensions\" must be an object");
        }
        return new SchemaIr.Table(
                table,
                columns,
                pkNode.textValue(),
                scopes,
                indexes,
                references,
                ext == null || ext.isNull() ? null : ext);
    }

    private static SchemaIr.Column readColumn(JsonNode c, String table, int i) {
        String where = "table " + q(table);
        String name = requireString(c, "name", table, null, where + " columns[" + i + "]");
        String cwhere = where + " column " + q(name);

        JsonNode typeNode = c.get("type");
        if (typeNode == null || !typeNode.isTextual()) {
            throw SchemaException.reason("unknown_type")
                    .table(table)
                    .column(name)
                    .error(cwhere + ": \"type\" must be one of " + typeNames());
        }
        ColumnType type = ColumnType.ofName(typeNode.textValue());
        if (type == null) {
            throw SchemaException.reason("unknown_type")
                    .table(table)
                    .column(name)
                    .with("type", typeNode.textValue())
                    .error(cwhere + ": unknown column type " + q(typeNode.textValue()) + " (expected one of "
                            + typeNames() + ")");
        }

        JsonNode nullableNode = c.get("nullable");
        if (nullableNode == null || !nullableNode.isBoolean()) {
            throw SchemaException.reason("nullable_missing")
                    .table(table)
                    .column(name)
                    .error(cwhere + ": \"nullable\" must be true or false");
        }

        // §5.10.1 crdtType
        String crdtType = null;
        JsonNode ct = c.get("crdtType");
        if (ct != null && !ct.isNull()) {
            if (!ct.isTextual() || ct.textValue().isEmpty()) {
                throw SchemaException.reason("crdt_type_invalid")
                        .table(table)
                        .column(name)
                        .error(cwhere + ": \"crdtType\" must be a non-empty string");
            }
            crdtType = ct.textValue();
        }

        // §5.11 encrypted / declaredType
        boolean encrypted = false;
        JsonNode enc = c.get("encrypted");
        if (enc != null && !enc.isNull()) {
            if (!enc.isBoolean()) {
                throw SchemaException.reason("encrypted_invalid")
                        .table(table)
                        .column(name)
                        .error(cwhere + ": \"encrypted\" must be true or false");
            }
            encrypted = enc.booleanValue();
        }
        ColumnType declaredType = null;
        JsonNode dt = c.get("declaredType");
        if (dt != null && !dt.isNull()) {
            if (!dt.isTextual() || ColumnType.ofName(dt.textValue()) == null) {
                throw SchemaException.reason("declared_type_unknown")
                        .table(table)
                        .column(name)
                        .with("declaredType", dt.isTextual() ? dt.textValue() : dt.toString())
                        .error(cwhere + ": unknown declaredType " + (dt.isTextual() ? q(dt.textValue()) : dt.toString())
                                + " (expected one of " + typeNames() + ")");
            }
            declaredType = ColumnType.ofName(dt.textValue());
        }
        return new SchemaIr.Column(name, type, nullableNode.booleanValue(), crdtType, encrypted, declaredType);
    }

    private static List<SchemaIr.Index> readIndexes(JsonNode t, String table) {
        String where = "table " + q(table);
        JsonNode idx = optionalArray(t, "indexes", table, "index_invalid", where + ": \"indexes\" must be an array");
        List<SchemaIr.Index> out = new ArrayList<>();
        for (int i = 0; idx != null && i < idx.size(); i++) {
            JsonNode d =
                    requireObject(idx.get(i), table, "index_invalid", where + ": indexes[" + i + "] must be an object");
            String name = requireString(d, "name", table, null, where + " indexes[" + i + "]");
            JsonNode cols = d.get("columns");
            if (cols == null || !cols.isArray() || cols.isEmpty()) {
                throw SchemaException.reason("index_invalid")
                        .table(table)
                        .with("index", name)
                        .error(where + ": index " + q(name) + " must list at least one column");
            }
            List<String> names = new ArrayList<>();
            for (JsonNode cn : cols) {
                if (!cn.isTextual()) {
                    throw SchemaException.reason("index_invalid")
                            .table(table)
                            .with("index", name)
                            .error(where + ": index " + q(name) + " columns must be column names");
                }
                names.add(cn.textValue());
            }
            JsonNode u = d.get("unique");
            if (u != null && !u.isNull() && !u.isBoolean()) {
                throw SchemaException.reason("index_invalid")
                        .table(table)
                        .with("index", name)
                        .error(where + ": index " + q(name) + " \"unique\" must be true or false");
            }
            out.add(new SchemaIr.Index(name, names, u != null && u.booleanValue()));
        }
        return out;
    }

    private static List<SchemaIr.Reference> readReferences(JsonNode t, String table) {
        String where = "table " + q(table);
        JsonNode refs =
                optionalArray(t, "references", table, "reference_invalid", where + ": \"references\" must be an array");
        List<SchemaIr.Reference> out = new ArrayList<>();
        for (int i = 0; refs != null && i < refs.size(); i++) {
            JsonNode r = requireObject(
                    refs.get(i), table, "reference_invalid", where + ": references[" + i + "] must be an object");
            String column = requireString(r, "column", table, null, where + " references[" + i + "]");
            String parent =
                    requireString(r, "parentTable", table, column, where + " column " + q(column) + " reference");
            ReferenceDef.OnDelete onDelete = ReferenceDef.OnDelete.RESTRICT;
            JsonNode od = r.get("onDelete");
            if (od != null && !od.isNull()) {
                onDelete = od.isTextual() ? ReferenceDef.OnDelete.ofIrName(od.textValue()) : null;
                if (onDelete == null) {
                    throw SchemaException.reason("reference_on_delete")
                            .table(table)
                            .column(column)
                            .with("onDelete", od.asText())
                            .error(where + " column " + q(column) + ": reference onDelete " + od
                                    + " is not one of RESTRICT, CASCADE, SET NULL (§6.11)");
                }
            }
            out.add(new SchemaIr.Reference(column, parent, onDelete));
        }
        return out;
    }

    // ---------------------------------------------------------------- subscriptions (light reading)

    private static void readSubscriptions(JsonNode subs, List<SchemaIr.Subscription> out) {
        if (!subs.isArray()) {
            throw SchemaException.reason("subscription_invalid").error("schema \"subscriptions\" must be an array");
        }
        for (int i = 0; i < subs.size(); i++) {
            JsonNode s = subs.get(i);
            if (!s.isObject()) {
                throw SchemaException.reason("subscription_invalid")
                        .error("subscriptions[" + i + "] must be an object");
            }
            String name = requireString(s, "name", null, null, "subscriptions[" + i + "]");
            String table = requireString(s, "table", null, null, "subscription " + q(name));
            JsonNode scopes = s.get("scopes");
            List<String> variables = new ArrayList<>();
            if (scopes != null && scopes.isArray()) {
                for (JsonNode e : scopes) {
                    JsonNode v = e.get("variable");
                    if (v != null && v.isTextual()) {
                        variables.add(v.textValue());
                    }
                }
            } else if (scopes != null && scopes.isObject()) {
                Iterator<String> it = scopes.fieldNames();
                it.forEachRemaining(variables::add);
            }
            out.add(new SchemaIr.Subscription(name, table, variables));
        }
    }

    // ---------------------------------------------------------------- primitives

    /** The array at {@code key}; {@code null} when absent or JSON null, else a {@code reason} error naming the table. */
    static JsonNode optionalArray(JsonNode obj, String key, String table, String reason, String message) {
        JsonNode n = obj.get(key);
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isArray()) {
            throw SchemaException.reason(reason).table(table).error(message);
        }
        return n;
    }

    /** {@code n} when it is an object, else a {@code reason} error naming the table. */
    private static JsonNode requireObject(JsonNode n, String table, String reason, String message) {
        if (!n.isObject()) {
            throw SchemaException.reason(reason).table(table).error(message);
        }
        return n;
    }

    /** The non-empty string at {@code key}, else {@code missing_field} naming {@code where}. */
    static String requireString(JsonNode obj, String key, String table, String column, String where) {
        JsonNode n = obj.get(key);
        if (n == null || !n.isTextual() || n.textValue().isEmpty()) {
            throw SchemaException.reason("missing_field")
                    .table(table)
                    .column(column)
                    .with("field", key)
                    .error(where + ": \"" + key + "\" must be a non-empty string");
        }
        return n.textValue();
    }

    private static String typeNames() {
        StringBuilder sb = new StringBuilder();
        for (ColumnType t : ColumnType.values()) {
            if (sb.length() > 0) {
                sb.append('|');
            }
            sb.append(t.wireName);
        }
        return sb.toString();
    }
}
