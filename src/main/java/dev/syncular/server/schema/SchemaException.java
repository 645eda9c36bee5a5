package dev.syncular.server.schema;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A schema that cannot be compiled or served: a compile-time configuration error (§2.4, §3.1, §9),
 * raised before storage or serving starts and surfaced to the operator, never on the wire.
 *
 * <p>The code is static ({@link #CODE}); {@link #details()} carries structured facts ({@code table},
 * {@code column}, {@code reason}, ...). Unlike wire errors, the message names the offending table and
 * column, because it is a configuration diagnostic for the operator.
 */
public final class SchemaException extends RuntimeException {
    /** The one code of every schema compile or window error. */
    public static final String CODE = "schema.invalid";

    private static final long serialVersionUID = 1L;

    private final Map<String, Object> details;

    public SchemaException(String message, Map<String, Object> details) {
        this(message, details, null);
    }

    public SchemaException(String message, Map<String, Object> details, Throwable cause) {
        super(message, cause);
        this.details = Collections.unmodifiableMap(new LinkedHashMap<>(details));
    }

    public String code() {
        return CODE;
    }

    /** Structured details: {@code reason} always; {@code table}, {@code column} and others where they apply. */
    public Map<String, Object> details() {
        return details;
    }

    /** The stable reason token, e.g. {@code primary_key_ineligible_type}. */
    public String reason() {
        Object r = details.get("reason");
        return r == null ? null : r.toString();
    }

    /** Quotes a name for a diagnostic: {@code "name"}. */
    static String q(String s) {
        return '"' + s + '"';
    }

    /** Fluent builder for a precise error. */
    static Builder reason(String reason) {
        return new Builder(reason);
    }

    static final class Builder {
        private final Map<String, Object> details = new LinkedHashMap<>();

        private Builder(String reason) {
            details.put("reason", reason);
        }

        Builder table(String table) {
            if (table != null) {
                details.put("table", table);
            }
            return this;
        }

        Builder column(String column) {
            if (column != null) {
                details.put("column", column);
            }
            return this;
        }

        Builder with(String key, Object value) {
            if (value != null) {
                details.put(key, value);
            }
            return this;
        }

        SchemaException error(String message) {
            return new SchemaException(message, details);
        }

        SchemaException error(String message, Throwable cause) {
            return new SchemaException(message, details, cause);
        }
    }
}
