package dev.syncular.server.operations;

import java.util.List;

/**
 * One registered query as the typegen queries IR ({@code queryIrVersion} 4) describes it: its operation id, the
 * physical statements with their relation plans (REMOTE.md §2), the declared inputs, the result columns and the
 * generated scope coverage (§2.1).
 *
 * @param id            {@code sha256:<hex of the document bytes>/<name>}
 * @param conditions    the activation conditions, bit {@code i} of a statement's mask is condition {@code i}
 * @param access        how the query is authorized (§2.1)
 * @param maxRows       the §2 row cap, 1..10,000
 */
public record QueryDefinition(
        String id,
        String name,
        List<Column> columns,
        List<String> tables,
        List<Input> inputs,
        List<List<String>> conditions,
        List<Statement> statements,
        List<Coverage> coverage,
        Access access,
        int maxRows) {

    public QueryDefinition {
        columns = List.copyOf(columns);
        tables = List.copyOf(tables);
        inputs = List.copyOf(inputs);
        conditions = List.copyOf(conditions);
        statements = List.copyOf(statements);
        coverage = List.copyOf(coverage);
    }

    /** §2.1 registration mode. */
    public enum Access {
        SCOPED,
        PRIVILEGED
    }

    /**
     * A result column: {@code langName} is the key the row carries (the alias typegen writes into the SQL, what
     * the generated client reads), {@code name} the SQL-truth name.
     */
    public record Column(String name, String langName, String type, boolean nullable) {}

    /** A declared value input. */
    public record Input(String name, String type, boolean nullable, boolean required) {}

    /** One physical statement: positional SQL, its relation plan and its binds in placeholder order. */
    public record Statement(int activationMask, String positionalSql, List<Relation> relations, List<Bind> binds) {
        public Statement {
            relations = List.copyOf(relations);
            binds = List.copyOf(binds);
        }
    }

    /**
     * One physical table occurrence: UTF-16 offsets {@code [start, end)} into the positional SQL (Java string
     * indexes), the resolved table and the explicit alias ({@code ""} when none).
     */
    public record Relation(String table, int start, int end, String alias) {}

    /** A positional bind: the input it reads and the declared type. */
    public record Bind(String input, String type) {}

    /**
     * One generated coverage record (§2.1): for {@code table}, the inputs ({@code units}) whose values are the
     * {@code variable} scope values the query reads, plus the fixed scopes of the table's other variables.
     */
    public record Coverage(String table, String variable, List<String> units, List<FixedScope> fixedScopes) {
        public Coverage {
            units = List.copyOf(units);
            fixedScopes = List.copyOf(fixedScopes);
        }
    }

    /** A covered scope variable with the inputs carrying its values. */
    public record FixedScope(String variable, List<String> params) {
        public FixedScope {
            params = List.copyOf(params);
        }
    }
}
