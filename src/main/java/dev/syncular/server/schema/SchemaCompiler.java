package dev.syncular.server.schema;

import static dev.syncular.server.schema.SchemaException.q;

import dev.syncular.server.wire.ColumnType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Compiles a parsed {@link SchemaIr} into a {@link CompiledSchema} of {@link TableSchema}s, rejecting every
 * schema that must not be served with a {@link SchemaException} before anything starts: identifiers and
 * duplicates, the row-codec column metadata and primary-key eligibility (§2.4), scope patterns — at least
 * one per table, one variable per pattern, one column per variable (§3.1) — {@code crdtType} (§5.10.1),
 * encrypted columns (§5.11), indexes, declared references (§6.11) and subscription templates.
 */
final class SchemaCompiler {
    /** An identifier: ASCII letters, digits and underscores, not starting with a digit. */
    static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private final Set<String> crdtTypes;
    private final boolean irForm;

    private SchemaCompiler(Set<String> crdtTypes, boolean irForm) {
        this.crdtTypes = crdtTypes;
        this.irForm = irForm;
    }

    /** @param crdtTypes the merger names the host registers; a {@code crdtType} outside it is rejected */
    static CompiledSchema compile(SchemaIr ir, Set<String> crdtTypes) {
        return new SchemaCompiler(crdtTypes, ir.irForm()).compile(ir);
    }

    private CompiledSchema compile(SchemaIr ir) {
        List<TableSchema> tables = new ArrayList<>();
        Map<String, String> tableNamesFolded = new HashMap<>();
        Map<String, String> indexNamesFolded = new HashMap<>();
        for (SchemaIr.Table t : ir.tables()) {
            String name = t.name();
            checkIdentifier(name, "table " + q(name) + ": table name", name, null);
            String previous = tableNamesFolded.putIfAbsent(name.toLowerCase(Locale.ROOT), name);
            if (previous != null) {
                throw SchemaException.reason("duplicate_table")
                        .table(name)
                        .error("duplicate table " + q(name)
                                + (previous.equals(name) ? "" : " (same name as " + q(previous) + " ignoring case)"));
            }
            tables.add(compileTable(t, indexNamesFolded));
        }

        Map<String, TableSchema> byName = new HashMap<>();
        for (TableSchema t : tables) {
            byName.put(t.name(), t);
        }
        List<TableSchema> resolved = new ArrayList<>(tables.size());
        for (int i = 0; i < tables.size(); i++) {
            TableSchema t = tables.get(i);
            List<SchemaIr.Reference> refs = ir.tables().get(i).references();
            if (refs.isEmpty()) {
                resolved.add(t);
                continue;
            }
            List<ReferenceDef> defs = new ArrayList<>();
            for (SchemaIr.Reference r : refs) {
                defs.add(resolveReference(t, r, byName));
            }
            resolved.add(new TableSchema(
                    t.name(), t.columns(), t.primaryKey(), t.scopePatterns(), t.indexes(), defs, t.extensions()));
        }
        checkSubscriptions(ir.subscriptionRefs(), byName);
        return new CompiledSchema(ir.version(), resolved, ir.schemaVersions(), ir.subscriptions(), ir.extensions());
    }

    // ---------------------------------------------------------------- tables

    private TableSchema compileTable(SchemaIr.Table t, Map<String, String> indexNamesFolded) {
        String table = t.name();
        String where = "table " + q(table);
        List<ColumnSchema> columns = new ArrayList<>();
        Map<String, String> folded = new HashMap<>();
        for (SchemaIr.Column c : t.columns()) {
            ColumnSchema col = compileColumn(c, table);
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

        checkPrimaryKey(t.primaryKey(), table, columns, index);
        List<ScopePattern> scopes = compileScopes(t.scopes(), table, columns, index);
        List<IndexDef> indexes = compileIndexes(t.indexes(), table, index, indexNamesFolded);
        checkReferences(t.references(), table, columns, index);
        return new TableSchema(table, columns, t.primaryKey(), scopes, indexes, List.of(), t.extensions());
    }

    private ColumnSchema compileColumn(SchemaIr.Column c, String table) {
        String name = c.name();
        checkIdentifier(name, "table " + q(table) + " column " + q(name) + ": column name", table, name);
        String cwhere = "table " + q(table) + " column " + q(name);
        ColumnType type = c.type();

        // §5.10.1 crdtType
        String crdtType = c.crdtType();
        if (type == ColumnType.CRDT) {
            if (crdtType == null) {
                if (irForm) {
                    throw SchemaException.reason("crdt_type_missing")
                            .table(table)
                            .column(name)
                            .error(cwhere + ": a crdt column must declare a \"crdtType\" (§5.10.1)");
                }
                crdtType = SchemaLoader.DEFAULT_CRDT_TYPE;
            }
            if (!crdtTypes.contains(crdtType)) {
                throw SchemaException.reason("crdt_type_unknown")
                        .table(table)
                        .column(name)
                        .with("crdtType", crdtType)
                        .error(cwhere + ": unknown crdtType " + q(crdtType) + " (registered: "
                                + new TreeSet<>(crdtTypes) + ")");
            }
        } else if (crdtType != null) {
            throw SchemaException.reason("crdt_type_unexpected")
                    .table(table)
                    .column(name)
                    .with("type", type.wireName)
                    .error(cwhere + ": \"crdtType\" is only allowed on a crdt column, not on a " + type.wireName
                            + " column");
        }

        // §5.11 encrypted / declaredType
        ColumnType declaredType = c.declaredType();
        if (c.encrypted()) {
            if (type != ColumnType.BYTES) {
                throw SchemaException.reason("encrypted_type")
                        .table(table)
                        .column(name)
                        .with("type", type.wireName)
                        .error(cwhere + ": an encrypted column must have wire type bytes, not " + type.wireName
                                + " (§5.11)");
            }
            if (declaredType == null) {
                throw SchemaException.reason("declared_type_missing")
                        .table(table)
                        .column(name)
                        .error(cwhere + ": an encrypted column must declare its \"declaredType\" (§5.11)");
            }
            if (declaredType == ColumnType.CRDT) {
                throw SchemaException.reason("encrypted_crdt")
                        .table(table)
                        .column(name)
                        .error(
                                cwhere
                                        + ": a crdt column cannot be encrypted; the server merges crdt state in plaintext (§5.11)");
            }
        } else if (declaredType != null) {
            throw SchemaException.reason("declared_type_unexpected")
                    .table(table)
                    .column(name)
                    .error(cwhere + ": \"declaredType\" is only allowed on an encrypted column");
        }
        return new ColumnSchema(name, type, c.nullable(), crdtType, c.encrypted(), declaredType);
    }

    private static void checkPrimaryKey(
            String pk, String table, List<ColumnSchema> columns, Map<String, Integer> index) {
        String where = "table " + q(table);
        Integer at = index.get(pk);
        if (at == null) {
            throw SchemaException.reason("primary_key_unknown_column")
                    .table(table)
                    .column(pk)
                    .error(where + ": primary key " + q(pk) + " is not a column of the table");
        }
        ColumnSchema col = columns.get(at);
        if (col.encrypted()) {
            throw SchemaException.reason("primary_key_encrypted")
                    .table(table)
                    .column(pk)
                    .error(where + ": primary key column " + q(pk)
                            + " cannot be encrypted; the row id is a plaintext server-side identity (§5.11)");
        }
        if (!isPrimaryKeyEligible(col.type())) {
            throw SchemaException.reason("primary_key_ineligible_type")
                    .table(table)
                    .column(pk)
                    .with("type", col.type().wireName)
                    .error(where + ": primary key column " + q(pk) + " has type " + col.type().wireName
                            + ", which is not eligible for a primary key (string, integer, boolean or json; §2.4)");
        }
        if (col.nullable()) {
            throw SchemaException.reason("primary_key_nullable")
                    .table(table)
                    .column(pk)
                    .error(where + ": primary key column " + q(pk)
                            + " must not be nullable; every row needs a row id (§2.2)");
        }
    }

    /** §2.4 primary-key eligibility: a type whose string form every implementation renders identically. */
    static boolean isPrimaryKeyEligible(ColumnType type) {
        return type == ColumnType.STRING
                || type == ColumnType.INTEGER
                || type == ColumnType.BOOLEAN
                || type == ColumnType.JSON;
    }

    private static List<ScopePattern> compileScopes(
            List<SchemaIr.Scope> scopes, String table, List<ColumnSchema> columns, Map<String, Integer> index) {
        String where = "table " + q(table);
        if (scopes.isEmpty()) {
            throw SchemaException.reason("scopes_missing")
                    .table(table)
                    .error(where + ": a synced table must declare at least one scope pattern (§3.1)");
        }
        List<ScopePattern> out = new ArrayList<>();
        Map<String, ScopePattern> byVariable = new HashMap<>();
        for (SchemaIr.Scope s : scopes) {
            String pattern = s.pattern();
            ScopePatternParser.Parts parsed = ScopePatternParser.parse(pattern, table);
            String variable = parsed.variable();
            if (s.variable() != null && !s.variable().equals(variable)) {
                throw SchemaException.reason("scope_variable_mismatch")
                        .table(table)
                        .with("pattern", pattern)
                        .with("variable", s.variable())
                        .error(where + ": scope pattern " + q(pattern) + " declares variable " + q(s.variable())
                                + " but its {variable} is " + q(variable));
            }
            String column = s.column() == null ? variable : s.column();
            Integer at = index.get(column);
            if (at == null) {
                throw SchemaException.reason("scope_column_unknown")
                        .table(table)
                        .column(column)
                        .with("pattern", pattern)
                        .with("variable", variable)
                        .error(where + ": scope pattern " + q(pattern) + " maps variable " + q(variable) + " to column "
                                + q(column) + ", which is not a column of the table");
            }
            ColumnSchema col = columns.get(at);
            if (col.encrypted()) {
                throw SchemaException.reason("scope_column_encrypted")
                        .table(table)
                        .column(column)
                        .with("pattern", pattern)
                        .error(where + ": scope column " + q(column) + " of pattern " + q(pattern)
                                + " cannot be encrypted; scope values are extracted server-side in plaintext (§5.11)");
            }
            if (col.type().isBinary()) {
                throw SchemaException.reason("scope_column_type")
                        .table(table)
                        .column(column)
                        .with("pattern", pattern)
                        .with("type", col.type().wireName)
                        .error(where + ": scope column " + q(column) + " of pattern " + q(pattern)
                                + " has type " + col.type().wireName
                                + ", which has no scope rendering (§5.10.1)");
            }
            ScopePattern previous = byVariable.get(variable);
            if (previous != null) {
                if (!previous.column().equals(column)) {
                    throw SchemaException.reason("scope_variable_conflict")
                            .table(table)
                            .column(column)
                            .with("variable", variable)
                            .with("otherColumn", previous.column())
                            .error(where + ": scope variable " + q(variable) + " maps to two different columns, "
                                    + q(previous.column()) + " and " + q(column) + " (§3.1)");
                }
                throw SchemaException.reason("scope_variable_duplicate")
                        .table(table)
                        .column(column)
                        .with("variable", variable)
                        .error(where + ": scope variable " + q(variable) + " is declared twice (patterns "
                                + q(previous.pattern()) + " and " + q(pattern) + ")");
            }
            ScopePattern sp = new ScopePattern(pattern, parsed.prefix(), variable, column, at);
            byVariable.put(variable, sp);
            out.add(sp);
        }
        return out;
    }

    private static List<IndexDef> compileIndexes(
            List<SchemaIr.Index> declared,
            String table,
            Map<String, Integer> index,
            Map<String, String> indexNamesFolded) {
        String where = "table " + q(table);
        List<IndexDef> out = new ArrayList<>();
        for (SchemaIr.Index d : declared) {
            String name = d.name();
            checkIdentifier(name, "table " + q(table) + ": index name " + q(name), table, null);
            String prev = indexNamesFolded.putIfAbsent(name.toLowerCase(Locale.ROOT), table);
            if (prev != null) {
                throw SchemaException.reason("index_duplicate")
                        .table(table)
                        .with("index", name)
                        .error(where + ": duplicate index name " + q(name)
                                + (prev.equals(table) ? "" : " (also declared on table " + q(prev) + ")"));
            }
            Set<String> seen = new HashSet<>();
            for (String c : d.columns()) {
                if (!index.containsKey(c)) {
                    throw SchemaException.reason("index_column_unknown")
                            .table(table)
                            .column(c)
                            .with("index", name)
                            .error(where + ": index " + q(name) + " names column " + q(c)
                                    + ", which is not a column of the table");
                }
                if (!seen.add(c)) {
                    throw SchemaException.reason("index_invalid")
                            .table(table)
                            .column(c)
                            .with("index", name)
                            .error(where + ": index " + q(name) + " lists column " + q(c) + " twice");
                }
            }
            out.add(new IndexDef(name, d.columns(), d.unique()));
        }
        return out;
    }

    // ---------------------------------------------------------------- references (§6.11)

    /** The checks within the declaring table; {@link #resolveReference} checks the parent once all are known. */
    private static void checkReferences(
            List<SchemaIr.Reference> refs, String table, List<ColumnSchema> columns, Map<String, Integer> index) {
        String where = "table " + q(table);
        Set<String> seen = new HashSet<>();
        for (SchemaIr.Reference r : refs) {
            String column = r.column();
            if (!index.containsKey(column)) {
                throw SchemaException.reason("reference_column_unknown")
                        .table(table)
                        .column(column)
                        .with("parentTable", r.parentTable())
                        .error(where + ": reference column " + q(column) + " is not a column of the table");
            }
            if (!seen.add(column)) {
                throw SchemaException.reason("reference_duplicate")
                        .table(table)
                        .column(column)
                        .error(where + " column " + q(column) + ": declares more than one reference (§6.11)");
            }
            if (r.onDelete() == ReferenceDef.OnDelete.SET_NULL
                    && !columns.get(index.get(column)).nullable()) {
                throw SchemaException.reason("reference_set_null_not_nullable")
                        .table(table)
                        .column(column)
                        .error(where + " column " + q(column)
                                + ": ON DELETE SET NULL requires a nullable column (§6.11)");
            }
        }
    }

    private static ReferenceDef resolveReference(
            TableSchema child, SchemaIr.Reference r, Map<String, TableSchema> byName) {
        String where = "table " + q(child.name()) + " column " + q(r.column());
        TableSchema parent = byName.get(r.parentTable());
        if (parent == null) {
            throw SchemaException.reason("reference_parent_unknown")
                    .table(child.name())
                    .column(r.column())
                    .with("parentTable", r.parentTable())
                    .error(where + ": references table " + q(r.parentTable()) + ", which is not a table of the schema");
        }
        ColumnSchema col = child.column(r.column());
        ColumnSchema pk = parent.primaryKeyColumn();
        if (col.type() != pk.type() || col.encrypted()) {
            throw SchemaException.reason("reference_type_mismatch")
                    .table(child.name())
                    .column(r.column())
                    .with("parentTable", r.parentTable())
                    .with("type", col.type().wireName)
                    .with("parentType", pk.type().wireName)
                    .error(where + ": type " + col.type().wireName + (col.encrypted() ? " (encrypted)" : "")
                            + " differs from the type " + pk.type().wireName + " of primary key "
                            + q(parent.name() + "." + pk.name()) + " (§6.11)");
        }
        Set<String> childPatterns = patternSet(child);
        Set<String> parentPatterns = patternSet(parent);
        if (!childPatterns.equals(parentPatterns)) {
            throw SchemaException.reason("reference_scope_mismatch")
                    .table(child.name())
                    .column(r.column())
                    .with("parentTable", r.parentTable())
                    .error(where + ": references table " + q(r.parentTable()) + " whose scope patterns "
                            + parentPatterns + " differ from this table's " + childPatterns + " (§6.11)");
        }
        return new ReferenceDef(r.column(), r.parentTable(), r.onDelete());
    }

    private static Set<String> patternSet(TableSchema t) {
        Set<String> s = new TreeSet<>();
        for (ScopePattern p : t.scopePatterns()) {
            s.add(p.pattern());
        }
        return s;
    }

    // ---------------------------------------------------------------- subscriptions (light checks)

    private static void checkSubscriptions(List<SchemaIr.Subscription> subs, Map<String, TableSchema> byName) {
        Set<String> names = new HashSet<>();
        for (SchemaIr.Subscription s : subs) {
            String name = s.name();
            if (!names.add(name)) {
                throw SchemaException.reason("subscription_duplicate")
                        .with("subscription", name)
                        .error("duplicate subscription " + q(name));
            }
            String table = s.table();
            TableSchema t = byName.get(table);
            if (t == null) {
                throw SchemaException.reason("subscription_table_unknown")
                        .table(table)
                        .with("subscription", name)
                        .error("subscription " + q(name) + " names table " + q(table)
                                + ", which is not a table of the schema");
            }
            for (String v : s.variables()) {
                if (!t.hasScopeVariable(v)) {
                    throw SchemaException.reason("subscription_variable_unknown")
                            .table(table)
                            .with("subscription", name)
                            .with("variable", v)
                            .error("subscription " + q(name) + ": table " + q(table) + " declares no scope variable "
                                    + q(v));
                }
            }
        }
    }

    // ---------------------------------------------------------------- identifiers

    /** @param subject the message lead-in naming the identifier, e.g. {@code table "t" column "c": column name} */
    private static void checkIdentifier(String name, String subject, String table, String column) {
        if (!IDENTIFIER.matcher(name).matches()) {
            throw SchemaException.reason("invalid_identifier")
                    .table(table)
                    .column(column)
                    .with("name", name)
                    .error(subject + " is not a valid identifier"
                            + " (ASCII letters, digits and underscores, not starting with a digit)");
        }
        int bytes = name.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > SchemaLoader.MAX_IDENTIFIER_BYTES) {
            throw SchemaException.reason("identifier_too_long")
                    .table(table)
                    .column(column)
                    .with("name", name)
                    .with("bytes", bytes)
                    .error(subject + " is " + bytes + " bytes long; the limit is " + SchemaLoader.MAX_IDENTIFIER_BYTES
                            + " (PostgreSQL identifier length)");
        }
        String lower = name.toLowerCase(Locale.ROOT);
        for (String prefix : SchemaLoader.RESERVED_PREFIXES) {
            if (lower.startsWith(prefix)) {
                throw SchemaException.reason("reserved_identifier")
                        .table(table)
                        .column(column)
                        .with("name", name)
                        .with("prefix", prefix)
                        .error(subject + " uses the reserved prefix " + q(prefix));
            }
        }
    }
}
