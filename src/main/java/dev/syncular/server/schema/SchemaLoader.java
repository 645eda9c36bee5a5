package dev.syncular.server.schema;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import dev.syncular.server.wire.ColumnType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Compiles a schema JSON document into a {@link CompiledSchema}, rejecting every invalid schema with a
 * {@link SchemaException} before anything is served (§2.4, §3.1, §5.10.1, §5.11, §6.11).
 *
 * <p>Two document shapes are accepted:
 * <ul>
 *   <li>the typegen schema IR ({@code irVersion}, {@code schemaVersion}, {@code schemaVersions},
 *       {@code tables[{name, primaryKey, columns, scopes[{pattern, variable, column}], indexes,
 *       references, extensions}]}, {@code subscriptions}, {@code extensions});</li>
 *   <li>the short host form ({@code {"version": N, "tables": [{name, columns, primaryKey, scopes}]}})
 *       whose scopes are {@code "prefix:{var}"} strings (column = variable) or
 *       {@code {pattern, column}} objects.</li>
 * </ul>
 * The version key is {@code schemaVersion} or {@code version}. Unknown keys are ignored (the IR grows
 * additively under {@code irVersion} 1). Parsing uses Jackson's tree model only (no data binding).
 */
public final class SchemaLoader {
    /** The only schema-IR version this loader understands. */
    public static final int IR_VERSION = 1;

    /**
     * Longest table, column or index name, in UTF-8 bytes: PostgreSQL's identifier limit (NAMEDATALEN
     * 64 minus the terminator). Synced tables and columns become PostgreSQL identifiers, and PostgreSQL
     * silently truncates longer ones, which would let two declared names collide.
     */
    public static final int MAX_IDENTIFIER_BYTES = 63;

    /**
     * Name prefixes reserved for protocol/storage internals (compared case-insensitively): {@code _sync_}
     * (storage-internal columns such as {@code _sync_row_id}, the {@code _sync_version} query
     * pseudo-column, §2.4) and {@code _syncular} (client bookkeeping tables and columns such as
     * {@code _syncular_meta}, {@code _syncular_version}, §5.3, §7.4).
     */
    public static final List<String> RESERVED_PREFIXES = List.of("_sync_", "_syncular");

    /** The built-in CRDT merger names (§5.10.1: {@code yjs-doc} only). */
    public static final Set<String> BUILTIN_CRDT_TYPES = Set.of("yjs-doc");

    /** The {@code crdtType} the short host form implies for a {@code crdt} column that names none. */
    public static final String DEFAULT_CRDT_TYPE = "yjs-doc";

    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private static final JsonMapper MAPPER = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private SchemaLoader() {}

    // ---------------------------------------------------------------- entry points

    public static CompiledSchema parse(String json) {
        return parse(json, BUILTIN_CRDT_TYPES);
    }

    /** @param crdtTypes the merger names the host registers; a {@code crdtType} outside it is rejected */
    public static CompiledSchema parse(String json, Set<String> crdtTypes) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw SchemaException.reason("invalid_json")
                    .error("schema document is not valid JSON: " + e.getOriginalMessage(), e);
        }
        return compile(root, crdtTypes);
    }

    public static CompiledSchema load(Path path) {
        return load(path, BUILTIN_CRDT_TYPES);
    }

    public static CompiledSchema load(Path path, Set<String> crdtTypes) {
        String text;
        try {
            text = Files.readString(path, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read schema file " + path, e);
        }
        return parse(text, crdtTypes);
    }

    public static CompiledSchema load(InputStream in) {
        return load(in, BUILTIN_CRDT_TYPES);
    }

    public static CompiledSchema load(InputStream in, Set<String> crdtTypes) {
        String text;
        try {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read schema stream", e);
        }
        return parse(text, crdtTypes);
    }

    public static CompiledSchema compile(JsonNode root) {
        return compile(root, BUILTIN_CRDT_TYPES);
    }

    public static CompiledSchema compile(JsonNode root, Set<String> crdtTypes) {
        return new Compiler(Set.copyOf(crdtTypes)).compile(root);
    }

    // ---------------------------------------------------------------- helpers shared with SchemaWindow

    static String q(String s) {
        return '"' + s + '"';
    }

    // ---------------------------------------------------------------- the compiler

    private static final class RawReference {
        final String column;
        final String parentTable;
        final ReferenceDef.OnDelete onDelete;

        RawReference(String column, String parentTable, ReferenceDef.OnDelete onDelete) {
            this.column = column;
            this.parentTable = parentTable;
            this.onDelete = onDelete;
        }
    }

    private static final class Compiler {
        private final Set<String> crdtTypes;
        private boolean irForm;

        Compiler(Set<String> crdtTypes) {
            this.crdtTypes = crdtTypes;
        }

        CompiledSchema compile(JsonNode root) {
            if (root == null || !root.isObject()) {
                throw SchemaException.reason("invalid_document").error("schema document must be a JSON object");
            }
            irForm = root.has("irVersion");
            if (irForm) {
                JsonNode irv = root.get("irVersion");
                if (!irv.isIntegralNumber() || !irv.canConvertToInt() || irv.intValue() != IR_VERSION) {
                    throw SchemaException.reason("ir_version")
                            .with("irVersion", irv.toString())
                            .error("schema IR irVersion must be " + IR_VERSION + ", got " + irv);
                }
            }
            int version = readVersion(root);
            List<SchemaVersionEntry> history = readHistory(root, version);

            JsonNode tablesNode = root.get("tables");
            if (tablesNode == null || !tablesNode.isArray()) {
                throw SchemaException.reason("tables_missing").error("schema must have a \"tables\" array");
            }
            List<TableSchema> tables = new ArrayList<>();
            Map<String, List<RawReference>> rawRefs = new LinkedHashMap<>();
            Map<String, String> tableNamesFolded = new HashMap<>();
            Map<String, String> indexNamesFolded = new HashMap<>();
            for (int i = 0; i < tablesNode.size(); i++) {
                JsonNode t = tablesNode.get(i);
                if (!t.isObject()) {
                    throw SchemaException.reason("invalid_table")
                            .with("index", i)
                            .error("tables[" + i + "] must be an object");
                }
                String name = requireString(t, "name", null, null, "tables[" + i + "]");
                checkIdentifier(name, "table " + q(name) + ": table name", name, null);
                String previous = tableNamesFolded.putIfAbsent(name.toLowerCase(Locale.ROOT), name);
                if (previous != null) {
                    throw SchemaException.reason("duplicate_table")
                            .table(name)
                            .error("duplicate table " + q(name)
                                    + (previous.equals(name) ? "" : " (same name as " + q(previous) + " ignoring case)"));
                }
                List<RawReference> refs = new ArrayList<>();
                tables.add(compileTable(t, name, refs, indexNamesFolded));
                rawRefs.put(name, refs);
            }

            Map<String, TableSchema> byName = new HashMap<>();
            for (TableSchema t : tables) {
                byName.put(t.name(), t);
            }
            List<TableSchema> resolved = new ArrayList<>(tables.size());
            for (TableSchema t : tables) {
                List<RawReference> refs = rawRefs.get(t.name());
                if (refs.isEmpty()) {
                    resolved.add(t);
                    continue;
                }
                List<ReferenceDef> defs = new ArrayList<>();
                for (RawReference r : refs) {
                    defs.add(resolveReference(t, r, byName));
                }
                resolved.add(new TableSchema(t.name(), t.columns(), t.primaryKey(), t.scopePatterns(),
                        t.indexes(), defs, t.extensions()));
            }

            JsonNode subscriptions = root.get("subscriptions");
            if (subscriptions != null && !subscriptions.isNull()) {
                checkSubscriptions(subscriptions, byName);
            } else {
                subscriptions = null;
            }
            JsonNode extensions = root.get("extensions");
            if (extensions != null && !extensions.isNull() && !extensions.isObject()) {
                throw SchemaException.reason("invalid_extensions").error("schema \"extensions\" must be an object");
            }
            return new CompiledSchema(version, resolved, history, subscriptions,
                    extensions == null || extensions.isNull() ? null : extensions);
        }

        // ------------------------------------------------------------ versions

        private int readVersion(JsonNode root) {
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

        private int versionValue(JsonNode n, String key) {
            if (!n.isIntegralNumber() || !n.canConvertToInt() || n.intValue() < 1) {
                throw SchemaException.reason("schema_version")
                        .with(key, n.toString())
                        .error("schema \"" + key + "\" must be an integer >= 1, got " + n);
            }
            return n.intValue();
        }

        private List<SchemaVersionEntry> readHistory(JsonNode root, int version) {
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
                    throw SchemaException.reason("schema_versions")
                            .error("schemaVersions[" + i + "] must be an object");
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

        // ------------------------------------------------------------ tables

        private TableSchema compileTable(JsonNode t, String table, List<RawReference> refsOut,
                                         Map<String, String> indexNamesFolded) {
            String where = "table " + q(table);
            JsonNode cols = t.get("columns");
            if (cols == null || !cols.isArray() || cols.isEmpty()) {
                throw SchemaException.reason("columns_missing")
                        .table(table)
                        .error(where + ": \"columns\" must be a non-empty array");
            }
            List<ColumnSchema> columns = new ArrayList<>();
            Map<String, String> folded = new HashMap<>();
            for (int i = 0; i < cols.size(); i++) {
                JsonNode c = cols.get(i);
                if (!c.isObject()) {
                    throw SchemaException.reason("invalid_column")
                            .table(table)
                            .with("index", i)
                            .error(where + ": columns[" + i + "] must be an object");
                }
                ColumnSchema col = compileColumn(c, table, i);
                String prev = folded.putIfAbsent(col.name().toLowerCase(Locale.ROOT), col.name());
                if (prev != null) {
                    throw SchemaException.reason("duplicate_column")
                            .table(table)
                            .column(col.name())
                            .error(where + ": duplicate column " + q(col.name())
                                    + (prev.equals(col.name()) ? "" : " (same name as " + q(prev) + " ignoring case)"));
                }
                columns.add(col);
            }
            Map<String, Integer> index = new HashMap<>();
            for (int i = 0; i < columns.size(); i++) {
                index.put(columns.get(i).name(), i);
            }

            String pk = compilePrimaryKey(t, table, columns, index);
            List<ScopePattern> scopes = compileScopes(t, table, columns, index);
            List<IndexDef> indexes = compileIndexes(t, table, index, indexNamesFolded);
            readReferences(t, table, columns, index, refsOut);

            JsonNode ext = t.get("extensions");
            if (ext != null && !ext.isNull() && !ext.isObject()) {
                throw SchemaException.reason("invalid_extensions")
                        .table(table)
                        .error(where + ": \"extensions\" must be an object");
            }
            return new TableSchema(table, columns, pk, scopes, indexes, List.of(),
                    ext == null || ext.isNull() ? null : ext);
        }

        private ColumnSchema compileColumn(JsonNode c, String table, int i) {
            String where = "table " + q(table);
            String name = requireString(c, "name", table, null, where + " columns[" + i + "]");
            checkIdentifier(name, "table " + q(table) + " column " + q(name) + ": column name", table, name);
            String cwhere = where + " column " + q(name);

            JsonNode typeNode = c.get("type");
            if (typeNode == null || !typeNode.isTextual()) {
                throw SchemaException.reason("unknown_type")
                        .table(table).column(name)
                        .error(cwhere + ": \"type\" must be one of " + typeNames());
            }
            ColumnType type = ColumnType.ofName(typeNode.textValue());
            if (type == null) {
                throw SchemaException.reason("unknown_type")
                        .table(table).column(name)
                        .with("type", typeNode.textValue())
                        .error(cwhere + ": unknown column type " + q(typeNode.textValue())
                                + " (expected one of " + typeNames() + ")");
            }

            JsonNode nullableNode = c.get("nullable");
            if (nullableNode == null || !nullableNode.isBoolean()) {
                throw SchemaException.reason("nullable_missing")
                        .table(table).column(name)
                        .error(cwhere + ": \"nullable\" must be true or false");
            }
            boolean nullable = nullableNode.booleanValue();

            // §5.10.1 crdtType
            String crdtType = null;
            JsonNode ct = c.get("crdtType");
            boolean hasCrdtType = ct != null && !ct.isNull();
            if (hasCrdtType) {
                if (!ct.isTextual() || ct.textValue().isEmpty()) {
                    throw SchemaException.reason("crdt_type_invalid")
                            .table(table).column(name)
                            .error(cwhere + ": \"crdtType\" must be a non-empty string");
                }
                crdtType = ct.textValue();
            }
            if (type == ColumnType.CRDT) {
                if (crdtType == null) {
                    if (irForm) {
                        throw SchemaException.reason("crdt_type_missing")
                                .table(table).column(name)
                                .error(cwhere + ": a crdt column must declare a \"crdtType\" (§5.10.1)");
                    }
                    crdtType = DEFAULT_CRDT_TYPE;
                }
                if (!crdtTypes.contains(crdtType)) {
                    throw SchemaException.reason("crdt_type_unknown")
                            .table(table).column(name)
                            .with("crdtType", crdtType)
                            .error(cwhere + ": unknown crdtType " + q(crdtType)
                                    + " (registered: " + new TreeSet<>(crdtTypes) + ")");
                }
            } else if (crdtType != null) {
                throw SchemaException.reason("crdt_type_unexpected")
                        .table(table).column(name)
                        .with("type", type.wireName)
                        .error(cwhere + ": \"crdtType\" is only allowed on a crdt column, not on a "
                                + type.wireName + " column");
            }

            // §5.11 encrypted / declaredType
            boolean encrypted = false;
            JsonNode enc = c.get("encrypted");
            if (enc != null && !enc.isNull()) {
                if (!enc.isBoolean()) {
                    throw SchemaException.reason("encrypted_invalid")
                            .table(table).column(name)
                            .error(cwhere + ": \"encrypted\" must be true or false");
                }
                encrypted = enc.booleanValue();
            }
            ColumnType declaredType = null;
            JsonNode dt = c.get("declaredType");
            if (dt != null && !dt.isNull()) {
                if (!dt.isTextual() || ColumnType.ofName(dt.textValue()) == null) {
                    throw SchemaException.reason("declared_type_unknown")
                            .table(table).column(name)
                            .with("declaredType", dt.isTextual() ? dt.textValue() : dt.toString())
                            .error(cwhere + ": unknown declaredType " + (dt.isTextual() ? q(dt.textValue()) : dt.toString())
                                    + " (expected one of " + typeNames() + ")");
                }
                declaredType = ColumnType.ofName(dt.textValue());
            }
            if (encrypted) {
                if (type != ColumnType.BYTES) {
                    throw SchemaException.reason("encrypted_type")
                            .table(table).column(name)
                            .with("type", type.wireName)
                            .error(cwhere + ": an encrypted column must have wire type bytes, not "
                                    + type.wireName + " (§5.11)");
                }
                if (declaredType == null) {
                    throw SchemaException.reason("declared_type_missing")
                            .table(table).column(name)
                            .error(cwhere + ": an encrypted column must declare its \"declaredType\" (§5.11)");
                }
                if (declaredType == ColumnType.CRDT) {
                    throw SchemaException.reason("encrypted_crdt")
                            .table(table).column(name)
                            .error(cwhere + ": a crdt column cannot be encrypted; the server merges crdt state in plaintext (§5.11)");
                }
            } else if (declaredType != null) {
                throw SchemaException.reason("declared_type_unexpected")
                        .table(table).column(name)
                        .error(cwhere + ": \"declaredType\" is only allowed on an encrypted column");
            }
            return new ColumnSchema(name, type, nullable, crdtType, encrypted, declaredType);
        }

        private String compilePrimaryKey(JsonNode t, String table, List<ColumnSchema> columns,
                                         Map<String, Integer> index) {
            String where = "table " + q(table);
            JsonNode pkNode = t.get("primaryKey");
            if (pkNode == null || !pkNode.isTextual() || pkNode.textValue().isEmpty()) {
                throw SchemaException.reason("primary_key_missing")
                        .table(table)
                        .error(where + ": \"primaryKey\" must name one column");
            }
            String pk = pkNode.textValue();
            Integer at = index.get(pk);
            if (at == null) {
                throw SchemaException.reason("primary_key_unknown_column")
                        .table(table).column(pk)
                        .error(where + ": primary key " + q(pk) + " is not a column of the table");
            }
            ColumnSchema col = columns.get(at);
            if (col.encrypted()) {
                throw SchemaException.reason("primary_key_encrypted")
                        .table(table).column(pk)
                        .error(where + ": primary key column " + q(pk)
                                + " cannot be encrypted; the row id is a plaintext server-side identity (§5.11)");
            }
            if (!isPrimaryKeyEligible(col.type())) {
                throw SchemaException.reason("primary_key_ineligible_type")
                        .table(table).column(pk)
                        .with("type", col.type().wireName)
                        .error(where + ": primary key column " + q(pk) + " has type " + col.type().wireName
                                + ", which is not eligible for a primary key (string, integer, boolean or json; §2.4)");
            }
            if (col.nullable()) {
                throw SchemaException.reason("primary_key_nullable")
                        .table(table).column(pk)
                        .error(where + ": primary key column " + q(pk)
                                + " must not be nullable; every row needs a row id (§2.2)");
            }
            return pk;
        }

        private List<ScopePattern> compileScopes(JsonNode t, String table, List<ColumnSchema> columns,
                                                 Map<String, Integer> index) {
            String where = "table " + q(table);
            JsonNode scopes = t.get("scopes");
            if (scopes == null || scopes.isNull() || (scopes.isArray() && scopes.isEmpty())) {
                throw SchemaException.reason("scopes_missing")
                        .table(table)
                        .error(where + ": a synced table must declare at least one scope pattern (§3.1)");
            }
            if (!scopes.isArray()) {
                throw SchemaException.reason("scopes_missing")
                        .table(table)
                        .error(where + ": \"scopes\" must be an array of scope patterns");
            }
            List<ScopePattern> out = new ArrayList<>();
            Map<String, ScopePattern> byVariable = new HashMap<>();
            for (int i = 0; i < scopes.size(); i++) {
                JsonNode s = scopes.get(i);
                String pattern;
                String declaredVariable = null;
                String column = null;
                if (s.isTextual()) {
                    pattern = s.textValue();
                } else if (s.isObject()) {
                    pattern = requireString(s, "pattern", table, null, where + " scopes[" + i + "]");
                    JsonNode v = s.get("variable");
                    if (v != null && !v.isNull()) {
                        if (!v.isTextual()) {
                            throw SchemaException.reason("scope_pattern_invalid")
                                    .table(table).with("pattern", pattern)
                                    .error(where + ": scope pattern " + q(pattern) + " has a non-string \"variable\"");
                        }
                        declaredVariable = v.textValue();
                    }
                    JsonNode cn = s.get("column");
                    if (cn != null && !cn.isNull()) {
                        if (!cn.isTextual() || cn.textValue().isEmpty()) {
                            throw SchemaException.reason("scope_pattern_invalid")
                                    .table(table).with("pattern", pattern)
                                    .error(where + ": scope pattern " + q(pattern) + " has an invalid \"column\"");
                        }
                        column = cn.textValue();
                    }
                } else {
                    throw SchemaException.reason("scope_pattern_invalid")
                            .table(table)
                            .error(where + ": scopes[" + i + "] must be a pattern string or an object {pattern, column}");
                }
                String[] parsed = parsePattern(pattern, table);
                String prefix = parsed[0];
                String variable = parsed[1];
                if (declaredVariable != null && !declaredVariable.equals(variable)) {
                    throw SchemaException.reason("scope_variable_mismatch")
                            .table(table).with("pattern", pattern).with("variable", declaredVariable)
                            .error(where + ": scope pattern " + q(pattern) + " declares variable "
                                    + q(declaredVariable) + " but its {variable} is " + q(variable));
                }
                if (column == null) {
                    column = variable;
                }
                Integer at = index.get(column);
                if (at == null) {
                    throw SchemaException.reason("scope_column_unknown")
                            .table(table).column(column).with("pattern", pattern).with("variable", variable)
                            .error(where + ": scope pattern " + q(pattern) + " maps variable " + q(variable)
                                    + " to column " + q(column) + ", which is not a column of the table");
                }
                ColumnSchema col = columns.get(at);
                if (col.encrypted()) {
                    throw SchemaException.reason("scope_column_encrypted")
                            .table(table).column(column).with("pattern", pattern)
                            .error(where + ": scope column " + q(column) + " of pattern " + q(pattern)
                                    + " cannot be encrypted; scope values are extracted server-side in plaintext (§5.11)");
                }
                if (col.type().isBinary()) {
                    throw SchemaException.reason("scope_column_type")
                            .table(table).column(column).with("pattern", pattern).with("type", col.type().wireName)
                            .error(where + ": scope column " + q(column) + " of pattern " + q(pattern)
                                    + " has type " + col.type().wireName
                                    + ", which has no scope rendering (§5.10.1)");
                }
                ScopePattern previous = byVariable.get(variable);
                if (previous != null) {
                    if (!previous.column().equals(column)) {
                        throw SchemaException.reason("scope_variable_conflict")
                                .table(table).column(column).with("variable", variable)
                                .with("otherColumn", previous.column())
                                .error(where + ": scope variable " + q(variable) + " maps to two different columns, "
                                        + q(previous.column()) + " and " + q(column) + " (§3.1)");
                    }
                    throw SchemaException.reason("scope_variable_duplicate")
                            .table(table).column(column).with("variable", variable)
                            .error(where + ": scope variable " + q(variable) + " is declared twice (patterns "
                                    + q(previous.pattern()) + " and " + q(pattern) + ")");
                }
                ScopePattern sp = new ScopePattern(pattern, prefix, variable, column, at);
                byVariable.put(variable, sp);
                out.add(sp);
            }
            return out;
        }

        /** Returns {prefix, variable} of a {@code prefix:{variable}} pattern. */
        private String[] parsePattern(String pattern, String table) {
            String where = "table " + q(table);
            int open = pattern.indexOf('{');
            int close = pattern.indexOf('}');
            boolean one = open >= 0 && close > open + 1
                    && pattern.indexOf('{', open + 1) < 0
                    && pattern.indexOf('}', close + 1) < 0;
            if (!one) {
                throw SchemaException.reason("scope_pattern_variable_count")
                        .table(table).with("pattern", pattern)
                        .error(where + ": scope pattern " + q(pattern) + " must contain exactly one {variable}");
            }
            String variable = pattern.substring(open + 1, close);
            if (!IDENTIFIER.matcher(variable).matches()) {
                throw SchemaException.reason("scope_variable_invalid")
                        .table(table).with("pattern", pattern).with("variable", variable)
                        .error(where + ": scope pattern " + q(pattern) + " has an invalid variable name " + q(variable)
                                + " (letters, digits and underscores, not starting with a digit)");
            }
            if (close != pattern.length() - 1 || open < 2 || pattern.charAt(open - 1) != ':') {
                throw SchemaException.reason("scope_pattern_shape")
                        .table(table).with("pattern", pattern)
                        .error(where + ": scope pattern " + q(pattern)
                                + " must have the form 'prefix:{variable}' (a non-empty literal prefix, ':', then the variable)");
            }
            String prefix = pattern.substring(0, open - 1);
            for (int i = 0; i < prefix.length(); i++) {
                char ch = prefix.charAt(i);
                if (Character.isWhitespace(ch) || Character.isISOControl(ch)) {
                    throw SchemaException.reason("scope_pattern_shape")
                            .table(table).with("pattern", pattern)
                            .error(where + ": scope pattern " + q(pattern)
                                    + " has whitespace or a control character in its prefix");
                }
            }
            return new String[] {prefix, variable};
        }

        private List<IndexDef> compileIndexes(JsonNode t, String table, Map<String, Integer> index,
                                              Map<String, String> indexNamesFolded) {
            String where = "table " + q(table);
            JsonNode idx = t.get("indexes");
            List<IndexDef> out = new ArrayList<>();
            if (idx == null || idx.isNull()) {
                return out;
            }
            if (!idx.isArray()) {
                throw SchemaException.reason("index_invalid")
                        .table(table)
                        .error(where + ": \"indexes\" must be an array");
            }
            for (int i = 0; i < idx.size(); i++) {
                JsonNode d = idx.get(i);
                if (!d.isObject()) {
                    throw SchemaException.reason("index_invalid")
                            .table(table)
                            .error(where + ": indexes[" + i + "] must be an object");
                }
                String name = requireString(d, "name", table, null, where + " indexes[" + i + "]");
                checkIdentifier(name, "table " + q(table) + ": index name " + q(name), table, null);
                String prev = indexNamesFolded.putIfAbsent(name.toLowerCase(Locale.ROOT), table);
                if (prev != null) {
                    throw SchemaException.reason("index_duplicate")
                            .table(table).with("index", name)
                            .error(where + ": duplicate index name " + q(name)
                                    + (prev.equals(table) ? "" : " (also declared on table " + q(prev) + ")"));
                }
                JsonNode cols = d.get("columns");
                if (cols == null || !cols.isArray() || cols.isEmpty()) {
                    throw SchemaException.reason("index_invalid")
                            .table(table).with("index", name)
                            .error(where + ": index " + q(name) + " must list at least one column");
                }
                List<String> names = new ArrayList<>();
                Set<String> seen = new HashSet<>();
                for (JsonNode cn : cols) {
                    if (!cn.isTextual()) {
                        throw SchemaException.reason("index_invalid")
                                .table(table).with("index", name)
                                .error(where + ": index " + q(name) + " columns must be column names");
                    }
                    String c = cn.textValue();
                    if (!index.containsKey(c)) {
                        throw SchemaException.reason("index_column_unknown")
                                .table(table).column(c).with("index", name)
                                .error(where + ": index " + q(name) + " names column " + q(c)
                                        + ", which is not a column of the table");
                    }
                    if (!seen.add(c)) {
                        throw SchemaException.reason("index_invalid")
                                .table(table).column(c).with("index", name)
                                .error(where + ": index " + q(name) + " lists column " + q(c) + " twice");
                    }
                    names.add(c);
                }
                JsonNode u = d.get("unique");
                if (u != null && !u.isNull() && !u.isBoolean()) {
                    throw SchemaException.reason("index_invalid")
                            .table(table).with("index", name)
                            .error(where + ": index " + q(name) + " \"unique\" must be true or false");
                }
                out.add(new IndexDef(name, names, u != null && u.booleanValue()));
            }
            return out;
        }

        private void readReferences(JsonNode t, String table, List<ColumnSchema> columns,
                                    Map<String, Integer> index, List<RawReference> out) {
            String where = "table " + q(table);
            JsonNode refs = t.get("references");
            if (refs == null || refs.isNull()) {
                return;
            }
            if (!refs.isArray()) {
                throw SchemaException.reason("reference_invalid")
                        .table(table)
                        .error(where + ": \"references\" must be an array");
            }
            Set<String> seen = new HashSet<>();
            for (int i = 0; i < refs.size(); i++) {
                JsonNode r = refs.get(i);
                if (!r.isObject()) {
                    throw SchemaException.reason("reference_invalid")
                            .table(table)
                            .error(where + ": references[" + i + "] must be an object");
                }
                String column = requireString(r, "column", table, null, where + " references[" + i + "]");
                String parent = requireString(r, "parentTable", table, column,
                        where + " column " + q(column) + " reference");
                if (!index.containsKey(column)) {
                    throw SchemaException.reason("reference_column_unknown")
                            .table(table).column(column).with("parentTable", parent)
                            .error(where + ": reference column " + q(column) + " is not a column of the table");
                }
                ReferenceDef.OnDelete onDelete = ReferenceDef.OnDelete.RESTRICT;
                JsonNode od = r.get("onDelete");
                if (od != null && !od.isNull()) {
                    onDelete = od.isTextual() ? ReferenceDef.OnDelete.ofIrName(od.textValue()) : null;
                    if (onDelete == null) {
                        throw SchemaException.reason("reference_on_delete")
                                .table(table).column(column).with("onDelete", od.asText())
                                .error(where + " column " + q(column) + ": reference onDelete " + od
                                        + " is not one of RESTRICT, CASCADE, SET NULL (§6.11)");
                    }
                }
                if (!seen.add(column)) {
                    throw SchemaException.reason("reference_duplicate")
                            .table(table).column(column)
                            .error(where + " column " + q(column) + ": declares more than one reference (§6.11)");
                }
                if (onDelete == ReferenceDef.OnDelete.SET_NULL && !columns.get(index.get(column)).nullable()) {
                    throw SchemaException.reason("reference_set_null_not_nullable")
                            .table(table).column(column)
                            .error(where + " column " + q(column)
                                    + ": ON DELETE SET NULL requires a nullable column (§6.11)");
                }
                out.add(new RawReference(column, parent, onDelete));
            }
        }

        private ReferenceDef resolveReference(TableSchema child, RawReference r, Map<String, TableSchema> byName) {
            String where = "table " + q(child.name()) + " column " + q(r.column);
            TableSchema parent = byName.get(r.parentTable);
            if (parent == null) {
                throw SchemaException.reason("reference_parent_unknown")
                        .table(child.name()).column(r.column).with("parentTable", r.parentTable)
                        .error(where + ": references table " + q(r.parentTable) + ", which is not a table of the schema");
            }
            ColumnSchema col = child.column(r.column);
            ColumnSchema pk = parent.primaryKeyColumn();
            if (col.type() != pk.type() || col.encrypted()) {
                throw SchemaException.reason("reference_type_mismatch")
                        .table(child.name()).column(r.column).with("parentTable", r.parentTable)
                        .with("type", col.type().wireName).with("parentType", pk.type().wireName)
                        .error(where + ": type " + col.type().wireName + (col.encrypted() ? " (encrypted)" : "")
                                + " differs from the type " + pk.type().wireName + " of primary key "
                                + q(parent.name() + "." + pk.name()) + " (§6.11)");
            }
            Set<String> childPatterns = patternSet(child);
            Set<String> parentPatterns = patternSet(parent);
            if (!childPatterns.equals(parentPatterns)) {
                throw SchemaException.reason("reference_scope_mismatch")
                        .table(child.name()).column(r.column).with("parentTable", r.parentTable)
                        .error(where + ": references table " + q(r.parentTable) + " whose scope patterns "
                                + parentPatterns + " differ from this table's " + childPatterns + " (§6.11)");
            }
            return new ReferenceDef(r.column, r.parentTable, r.onDelete);
        }

        private Set<String> patternSet(TableSchema t) {
            Set<String> s = new TreeSet<>();
            for (ScopePattern p : t.scopePatterns()) {
                s.add(p.pattern());
            }
            return s;
        }

        // ------------------------------------------------------------ subscriptions (light checks)

        private void checkSubscriptions(JsonNode subs, Map<String, TableSchema> byName) {
            if (!subs.isArray()) {
                throw SchemaException.reason("subscription_invalid").error("schema \"subscriptions\" must be an array");
            }
            Set<String> names = new HashSet<>();
            for (int i = 0; i < subs.size(); i++) {
                JsonNode s = subs.get(i);
                if (!s.isObject()) {
                    throw SchemaException.reason("subscription_invalid")
                            .error("subscriptions[" + i + "] must be an object");
                }
                String name = requireString(s, "name", null, null, "subscriptions[" + i + "]");
                if (!names.add(name)) {
                    throw SchemaException.reason("subscription_duplicate")
                            .with("subscription", name)
                            .error("duplicate subscription " + q(name));
                }
                String table = requireString(s, "table", null, null, "subscription " + q(name));
                TableSchema t = byName.get(table);
                if (t == null) {
                    throw SchemaException.reason("subscription_table_unknown")
                            .table(table).with("subscription", name)
                            .error("subscription " + q(name) + " names table " + q(table)
                                    + ", which is not a table of the schema");
                }
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
                for (String v : variables) {
                    if (!t.hasScopeVariable(v)) {
                        throw SchemaException.reason("subscription_variable_unknown")
                                .table(table).with("subscription", name).with("variable", v)
                                .error("subscription " + q(name) + ": table " + q(table)
                                        + " declares no scope variable " + q(v));
                    }
                }
            }
        }

        // ------------------------------------------------------------ primitives

        private static String requireString(JsonNode obj, String key, String table, String column, String where) {
            JsonNode n = obj.get(key);
            if (n == null || !n.isTextual() || n.textValue().isEmpty()) {
                throw SchemaException.reason("missing_field")
                        .table(table).column(column).with("field", key)
                        .error(where + ": \"" + key + "\" must be a non-empty string");
            }
            return n.textValue();
        }

        /** @param subject the message lead-in naming the identifier, e.g. {@code table "t" column "c": column name} */
        private static void checkIdentifier(String name, String subject, String table, String column) {
            if (!IDENTIFIER.matcher(name).matches()) {
                throw SchemaException.reason("invalid_identifier")
                        .table(table).column(column).with("name", name)
                        .error(subject + " is not a valid identifier"
                                + " (ASCII letters, digits and underscores, not starting with a digit)");
            }
            int bytes = name.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > MAX_IDENTIFIER_BYTES) {
                throw SchemaException.reason("identifier_too_long")
                        .table(table).column(column).with("name", name).with("bytes", bytes)
                        .error(subject + " is " + bytes + " bytes long; the limit is " + MAX_IDENTIFIER_BYTES
                                + " (PostgreSQL identifier length)");
            }
            String lower = name.toLowerCase(Locale.ROOT);
            for (String prefix : RESERVED_PREFIXES) {
                if (lower.startsWith(prefix)) {
                    throw SchemaException.reason("reserved_identifier")
                            .table(table).column(column).with("name", name).with("prefix", prefix)
                            .error(subject + " uses the reserved prefix " + q(prefix));
                }
            }
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

    static boolean isPrimaryKeyEligible(ColumnType type) {
        return type == ColumnType.STRING || type == ColumnType.INTEGER
                || type == ColumnType.BOOLEAN || type == ColumnType.JSON;
    }
}
