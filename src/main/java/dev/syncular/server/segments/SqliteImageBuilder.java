package dev.syncular.server.segments;

import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.wire.ColumnType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.List;
import java.util.Objects;
import org.sqlite.SQLiteConfig;

/**
 * Builds a §5.3 SQLite image: a complete, well-formed SQLite database file holding one table's whole
 * effective-scope row set at a bootstrap pin.
 *
 * <p>The file contains exactly two tables:
 * <ul>
 * <li>the data table, named as the synced table, with the schema-IR columns in declaration order (§2.4)
 * followed by {@code _syncular_version INTEGER NOT NULL} (each row's {@code server_version}). Declared
 * affinities: {@code string}/{@code json}/{@code blob_ref} → {@code TEXT}, {@code integer} → {@code INTEGER},
 * {@code float} → {@code REAL}, {@code boolean} → {@code INTEGER} (cells {@code 0}/{@code 1}),
 * {@code bytes}/{@code crdt} → {@code BLOB}; non-nullable columns {@code NOT NULL}, the primary-key column
 * {@code PRIMARY KEY}. Affinities follow the wire type {@link ColumnSchema#type()}, so an encrypted column
 * (§5.11) is a {@code BLOB} of ciphertext envelopes. {@code json} cells are the stored raw string,
 * verbatim;</li>
 * <li>{@code _syncular_segment} with exactly one row: {@code format} (= {@value #FORMAT}), {@code "table"},
 * {@code schemaVersion}, {@code asOfCommitSeq}, {@code scopeDigest}, {@code rowCount}.</li>
 * </ul>
 *
 * <p><b>Blocking.</b> {@link #build} does file and native SQLite I/O for the whole table and can take seconds;
 * callers MUST run it on a worker thread (e.g. {@code Vertx.executeBlocking} or a dedicated executor), never
 * on a Vert.x event-loop thread. The {@link RowBatches} source is called on that same thread, so it may
 * block too (for instance a synchronous wait on a storage read).
 *
 * <p><b>Streaming.</b> Rows are consumed one batch at a time and written (in JDBC batches of at most
 * {@value #JDBC_BATCH} rows) before the next batch is requested; the builder keeps no reference to a written
 * batch. Memory is therefore bounded by the source's batch size plus SQLite's page cache ({@value #CACHE_KIB}
 * KiB, native memory), independent of the table size. Rows should arrive in
 * primary-key (keyset) order: the primary-key index is then built by appends. Any order is accepted;
 * a duplicate primary key fails the build.
 *
 * <p>The build runs in one transaction with {@code journal_mode=OFF}, {@code synchronous=OFF} and an
 * exclusive lock; no journal or WAL file is ever created, and the finished file is an ordinary
 * rollback-journal database (journal mode {@code OFF} is not persisted, so a reader sees {@code delete}). The image is not durable until the caller has
 * published it (a crash mid-build leaves a file the caller discards). Any failure — a row source exception,
 * a value that does not match its column type, a SQLite error — closes the connection and deletes the
 * partial target before the exception propagates. Images are not byte-deterministic (§5.3).
 *
 * <p>Native-image: uses sqlite-jdbc directly ({@link SQLiteConfig#createConnection}); no reflection, no
 * {@code DriverManager} lookup. sqlite-jdbc ships its own native-image metadata.
 */
public final class SqliteImageBuilder {
    /** The image format this builder writes (§5.3 format 1). */
    public static final int FORMAT = 1;
    /** The trailing per-row version column of the data table. */
    public static final String VERSION_COLUMN = "_syncular_version";
    /** The metadata table. */
    public static final String METADATA_TABLE = "_syncular_segment";

    /** SQLite page size of the image. */
    static final int PAGE_SIZE = 4096;
    /**
     * Page cache during the build, in KiB (native memory, not Java heap). Keyset-ordered inserts touch only
     * the right edge of the table and index b-trees, so a small cache suffices.
     */
    static final int CACHE_KIB = 8 * 1024;
    /**
     * Rows per {@code executeBatch}: on sqlite-jdbc, batches are several times faster than one
     * {@code executeUpdate} per row (docs/BENCHMARKS.md, "Measurements behind code choices").
     */
    static final int JDBC_BATCH = 1024;

    /**
     * A keyset-ordered source of rows: each call returns the next batch, an empty list (or {@code null})
     * at the end. Called on the building thread; it may block.
     */
    @FunctionalInterface
    public interface RowBatches {
        List<StoredRow> next() throws Exception;
    }

    /**
     * A built image.
     *
     * @param rowCount   data rows written (equals the metadata {@code rowCount})
     * @param byteLength size of the image file in bytes
     */
    public record Result(long rowCount, long byteLength) {}

    private SqliteImageBuilder() {}

    /**
     * Writes the image for {@code table} to {@code target}, replacing any existing file there. Blocking —
     * never call on an event-loop thread.
     *
     * @param target        the file to write (its parent directory must exist); deleted on failure
     * @param table         the synced table (columns in declaration order)
     * @param schemaVersion the schema version the rows are shaped for
     * @param asOfCommitSeq the bootstrap pin
     * @param scopeDigest   the effective-scope digest (§3.5)
     * @param rows          the row batches, in keyset order; each row's {@code values()} in declaration order
     *                      (String for string/json/blob_ref, Long for integer, Double for float, Boolean for
     *                      boolean, byte[] for bytes/crdt, null for NULL)
     * @return the row count and file size
     * @throws IOException              on a SQLite or file-system failure, or wrapping a checked exception
     *                                  of the row source
     * @throws IllegalArgumentException when a row does not fit the table (wrong arity or value type, NULL in a
     *                                  non-nullable column, a NaN float, which SQLite would turn into NULL); a
     *                                  duplicate primary key is a SQLite constraint failure ({@link IOException})
     * @throws RuntimeException         an unchecked exception of the row source, as thrown
     */
    public static Result build(
            Path target, TableSchema table, int schemaVersion, long asOfCommitSeq, String scopeDigest, RowBatches rows)
            throws IOException {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(scopeDigest, "scopeDigest");
        Objects.requireNonNull(rows, "rows");
        String file = target.toAbsolutePath().toString();
        if (file.indexOf('?') >= 0) {
            // sqlite-jdbc reads "?key=value" in the file name as connection pragmas
            throw new IllegalArgumentException("image path must not contain '?': " + file);
        }
        for (Path f : withSidecars(target)) {
            Files.deleteIfExists(f); // a stale hot journal next to a fresh file would be "rolled back" into it
        }
        boolean ok = false;
        try {
            long rowCount;
            try (Connection c = open(file)) {
                rowCount = write(c, table, schemaVersion, asOfCommitSeq, scopeDigest, rows);
            }
            ok = true;
            return new Result(rowCount, Files.size(target));
        } catch (SQLException e) {
            throw new IOException("SQLite image build failed for table " + table.name() + ": " + e.getMessage(), e);
        } finally {
            if (!ok) {
                deleteQuietly(target);
            }
        }
    }

    private static Connection open(String file) throws SQLException {
        SQLiteConfig config = new SQLiteConfig();
        config.setPageSize(PAGE_SIZE);
        config.setJournalMode(SQLiteConfig.JournalMode.OFF);
        config.setSynchronous(SQLiteConfig.SynchronousMode.OFF);
        config.setLockingMode(SQLiteConfig.LockingMode.EXCLUSIVE);
        config.setTempStore(SQLiteConfig.TempStore.MEMORY);
        config.setCacheSize(-CACHE_KIB);
        Connection c = config.createConnection("jdbc:sqlite:" + file);
        try {
            c.setAutoCommit(false);
        } catch (SQLException e) {
            closeQuietly(c, e);
            throw e;
        }
        return c;
    }

    private static long write(
            Connection c, TableSchema table, int schemaVersion, long asOfCommitSeq, String scopeDigest, RowBatches rows)
            throws SQLException, IOException {
        List<ColumnSchema> columns = table.columns();
        int n = columns.size();
        ColumnType[] types = new ColumnType[n];
        boolean[] nullable = new boolean[n];
        for (int i = 0; i < n; i++) {
            types[i] = columns.get(i).type();
            nullable[i] = columns.get(i).nullable();
        }
        try (Statement st = c.createStatement()) {
            st.executeUpdate(dataTableDdl(table));
            st.executeUpdate(metadataTableDdl());
        }
        long count = 0;
        try (PreparedStatement ins = c.prepareStatement(insertSql(table))) {
            while (true) {
                List<StoredRow> batch = nextBatch(rows);
                if (batch == null || batch.isEmpty()) {
                    break;
                }
                int pending = 0;
                for (int r = 0, size = batch.size(); r < size; r++) {
                    bindRow(ins, table, types, nullable, batch.get(r));
                    ins.addBatch();
                    if (++pending == JDBC_BATCH) {
                        ins.executeBatch();
                        pending = 0;
                    }
                }
                if (pending > 0) {
                    ins.executeBatch();
                }
                count += batch.size();
            }
        }
        try (PreparedStatement meta = c.prepareStatement(
                "INSERT INTO " + quote(METADATA_TABLE)
                        + " (format, \"table\", schemaVersion, asOfCommitSeq, scopeDigest, rowCount) VALUES (?, ?, ?, ?, ?, ?)")) {
            meta.setInt(1, FORMAT);
            meta.setString(2, table.name());
            meta.setInt(3, schemaVersion);
            meta.setLong(4, asOfCommitSeq);
            meta.setString(5, scopeDigest);
            meta.setLong(6, count);
            meta.executeUpdate();
        }
        c.commit();
        return count;
    }

    private static List<StoredRow> nextBatch(RowBatches rows) throws IOException {
        try {
            return rows.next();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while reading image rows", e);
        } catch (Exception e) {
            throw new IOException("image row source failed: " + e.getMessage(), e);
        }
    }

    private static void bindRow(
            PreparedStatement ins, TableSchema table, ColumnType[] types, boolean[] nullable, StoredRow row)
            throws SQLException {
        Object[] values = row.values();
        int n = types.length;
        if (values.length != n) {
            throw new IllegalArgumentException("row " + row.rowId() + " of " + table.name() + " has " + values.length
                    + " values, the table has " + n + " columns");
        }
        for (int i = 0; i < n; i++) {
            Object v = values[i];
            int p = i + 1;
            if (v == null) {
                if (!nullable[i]) {
                    throw new IllegalArgumentException("row " + row.rowId() + " of " + table.name() + ": column "
                            + table.column(i).name() + " is not nullable but holds NULL");
                }
                ins.setNull(p, Types.NULL);
                continue;
            }
            try {
                switch (types[i]) {
                    case STRING, JSON, BLOB_REF -> ins.setString(p, (String) v);
                    case INTEGER -> ins.setLong(p, (Long) v);
                    case FLOAT -> {
                        double d = (Double) v;
                        if (Double.isNaN(d)) {
                            // sqlite3_bind_double stores NaN as NULL: refuse rather than silently change the value
                            throw new IllegalArgumentException(
                                    "row " + row.rowId() + " of " + table.name() + ": column "
                                            + table.column(i).name() + " is NaN, which a SQLite image cannot hold");
                        }
                        ins.setDouble(p, d);
                    }
                    case BOOLEAN -> ins.setInt(p, ((Boolean) v) ? 1 : 0);
                    case BYTES, CRDT -> ins.setBytes(p, (byte[]) v);
                }
            } catch (ClassCastException e) {
                throw new IllegalArgumentException(
                        "row " + row.rowId() + " of " + table.name() + ": column "
                                + table.column(i).name() + " holds a "
                                + v.getClass().getSimpleName() + ", not a "
                                + types[i].wireName + " value",
                        e);
            }
        }
        ins.setLong(n + 1, row.serverVersion());
    }

    // ------------------------------------------------------------------------------------------------
    // SQL text
    // ------------------------------------------------------------------------------------------------

    /** The data table's {@code CREATE TABLE} statement (§5.3). */
    static String dataTableDdl(TableSchema table) {
        StringBuilder sb =
                new StringBuilder("CREATE TABLE ").append(quote(table.name())).append(" (");
        int pk = table.primaryKeyIndex();
        List<ColumnSchema> columns = table.columns();
        for (int i = 0; i < columns.size(); i++) {
            ColumnSchema col = columns.get(i);
            sb.append(quote(col.name())).append(' ').append(affinity(col.type()));
            if (!col.nullable()) {
                sb.append(" NOT NULL");
            }
            if (i == pk) {
                sb.append(" PRIMARY KEY");
            }
            sb.append(", ");
        }
        return sb.append(quote(VERSION_COLUMN)).append(" INTEGER NOT NULL)").toString();
    }

    /** The metadata table's {@code CREATE TABLE} statement (§5.3). */
    static String metadataTableDdl() {
        return "CREATE TABLE " + quote(METADATA_TABLE) + " (format INTEGER NOT NULL, \"table\" TEXT NOT NULL,"
                + " schemaVersion INTEGER NOT NULL, asOfCommitSeq INTEGER NOT NULL, scopeDigest TEXT NOT NULL,"
                + " rowCount INTEGER NOT NULL)";
    }

    static String insertSql(TableSchema table) {
        StringBuilder sb =
                new StringBuilder("INSERT INTO ").append(quote(table.name())).append(" (");
        StringBuilder params = new StringBuilder();
        for (ColumnSchema col : table.columns()) {
            sb.append(quote(col.name())).append(", ");
            params.append("?, ");
        }
        return sb.append(quote(VERSION_COLUMN))
                .append(") VALUES (")
                .append(params)
                .append("?)")
                .toString();
    }

    /** The declared SQLite type of a column type (§5.3). */
    static String affinity(ColumnType type) {
        return switch (type) {
            case STRING, JSON, BLOB_REF -> "TEXT";
            case INTEGER, BOOLEAN -> "INTEGER";
            case FLOAT -> "REAL";
            case BYTES, CRDT -> "BLOB";
        };
    }

    /** A quoted SQLite identifier. */
    static String quote(String ident) {
        return '"' + ident.replace("\"", "\"\"") + '"';
    }

    // ------------------------------------------------------------------------------------------------
    // cleanup
    // ------------------------------------------------------------------------------------------------

    private static void closeQuietly(Connection c, Exception primary) {
        try {
            c.close();
        } catch (SQLException e) {
            primary.addSuppressed(e);
        }
    }

    /** The target and the journal/WAL/shm files SQLite could associate with it. */
    private static Path[] withSidecars(Path target) {
        String name = target.getFileName().toString();
        return new Path[] {
            target,
            target.resolveSibling(name + "-journal"),
            target.resolveSibling(name + "-wal"),
            target.resolveSibling(name + "-shm"),
        };
    }

    private static void deleteQuietly(Path target) {
        for (Path f : withSidecars(target)) {
            try {
                Files.deleteIfExists(f);
            } catch (IOException ignored) {
                // best effort: the build's own exception is the one that matters
            }
        }
    }
}
