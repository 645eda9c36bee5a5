package dev.syncular.server.schema;

import java.util.Objects;

/**
 * One declared scope pattern of a table (§3.1): {@code 'prefix:{variable}'} mapped to a column.
 *
 * @param pattern     the pattern as declared, e.g. {@code project:{projectId}}
 * @param prefix      the literal text before {@code ":{"}, e.g. {@code project}
 * @param variable    the variable name inside the braces, e.g. {@code projectId}
 * @param column      the column whose value is stored under the variable, e.g. {@code project_id}
 * @param columnIndex the column's position in the table's declaration order
 */
public record ScopePattern(String pattern, String prefix, String variable, String column, int columnIndex) {

    public ScopePattern {
        Objects.requireNonNull(pattern, "pattern");
        Objects.requireNonNull(prefix, "prefix");
        Objects.requireNonNull(variable, "variable");
        Objects.requireNonNull(column, "column");
    }

    /**
     * The scope key of a stored value for the commit→scope-key inverted index (§3.1): the pattern's
     * literal prefix, {@code ':'}, then the value — {@code project:{project_id}} and {@code P1} give
     * {@code project:P1}.
     */
    public String scopeKey(String value) {
        Objects.requireNonNull(value, "value");
        return prefix + ':' + value;
    }
}
