package dev.syncular.server.schema;

import static dev.syncular.server.schema.SchemaException.q;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The served schema window (§9 {@code schemaWindow}): compiled schemas from the current version down to
 * the oldest version still served. Validated on construction; an invalid window fails before storage or
 * serving starts.
 *
 * <p>Rules: the first entry is the current schema; versions decrease strictly; every table of an older
 * schema exists in the current schema with the same primary key, references and scope patterns, and its
 * columns are a prefix of the current table's columns with identical definitions (name, type, nullable,
 * crdtType, encrypted, declaredType — i.e. the same codec), the current table's appended columns being
 * nullable. Tables that the current schema adds are allowed (older clients receive no changes for them).
 */
public final class SchemaWindow {
    private final List<CompiledSchema> schemas;

    private SchemaWindow(List<CompiledSchema> schemas) {
        this.schemas = schemas;
    }

    /** A window of just the current schema. */
    public static SchemaWindow single(CompiledSchema current) {
        return of(List.of(current));
    }

    /** Validates and builds a window; {@code newestFirst.get(0)} is taken as the current schema. */
    public static SchemaWindow of(List<CompiledSchema> newestFirst) {
        Objects.requireNonNull(newestFirst, "newestFirst");
        if (newestFirst.isEmpty()) {
            throw SchemaException.reason("window_empty")
                    .error("schema window must contain at least the current schema");
        }
        List<CompiledSchema> list = List.copyOf(newestFirst);
        CompiledSchema current = list.get(0);
        for (int i = 1; i < list.size(); i++) {
            CompiledSchema older = list.get(i);
            CompiledSchema newer = list.get(i - 1);
            if (older.version() >= newer.version()) {
                throw SchemaException.reason("window_order")
                        .with("version", older.version())
                        .with("previousVersion", newer.version())
                        .error("schema window versions must decrease strictly: version " + older.version()
                                + " follows version " + newer.version());
            }
            checkCompatible(current, older);
        }
        return new SchemaWindow(list);
    }

    /** Validates that {@code newestFirst} starts with the running {@code current} schema, then builds it. */
    public static SchemaWindow of(CompiledSchema current, List<CompiledSchema> newestFirst) {
        Objects.requireNonNull(current, "current");
        if (newestFirst.isEmpty() || !newestFirst.get(0).equals(current)) {
            throw SchemaException.reason("window_current")
                    .with("version", current.version())
                    .error("the first schema of the window must be the current schema (version "
                            + current.version() + ")"
                            + (newestFirst.isEmpty()
                                    ? ""
                                    : ", got version " + newestFirst.get(0).version()));
        }
        return of(newestFirst);
    }

    /**
     * The start-up rule for one older document of a window (§9): its version is older than {@code current}'s, listed
     * in {@code current}'s {@code schemaVersions} history when it has one, and its tables compatible with
     * {@code current} (see the class comment). Start-up ({@code syncular.schema.window}) and a schema change's plan
     * ({@link ImpliedWindow}) both decide through it.
     *
     * @throws SchemaException naming the rule ({@code reason}), the version and, where one is at fault, the table
     *     and column
     */
    public static void checkOlder(CompiledSchema current, CompiledSchema older) {
        int v = older.version();
        if (v >= current.version()) {
            throw SchemaException.reason("window_not_older")
                    .with("version", v)
                    .with("currentVersion", current.version())
                    .error("schema version " + v + " is not older than the current schema (version "
                            + current.version() + ", syncular.schema.path); the window lists only the older"
                            + " versions still served");
        }
        if (!current.schemaVersions().isEmpty()
                && current.schemaVersions().stream().noneMatch(e -> e.version() == v)) {
            throw SchemaException.reason("window_not_in_history")
                    .with("version", v)
                    .error("schema version " + v + " is not in the current schema's schemaVersions history "
                            + current.schemaVersions().stream()
                                    .map(SchemaVersionEntry::version)
                                    .toList());
        }
        checkCompatible(current, older);
    }

    private static void checkCompatible(CompiledSchema current, CompiledSchema older) {
        int v = older.version();
        String where = "schema window version " + v;
        for (TableSchema old : older.tables()) {
            String tw = where + ": table " + q(old.name());
            TableSchema cur = current.table(old.name());
            if (cur == null) {
                throw fail(
                        "window_table_removed",
                        v,
                        old.name(),
                        null,
                        tw + " is missing from the current schema (version " + current.version() + ")");
            }
            if (!old.primaryKey().equals(cur.primaryKey())) {
                throw fail(
                        "window_primary_key",
                        v,
                        old.name(),
                        old.primaryKey(),
                        tw + ": primary key " + q(old.primaryKey()) + " became " + q(cur.primaryKey())
                                + " in the current schema");
            }
            List<ColumnSchema> oc = old.columns();
            List<ColumnSchema> cc = cur.columns();
            if (cc.size() < oc.size()) {
                ColumnSchema missing = oc.get(cc.size());
                throw fail(
                        "window_column_removed",
                        v,
                        old.name(),
                        missing.name(),
                        tw + " column " + q(missing.name()) + " is missing from the current schema");
            }
            for (int i = 0; i < oc.size(); i++) {
                ColumnSchema o = oc.get(i);
                ColumnSchema c = cc.get(i);
                if (!o.name().equals(c.name())) {
                    throw fail(
                            "window_column_changed",
                            v,
                            old.name(),
                            o.name(),
                            tw + " column " + q(o.name()) + " at position " + i + " became " + q(c.name())
                                    + " in the current schema; existing columns must keep their order");
                }
                if (!o.equals(c)) {
                    throw fail(
                            "window_column_changed",
                            v,
                            old.name(),
                            o.name(),
                            tw + " column " + q(o.name()) + " changed its definition: " + describe(o) + " became "
                                    + describe(c));
                }
            }
            for (int i = oc.size(); i < cc.size(); i++) {
                ColumnSchema c = cc.get(i);
                if (!c.nullable()) {
                    throw fail(
                            "window_appended_not_nullable",
                            v,
                            old.name(),
                            c.name(),
                            tw + ": column " + q(c.name()) + " appended after version " + v + " must be nullable");
                }
            }
            if (!old.scopePatterns().equals(cur.scopePatterns())) {
                throw fail(
                        "window_scopes_changed",
                        v,
                        old.name(),
                        null,
                        tw + ": scope patterns " + patterns(old) + " became " + patterns(cur)
                                + " in the current schema");
            }
            if (!old.references().equals(cur.references())) {
                throw fail(
                        "window_references_changed",
                        v,
                        old.name(),
                        null,
                        tw + ": references " + old.references() + " became " + cur.references()
                                + " in the current schema");
            }
        }
    }

    private static SchemaException fail(String reason, int version, String table, String column, String message) {
        return SchemaException.reason(reason)
                .with("version", version)
                .table(table)
                .column(column)
                .error(message);
    }

    private static String describe(ColumnSchema c) {
        StringBuilder sb = new StringBuilder(c.type().wireName);
        sb.append(c.nullable() ? " nullable" : " not null");
        if (c.crdtType() != null) {
            sb.append(" crdtType=").append(c.crdtType());
        }
        if (c.encrypted()) {
            sb.append(" encrypted declaredType=").append(c.declaredType() == null ? "?" : c.declaredType().wireName);
        }
        return sb.toString();
    }

    private static List<String> patterns(TableSchema t) {
        List<String> out = new ArrayList<>();
        for (ScopePattern p : t.scopePatterns()) {
            out.add(p.pattern() + "->" + p.column());
        }
        return out;
    }

    /** The current (newest) schema: storage, write fences, authorization and validators use it. */
    public CompiledSchema current() {
        return schemas.get(0);
    }

    /** The oldest served schema: a floor response names its version as required. */
    public CompiledSchema oldest() {
        return schemas.get(schemas.size() - 1);
    }

    /** The schema of a served version, or {@code null} when the version is not in the window. */
    public CompiledSchema forVersion(int version) {
        for (CompiledSchema s : schemas) {
            if (s.version() == version) {
                return s;
            }
        }
        return null;
    }

    public boolean serves(int version) {
        return forVersion(version) != null;
    }

    /** Schemas newest first. */
    public List<CompiledSchema> schemas() {
        return schemas;
    }

    /** Served versions, newest first. */
    public List<Integer> versions() {
        List<Integer> out = new ArrayList<>(schemas.size());
        for (CompiledSchema s : schemas) {
            out.add(s.version());
        }
        return out;
    }

    @Override
    public String toString() {
        return "SchemaWindow" + versions();
    }
}
