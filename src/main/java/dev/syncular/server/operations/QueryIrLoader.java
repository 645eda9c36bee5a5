package dev.syncular.server.operations;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.wire.Json;
import java.io.IOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Reads a typegen queries IR document ({@code syncular.queries.ir.json}) into {@link QueryDefinition}s and refuses,
 * with one line naming the document and the query, what REMOTE.md §2 does not allow to register: another
 * {@code queryIrVersion} than 4 (version 3 has no relation plans: regenerate), a relation plan that does not
 * match its SQL, a table the running schema does not have, missing/empty/duplicate result columns, a statement
 * with more than one SQL command, bind lists that do not match the placeholders.
 *
 * <p>Plan check: every planned occurrence must be exactly one identifier token of the positional SQL naming its
 * table (a word case-insensitively, a quoted identifier exactly), not schema-qualified; and every identifier that
 * names a schema table, outside literals and not part of a qualified name, must be a planned occurrence. A CTE
 * that reuses a table's name therefore fails closed at registration.
 */
public final class QueryIrLoader {
    public static final int CURRENT_VERSION = 4;
    private static final Set<String> TYPES =
            Set.of("string", "integer", "float", "boolean", "json", "bytes", "blob_ref", "crdt");

    /** How the deployment registers each query: its §2.1 mode and its row cap. */
    public record Registration(Set<String> privileged, int defaultMaxRows, Map<String, Integer> maxRows) {}

    private QueryIrLoader() {}

    /** The operation id prefix of a document: {@code sha256:<hex of its exact bytes>}. */
    public static String documentId(byte[] document) {
        try {
            return "sha256:"
                    + HexFormat.of()
                            .formatHex(MessageDigest.getInstance("SHA-256").digest(document));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public static List<QueryDefinition> load(byte[] document, String source, CompiledSchema schema, Registration reg) {
        JsonNode root;
        try {
            root = Json.readTree(document);
        } catch (IOException e) {
            throw new QueryIrException("queries IR " + source + " is not valid JSON");
        }
        if (root == null || !root.isObject()) {
            throw new QueryIrException("queries IR " + source + " is not a JSON object");
        }
        JsonNode version = root.get("queryIrVersion");
        if (version == null || !version.isInt()) {
            throw new QueryIrException("queries IR " + source + " has no queryIrVersion");
        }
        if (version.intValue() == 3) {
            throw new QueryIrException("queries IR " + source + " is queryIrVersion 3, which carries no relation plans"
                    + " (REMOTE.md §2): regenerate it with the current Syncular typegen (queryIrVersion 4)");
        }
        if (version.intValue() != CURRENT_VERSION) {
            throw new QueryIrException("queries IR " + source + " is queryIrVersion " + version.intValue()
                    + "; this server reads version " + CURRENT_VERSION);
        }
        String prefix = documentId(document);
        JsonNode queries = root.get("queries");
        if (queries == null || !queries.isArray()) {
            throw new QueryIrException("queries IR " + source + " has no queries array");
        }
        List<QueryDefinition> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (JsonNode q : queries) {
            String name = text(q, "name", source, "a query");
            String where = "queries IR " + source + " query " + name;
            if (!names.add(name)) {
                throw new QueryIrException(where + " is defined twice");
            }
            out.add(query(q, prefix + "/" + name, name, where, schema, reg));
        }
        return out;
    }

    private static QueryDefinition query(
            JsonNode q, String id, String name, String where, CompiledSchema schema, Registration reg) {
        List<QueryDefinition.Column> columns = columns(q.get("columns"), where);
        List<String> tables = new ArrayList<>();
        JsonNode tablesNode = q.get("tables");
        if (tablesNode == null || !tablesNode.isArray() || tablesNode.isEmpty()) {
            throw new QueryIrException(where + " names no tables");
        }
        for (JsonNode t : tablesNode) {
            String table = t.asText();
            if (!schema.hasTable(table)) {
                throw new QueryIrException(
                        where + " reads table " + table + ", which the running schema does not have");
            }
            if (tables.contains(table)) {
                throw new QueryIrException(where + " lists table " + table + " twice");
            }
            requireMaterialized(schema.table(table), where);
            tables.add(table);
        }
        List<QueryDefinition.Input> inputs = new ArrayList<>();
        List<List<String>> conditions = new ArrayList<>();
        List<QueryDefinition.Statement> statements = new ArrayList<>();
        JsonNode syql = q.get("syql");
        if (syql != null && syql.isObject()) {
            for (JsonNode in : syql.path("inputs")) {
                String kind = in.path("kind").asText();
                if (!kind.equals("value")) {
                    throw new QueryIrException(
                            where + " has a " + kind + " input, which remote queries do not support yet");
                }
                inputs.add(new QueryDefinition.Input(
                        text(in, "name", where, "an input"),
                        type(in, where),
                        in.path("nullable").asBoolean(false),
                        in.path("required").asBoolean(true)));
            }
            JsonNode plan = syql.path("plan");
            for (JsonNode c : plan.path("conditions")) {
                List<String> controls = new ArrayList<>();
                for (JsonNode ctl : c.path("controls")) {
                    controls.add(ctl.asText());
                }
                if (c.has("bind")) {
                    throw new QueryIrException(
                            where + " has a condition with its own bind, which remote queries do not support yet");
                }
                conditions.add(controls);
            }
            Set<Integer> masks = new HashSet<>();
            for (JsonNode s : plan.path("statements")) {
                if (s.has("sortProfile")) {
                    throw new QueryIrException(where + " has sort profiles, which remote queries do not support yet");
                }
                int mask = s.path("activationMask").asInt(0);
                if (!masks.add(mask) || mask < 0 || (conditions.size() < 31 && mask >= (1 << conditions.size()))) {
                    throw new QueryIrException(where + " has an invalid or repeated activationMask " + mask);
                }
                List<QueryDefinition.Bind> binds = new ArrayList<>();
                for (JsonNode b : s.path("binds")) {
                    if (!b.path("kind").asText().equals("value")) {
                        throw new QueryIrException(where + " has a "
                                + b.path("kind").asText() + " bind, which remote queries do not support yet");
                    }
                    binds.add(new QueryDefinition.Bind(text(b, "input", where, "a bind"), type(b, where)));
                }
                statements.add(statement(s, mask, binds, where, schema, tables));
            }
        } else {
            for (JsonNode p : q.path("params")) {
                inputs.add(new QueryDefinition.Input(text(p, "name", where, "a param"), type(p, where), false, true));
            }
            List<QueryDefinition.Bind> binds = new ArrayList<>();
            for (QueryDefinition.Input in : inputs) {
                binds.add(new QueryDefinition.Bind(in.name(), in.type()));
            }
            statements.add(statement(q, 0, binds, where, schema, tables));
        }
        if (statements.isEmpty()) {
            throw new QueryIrException(where + " has no statements");
        }
        Set<String> inputNames = new HashSet<>();
        for (QueryDefinition.Input in : inputs) {
            if (!inputNames.add(in.name())) {
                throw new QueryIrException(where + " declares input " + in.name() + " twice");
            }
        }
        for (List<String> c : conditions) {
            for (String ctl : c) {
                if (!inputNames.contains(ctl)) {
                    throw new QueryIrException(where + " has a condition on the undeclared input " + ctl);
                }
            }
        }
        for (QueryDefinition.Statement s : statements) {
            for (QueryDefinition.Bind b : s.binds()) {
                if (!inputNames.contains(b.input())) {
                    throw new QueryIrException(where + " binds the undeclared input " + b.input());
                }
            }
        }
        List<QueryDefinition.Coverage> coverage = new ArrayList<>();
        for (JsonNode c : q.path("reactive").path("coverage")) {
            List<String> units = new ArrayList<>();
            for (JsonNode u : c.path("units")) {
                units.add(u.asText());
            }
            List<QueryDefinition.FixedScope> fixed = new ArrayList<>();
            for (JsonNode f : c.path("fixedScopes")) {
                List<String> params = new ArrayList<>();
                for (JsonNode p : f.path("params")) {
                    params.add(p.asText());
                }
                fixed.add(new QueryDefinition.FixedScope(f.path("variable").asText(), params));
            }
            coverage.add(new QueryDefinition.Coverage(
                    c.path("table").asText(), c.path("variable").asText(), units, fixed));
        }
        int maxRows = reg.maxRows().getOrDefault(name, reg.defaultMaxRows());
        if (maxRows < 1 || maxRows > 10_000) {
            throw new QueryIrException(where + " has maxRows " + maxRows + "; it must be from 1 through 10,000");
        }
        QueryDefinition.Access access =
                reg.privileged().contains(name) ? QueryDefinition.Access.PRIVILEGED : QueryDefinition.Access.SCOPED;
        return new QueryDefinition(
                id, name, columns, tables, inputs, conditions, statements, coverage, access, maxRows);
    }

    private static List<QueryDefinition.Column> columns(JsonNode node, String where) {
        if (node == null || !node.isArray() || node.isEmpty()) {
            throw new QueryIrException(where + " has no result columns");
        }
        List<QueryDefinition.Column> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        Set<String> seenLang = new HashSet<>();
        for (JsonNode c : node) {
            String name = text(c, "name", where, "a result column");
            String lang = c.hasNonNull("langName") ? c.get("langName").asText() : name;
            if (name.isEmpty() || lang.isEmpty()) {
                throw new QueryIrException(where + " has a result column without a name");
            }
            if (!seen.add(name) || !seenLang.add(lang.toLowerCase(Locale.ROOT))) {
                throw new QueryIrException(where + " has the result column " + name + " twice");
            }
            out.add(new QueryDefinition.Column(
                    name, lang, type(c, where), c.path("nullable").asBoolean(true)));
        }
        return out;
    }

    private static QueryDefinition.Statement statement(
            JsonNode s,
            int mask,
            List<QueryDefinition.Bind> binds,
            String where,
            CompiledSchema schema,
            List<String> tables) {
        String sql = text(s, "positionalSql", where, "a statement");
        JsonNode rel = s.get("relations");
        if (rel == null || !rel.isArray()) {
            throw new QueryIrException(where + " has a statement without a relation plan: regenerate the queries IR");
        }
        List<SqlTokens.Token> tokens;
        try {
            tokens = SqlTokens.of(sql);
        } catch (SqlTokens.Unreadable e) {
            throw new QueryIrException(where + " has SQL the server cannot read: " + e.getMessage());
        }
        List<QueryDefinition.Relation> relations = new ArrayList<>();
        int lastEnd = -1;
        for (JsonNode r : rel) {
            String table = text(r, "table", where, "a relation");
            int start = r.path("start").asInt(-1);
            int end = r.path("end").asInt(-1);
            String alias = r.hasNonNull("alias") ? r.get("alias").asText() : "";
            if (!tables.contains(table)) {
                throw new QueryIrException(where + " plans table " + table + ", which the query does not list");
            }
            if (start <= lastEnd || end <= start || end > sql.length()) {
                throw new QueryIrException(where + " has a relation plan that does not match its SQL (offsets " + start
                        + ".." + end + ")");
            }
            int index = tokenAt(tokens, start, end);
            if (index < 0 || !tokens.get(index).names(table) || qualified(tokens, index)) {
                throw new QueryIrException(where + " has a relation plan that does not match its SQL (offsets " + start
                        + ".." + end + " do not name " + table + ")");
            }
            lastEnd = end - 1;
            relations.add(new QueryDefinition.Relation(table, start, end, alias));
        }
        int placeholders = 0;
        for (int i = 0; i < tokens.size(); i++) {
            SqlTokens.Token t = tokens.get(i);
            if (t.kind() == SqlTokens.Kind.PLACEHOLDER) {
                placeholders++;
            } else if (t.kind() == SqlTokens.Kind.PUNCT && t.text().equals(";") && i != tokens.size() - 1) {
                throw new QueryIrException(where + " has more than one SQL command in a statement");
            } else if (t.kind() == SqlTokens.Kind.PUNCT && t.text().equals(";")) {
                throw new QueryIrException(where + " ends a statement with ';'");
            } else if (t.isIdentifier() && !qualified(tokens, i) && !partOfQualifiedName(tokens, i)) {
                for (TableSchema table : schema.tables()) {
                    if (t.names(table.name()) && !planned(relations, t)) {
                        throw new QueryIrException(where + " has a relation plan that does not match its SQL (table "
                                + table.name() + " at offset " + t.start() + " is not planned)");
                    }
                }
            }
        }
        if (placeholders != binds.size()) {
            throw new QueryIrException(where + " has " + placeholders + " placeholders but " + binds.size() + " binds");
        }
        return new QueryDefinition.Statement(mask, sql, relations, binds);
    }

    private static boolean planned(List<QueryDefinition.Relation> relations, SqlTokens.Token t) {
        for (QueryDefinition.Relation r : relations) {
            if (r.start() == t.start()) {
                return true;
            }
        }
        return false;
    }

    private static int tokenAt(List<SqlTokens.Token> tokens, int start, int end) {
        for (int i = 0; i < tokens.size(); i++) {
            if (tokens.get(i).start() == start) {
                return tokens.get(i).end() == end && tokens.get(i).isIdentifier() ? i : -1;
            }
        }
        return -1;
    }

    /** Preceded by a dot: {@code schema.table} or {@code alias.column}. */
    private static boolean qualified(List<SqlTokens.Token> tokens, int i) {
        return i > 0
                && tokens.get(i - 1).text().equals(".")
                && tokens.get(i - 1).end() == tokens.get(i).start();
    }

    /** Followed by a dot: the qualifier of {@code table.column}. */
    private static boolean partOfQualifiedName(List<SqlTokens.Token> tokens, int i) {
        return i + 1 < tokens.size()
                && tokens.get(i + 1).text().equals(".")
                && tokens.get(i + 1).start() == tokens.get(i).end();
    }

    private static void requireMaterialized(TableSchema table, String where) {
        JsonNode m = table.extensions() == null ? null : table.extensions().get("materialize");
        if (m != null && m.isBoolean() && !m.booleanValue()) {
            throw new QueryIrException(
                    where + " reads table " + table.name() + ", which is not materialized (materialize: false)");
        }
    }

    private static String type(JsonNode n, String where) {
        String t = n.path("type").asText("");
        if (!TYPES.contains(t)) {
            throw new QueryIrException(where + " uses the unknown type '" + t + "'");
        }
        return t;
    }

    private static String text(JsonNode n, String field, String where, String what) {
        JsonNode v = n == null ? null : n.get(field);
        if (v == null || !v.isTextual()) {
            throw new QueryIrException(where + ": " + what + " has no " + field);
        }
        return v.textValue();
    }
}
