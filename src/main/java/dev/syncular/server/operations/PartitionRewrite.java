package dev.syncular.server.operations;

import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;
import java.util.function.IntFunction;

/**
 * REMOTE.md §2 partition rewriting of one registered statement for PostgreSQL. Every table occurrence of the
 * relation plan is replaced by a derived relation selecting the table's application columns from its row table
 * with {@code _sync_partition = $1}; an occurrence without an explicit alias keeps its name as the derived
 * relation's alias, so qualified column references still resolve. The positional {@code ?} placeholders become
 * {@code $2, $3, ...} in order (request values are only ever bound, never put into the text); the whole
 * statement is wrapped as {@code SELECT * FROM (...) AS "_syncular_registered_query" LIMIT $n}.
 *
 * <p>One dialect bridge: SyQL lowers an inactive {@code when(...)} condition to the SQLite literal {@code 1}
 * ({@code ... and 1 order by ...}). An integer literal {@code 1}/{@code 0} standing alone as a boolean operand
 * (after {@code AND}/{@code OR}/{@code WHERE}/{@code ON}/{@code HAVING}/{@code NOT}, before {@code AND}/{@code OR},
 * a closing parenthesis, a clause keyword or the end) is written as {@code TRUE}/{@code FALSE}, which PostgreSQL
 * requires there.
 */
public final class PartitionRewrite {
    private static final Set<String> BEFORE_BOOLEAN = Set.of("and", "or", "where", "on", "having", "not");
    private static final Set<String> AFTER_BOOLEAN = Set.of(
            "and", "or", "order", "group", "limit", "having", "window", "union", "except", "intersect", "offset");
    public static final String WRAPPER_ALIAS = "\"_syncular_registered_query\"";

    private PartitionRewrite() {}

    /**
     * @param physical the quoted, qualified row table of an application table
     * @return the PostgreSQL text: {@code $1} the partition, then the binds, then the {@code LIMIT}
     */
    public static String rewrite(
            QueryDefinition.Statement statement, CompiledSchema schema, Function<String, String> physical) {
        return rewrite(statement, schema, physical, n -> "$" + n);
    }

    /**
     * {@link #rewrite(QueryDefinition.Statement, CompiledSchema, Function)} with parameter {@code n} (1 the
     * partition, then the binds, then the {@code LIMIT}) written as {@code placeholder.apply(n)}.
     */
    public static String rewrite(
            QueryDefinition.Statement statement,
            CompiledSchema schema,
            Function<String, String> physical,
            IntFunction<String> placeholder) {
        String sql = statement.positionalSql();
        List<SqlTokens.Token> tokens;
        try {
            tokens = SqlTokens.of(sql);
        } catch (SqlTokens.Unreadable e) {
            throw new IllegalStateException("a registered statement became unreadable", e); // checked at load
        }
        StringBuilder out = new StringBuilder(sql.length() + 256);
        out.append("SELECT * FROM (");
        int copied = 0;
        int relation = 0;
        int param = 1;
        List<QueryDefinition.Relation> relations = statement.relations();
        for (int t = 0; t < tokens.size(); t++) {
            SqlTokens.Token token = tokens.get(t);
            if (relation < relations.size() && relations.get(relation).start() == token.start()) {
                QueryDefinition.Relation r = relations.get(relation++);
                out.append(sql, copied, token.start());
                out.append(derived(schema.table(r.table()), physical.apply(r.table()), placeholder.apply(1)));
                if (r.alias().isEmpty()) {
                    out.append(" AS ").append(token.text());
                }
                copied = token.end();
            } else if (token.kind() == SqlTokens.Kind.PLACEHOLDER) {
                out.append(sql, copied, token.start()).append(placeholder.apply(++param));
                copied = token.end();
            } else if (token.kind() == SqlTokens.Kind.NUMBER
                    && (token.text().equals("1") || token.text().equals("0"))
                    && t > 0
                    && tokens.get(t - 1).kind() == SqlTokens.Kind.WORD
                    && BEFORE_BOOLEAN.contains(tokens.get(t - 1).text().toLowerCase(Locale.ROOT))
                    && (t + 1 == tokens.size()
                            || tokens.get(t + 1).text().equals(")")
                            || (tokens.get(t + 1).kind() == SqlTokens.Kind.WORD
                                    && AFTER_BOOLEAN.contains(
                                            tokens.get(t + 1).text().toLowerCase(Locale.ROOT))))) {
                out.append(sql, copied, token.start()).append(token.text().equals("1") ? "TRUE" : "FALSE");
                copied = token.end();
            }
        }
        out.append(sql, copied, sql.length());
        out.append(") AS ").append(WRAPPER_ALIAS).append(" LIMIT ").append(placeholder.apply(param + 1));
        return out.toString();
    }

    /** {@code (SELECT "c1", "c2", ... FROM <row table> WHERE "_sync_partition" = $1)}. */
    static String derived(TableSchema table, String physicalName, String partition) {
        StringBuilder sb = new StringBuilder("(SELECT ");
        boolean first = true;
        for (ColumnSchema c : table.columns()) {
            if (!first) {
                sb.append(", ");
            }
            first = false;
            sb.append(quote(c.name()));
        }
        return sb.append(" FROM ")
                .append(physicalName)
                .append(" WHERE \"_sync_partition\" = ")
                .append(partition)
                .append(')')
                .toString();
    }

    static String quote(String ident) {
        return '"' + ident.replace("\"", "\"\"") + '"';
    }
}
