package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.q;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.IndexDef;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.StorageException;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import io.vertx.pgclient.PgException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The declared unique indexes of the row tables (schema IR {@code indexes} with {@code unique: true}, §2.4): one
 * PostgreSQL unique index per declaration on {@code ("_sync_partition", <columns>)}, so a key is unique within a
 * partition, as it is in every client's local SQLite, which holds one partition. NULL never collides (PostgreSQL's
 * default {@code NULLS DISTINCT}, SQLite's rule): a key with a NULL part is never refused. A delete removes the row
 * from its row table (the tombstone lives in {@code sync_tombstones}, §2.2), so a deleted row holds no key.
 *
 * <h2>Names</h2>
 *
 * {@code sync_uq_<index>_<8 hex digits>}: the digits are a SHA-256 prefix of the table, the index name and its
 * columns, so a declaration that changes its columns or table gets a new index, and the old one is dropped.
 *
 * <h2>Start-up</h2>
 *
 * A table the start-up creates (a fresh database, a table a schema upgrade adds) gets its unique indexes in the
 * same transaction. {@link #reconcile} then compares the catalog with the declarations: nothing to do (every boot
 * but the one that changes the declarations) is one catalog read. Otherwise, on one connection outside any
 * transaction and under a session advisory lock (one starter at a time), an index no longer declared (or an invalid
 * leftover) is dropped with {@code DROP INDEX CONCURRENTLY} and a missing one is built with {@code CREATE UNIQUE
 * INDEX CONCURRENTLY}: it blocks no push (it waits for the transactions in flight instead), so a running deployment
 * keeps taking pushes while the index is built. When rows of a partition already share the key, the build fails;
 * its invalid leftover is dropped at once (it would still refuse writes) and the start is refused with
 * {@link StorageException#UNIQUE_INDEX_DUPLICATES}, naming the colliding rows (a bounded list). Before a schema
 * upgrade, {@link #refuseDuplicates} runs the same search for every index the upgrade would build on an existing
 * table, so a table with collisions refuses the start before the upgrade changes anything.
 *
 * <h2>Pushes</h2>
 *
 * The index is the check: a push's row upsert it refuses fails with SQLSTATE 23505 (or 54000 for a key larger than
 * a B-tree entry), which {@link #refusal} turns into {@link StorageException#UNIQUE_VIOLATION}. That costs the push
 * path nothing when no key collides (no read before the write), and it holds across pods: every pod writes to the
 * same index.
 */
final class UniqueIndexes {
    /** The name prefix of every declared unique index (and of nothing else of the storage). */
    static final String PREFIX = "sync_uq_";
    /** Colliding keys listed by a start-up refusal. */
    static final int MAX_COLLISIONS = 20;
    /** Row ids listed per colliding key. */
    static final int MAX_ROW_IDS = 10;
    /** Characters of one key value a start-up refusal shows. */
    static final int MAX_VALUE_CHARS = 80;

    /** One declared unique index as the storage creates it: {@code name} in the catalog, on {@code rowTable}. */
    record Declared(String table, IndexDef index, String name, String rowTable) {}

    private final Pool pool;
    private final String pgSchema;

    UniqueIndexes(Pool pool, String pgSchema) {
        this.pool = pool;
        this.pgSchema = pgSchema;
    }

    /** The catalog name of {@code index} (unique, declared on {@code table}); at most 63 bytes. */
    static String physicalName(String table, IndexDef index) {
        String identity = table + '\u0000' + index.name() + '\u0000' + String.join("\u0000", index.columns());
        String hash;
        try {
            hash = HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(identity.getBytes(StandardCharsets.UTF_8)))
                    .substring(0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        // index names are ASCII identifiers (schema.SchemaCompiler): a character is a byte
        int room = RowTable.MAX_IDENTIFIER_BYTES - PREFIX.length() - 1 - hash.length();
        String base = index.name().length() > room ? index.name().substring(0, room) : index.name();
        return PREFIX + base + '_' + hash;
    }

    /** The unique indexes {@code table} declares, by catalog name. */
    static Map<String, IndexDef> of(TableSchema table) {
        Map<String, IndexDef> out = new LinkedHashMap<>();
        for (IndexDef d : table.indexes()) {
            if (d.unique()) {
                out.put(physicalName(table.name(), d), d);
            }
        }
        return Map.copyOf(out);
    }

    static List<Declared> declared(CompiledSchema schema) {
        List<Declared> out = new ArrayList<>();
        for (TableSchema t : schema.tables()) {
            for (IndexDef d : t.indexes()) {
                if (d.unique()) {
                    out.add(new Declared(t.name(), d, physicalName(t.name(), d), RowTable.physicalName(t.name())));
                }
            }
        }
        return out;
    }

    /** {@code CREATE UNIQUE INDEX} of {@code d} (in a transaction, or {@code concurrently} outside any). */
    static String createSql(String pgSchema, Declared d, boolean concurrently) {
        StringBuilder sb = new StringBuilder("CREATE UNIQUE INDEX ")
                .append(concurrently ? "CONCURRENTLY " : "")
                .append("IF NOT EXISTS ")
                .append(q(d.name()))
                .append(" ON ")
                .append(PgSql.qualified(pgSchema, d.rowTable()))
                .append(" (\"_sync_partition\"");
        for (String c : d.index().columns()) {
            sb.append(", ").append(q(c));
        }
        return sb.append(')').toString();
    }

    /** The statements creating the unique indexes of {@code table}, a table created in the same transaction. */
    static List<String> createWithTable(String pgSchema, TableSchema table) {
        List<String> out = new ArrayList<>();
        for (IndexDef d : table.indexes()) {
            if (d.unique()) {
                out.add(createSql(
                        pgSchema,
                        new Declared(
                                table.name(), d, physicalName(table.name(), d), RowTable.physicalName(table.name())),
                        false));
            }
        }
        return out;
    }

    /**
     * A failure of {@code rt}'s row upsert for {@code rowId}: a unique index's refusal as
     * {@link StorageException#UNIQUE_VIOLATION}, anything else unchanged. Classified by SQLSTATE only: 23505 (the
     * upsert's own conflict target is the primary key, so a unique violation is always another unique index's), or
     * 54000 on a table with declared unique indexes (a key larger than an index entry; its index is named when the
     * database names it or the table has only one). The database's text (which holds the key) stays in the cause,
     * never in the details.
     */
    static Throwable refusal(Throwable e, RowTable rt, String rowId) {
        if (!(e instanceof PgException pe)) {
            return e;
        }
        IndexDef index = pe.getConstraint() == null ? null : rt.uniqueIndexes.get(pe.getConstraint());
        String reason;
        if ("23505".equals(pe.getSqlState())) {
            reason = "unique_violation";
        } else if ("54000".equals(pe.getSqlState()) && !rt.uniqueIndexes.isEmpty()) {
            // A key over a B-tree entry names its index; one over a page does not (it fails building the entry).
            // The row's other index, the primary key, holds a bounded row id: the key is a unique index's.
            reason = "unique_key_too_large";
            if (index == null && rt.uniqueIndexes.size() == 1) {
                index = rt.uniqueIndexes.values().iterator().next();
            }
        } else {
            return e;
        }
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("table", rt.schema.name());
        d.put("rowId", rowId);
        d.put("reason", reason);
        if (index != null) {
            d.put("index", index.name());
            d.put("columns", index.columns());
        }
        return new StorageException(StorageException.UNIQUE_VIOLATION, "a declared unique index refused the row", d, e);
    }

    /**
     * Before a schema upgrade: every declared unique index missing from the catalog whose table and columns exist
     * already is searched for colliding rows; the first with any refuses the start
     * ({@link StorageException#UNIQUE_INDEX_DUPLICATES}). Reads only (a table or column the upgrade adds holds no
     * collision: it is new, or all NULL).
     */
    Uni<Void> refuseDuplicates(CompiledSchema running) {
        List<Declared> want = declared(running);
        if (want.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        return catalog(pool).chain(existing -> {
            Uni<Void> chain = Uni.createFrom().voidItem();
            for (Declared d : want) {
                if (!Boolean.TRUE.equals(existing.get(d.name()))) {
                    chain = chain.chain(() -> collisions(pool, d)
                            .onFailure(UniqueIndexes::undefinedTableOrColumn)
                            .recoverWithItem((StorageException) null)
                            .invoke(UniqueIndexes::refuse)
                            .replaceWithVoid());
                }
            }
            return chain;
        });
    }

    /**
     * Drops the unique indexes of the storage no longer declared (and invalid leftovers) and builds the missing
     * declared ones, concurrently (see the class comment). One catalog read when nothing is to be done.
     */
    Uni<Void> reconcile(CompiledSchema running, String lockName) {
        List<Declared> want = declared(running);
        return catalog(pool).chain(existing -> {
            if (plan(want, existing).isEmpty()) {
                return Uni.createFrom().voidItem();
            }
            Tuple lock = Tuple.of(lockName + ":unique");
            return pool.withConnection(conn -> conn.query(
                            "SET client_min_messages = warning; SET statement_timeout = 0")
                    .execute()
                    .chain(() -> conn.preparedQuery("SELECT pg_advisory_lock(hashtext($1))")
                            .execute(lock))
                    // re-read under the lock: another starter may have done it meanwhile
                    .chain(() -> catalog(conn))
                    .chain(now -> apply(conn, plan(want, now)))
                    .eventually(() -> conn.preparedQuery("SELECT pg_advisory_unlock(hashtext($1))")
                            .execute(lock)
                            .chain(() -> conn.query("RESET statement_timeout; RESET client_min_messages")
                                    .execute())
                            .onFailure()
                            .recoverWithNull()));
        });
    }

    /**
     * The statements {@link #reconcile} would run for {@code running} after a migration that creates the tables
     * {@code createdWithTable} (whose indexes come with them): one catalog read, nothing changed.
     */
    Uni<List<String>> plannedSql(CompiledSchema running, Collection<String> createdWithTable) {
        List<Declared> want = declared(running);
        return catalog(pool).map(existing -> {
            Plan plan = plan(want, existing);
            List<String> out = new ArrayList<>();
            plan.drop().forEach(name -> out.add(dropSql(name)));
            for (Declared d : plan.build()) {
                if (!createdWithTable.contains(d.table())) {
                    out.add(createSql(pgSchema, d, true));
                }
            }
            return out;
        });
    }

    /** What to drop (catalog names) and what to build, given the catalog's indexes (name → valid). */
    private record Plan(List<String> drop, List<Declared> build) {
        boolean isEmpty() {
            return drop.isEmpty() && build.isEmpty();
        }
    }

    private static Plan plan(List<Declared> want, Map<String, Boolean> existing) {
        Set<String> wanted = want.stream().map(Declared::name).collect(Collectors.toSet());
        List<String> drop = new ArrayList<>();
        existing.forEach((name, valid) -> {
            if (!wanted.contains(name) || !valid) {
                drop.add(name);
            }
        });
        List<Declared> build = new ArrayList<>();
        for (Declared d : want) {
            if (!Boolean.TRUE.equals(existing.get(d.name()))) {
                build.add(d);
            }
        }
        return new Plan(drop, build);
    }

    private Uni<Void> apply(SqlConnection conn, Plan plan) {
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (String name : plan.drop()) {
            chain = chain.chain(() -> conn.query(dropSql(name)).execute()).replaceWithVoid();
        }
        for (Declared d : plan.build()) {
            chain = chain.chain(() -> conn.query(createSql(pgSchema, d, true))
                    .execute()
                    .replaceWithVoid()
                    .onFailure()
                    .recoverWithUni(e -> failedBuild(conn, d, e)));
        }
        return chain;
    }

    /**
     * A failed concurrent build leaves an invalid index that still checks every write: dropped first. Then, for a
     * refused key, the colliding rows become the start-up refusal; any other failure is the build's own.
     */
    private Uni<Void> failedBuild(SqlConnection conn, Declared d, Throwable e) {
        return conn.query(dropSql(d.name()))
                .execute()
                .onFailure()
                .recoverWithNull()
                .chain(() -> e instanceof PgException pe && "23505".equals(pe.getSqlState())
                        ? collisions(conn, d)
                        : Uni.createFrom().item((StorageException) null))
                .invoke(UniqueIndexes::refuse)
                .chain(() -> Uni.createFrom().failure(e));
    }

    private static void refuse(StorageException refusal) {
        if (refusal != null) {
            throw refusal;
        }
    }

    private String dropSql(String name) {
        return "DROP INDEX CONCURRENTLY IF EXISTS " + PgSql.qualified(pgSchema, name);
    }

    /** The storage's unique indexes in the catalog: name → valid. Reads {@code pg_catalog} only. */
    private Uni<Map<String, Boolean>> catalog(SqlClient c) {
        return c.preparedQuery("SELECT ci.relname::text, i.indisvalid FROM pg_index i"
                        + " JOIN pg_class ci ON ci.oid = i.indexrelid JOIN pg_namespace n ON n.oid = ci.relnamespace"
                        + " WHERE n.nspname = $1 AND starts_with(ci.relname::text, $2)")
                .execute(Tuple.of(pgSchema, PREFIX))
                .map(rs -> {
                    Map<String, Boolean> out = new LinkedHashMap<>();
                    for (Row r : rs) {
                        out.put(r.getString(0), Boolean.TRUE.equals(r.getBoolean(1)));
                    }
                    return out;
                });
    }

    /**
     * The keys of {@code d} that rows of one partition share (every key part non-NULL), as the refusal to start, or
     * a {@code null} item when there are none. At most {@link #MAX_COLLISIONS} keys, {@link #MAX_ROW_IDS} row ids
     * each, values cut at {@link #MAX_VALUE_CHARS} characters.
     */
    private Uni<StorageException> collisions(SqlClient c, Declared d) {
        List<String> cols = d.index().columns();
        StringBuilder keyText = new StringBuilder();
        StringBuilder keyCols = new StringBuilder();
        StringBuilder notNull = new StringBuilder();
        for (String col : cols) {
            keyText.append(", ").append(q(col)).append("::text");
            keyCols.append(", ").append(q(col));
            notNull.append(notNull.isEmpty() ? " WHERE " : " AND ")
                    .append(q(col))
                    .append(" IS NOT NULL");
        }
        String sql =
                "SELECT \"_sync_partition\", (array_agg(\"_sync_row_id\" ORDER BY \"_sync_row_id\" COLLATE \"C\"))[1:"
                        + MAX_ROW_IDS + "], count(*)" + keyText + " FROM " + PgSql.qualified(pgSchema, d.rowTable())
                        + notNull
                        + " GROUP BY \"_sync_partition\"" + keyCols + " HAVING count(*) > 1"
                        + " ORDER BY \"_sync_partition\", min(\"_sync_row_id\" COLLATE \"C\") LIMIT "
                        + (MAX_COLLISIONS + 1);
        return c.query(sql).execute().map(rs -> {
            List<Map<String, Object>> found = new ArrayList<>();
            boolean more = false;
            for (Row r : rs) {
                if (found.size() == MAX_COLLISIONS) {
                    more = true;
                    break;
                }
                Map<String, Object> one = new LinkedHashMap<>();
                one.put("partition", r.getString(0));
                one.put("rowIds", List.of(r.getArrayOfStrings(1)));
                one.put("rows", r.getLong(2));
                List<String> key = new ArrayList<>();
                for (int i = 0; i < cols.size(); i++) {
                    String v = r.getString(3 + i);
                    key.add(v.length() > MAX_VALUE_CHARS ? v.substring(0, MAX_VALUE_CHARS) + "…" : v);
                }
                one.put("key", key);
                found.add(one);
            }
            if (found.isEmpty()) {
                return null;
            }
            Map<String, Object> details = new LinkedHashMap<>();
            details.put("table", d.table());
            details.put("index", d.index().name());
            details.put("columns", cols);
            details.put("collisions", found);
            details.put("more", more);
            return new StorageException(
                    StorageException.UNIQUE_INDEX_DUPLICATES,
                    "rows of one partition already share the key of a declared unique index",
                    details);
        });
    }

    private static boolean undefinedTableOrColumn(Throwable e) {
        return e instanceof PgException pe && ("42P01".equals(pe.getSqlState()) || "42703".equals(pe.getSqlState()));
    }
}
