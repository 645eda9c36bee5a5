package dev.syncular.server.segments;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.StoredRow;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteConfig;

/** §5.3 SQLite images: built through {@link SqliteImageBuilder}, read back through sqlite-jdbc. */
class SqliteImageBuilderTest {
    /** Every column type: string pk, json, blob_ref, integer, float, boolean, bytes, crdt, an encrypted column. */
    private static final String ALL_TYPES = """
            {"version": 1, "tables": [{"name": "docs", "primaryKey": "id", "scopes": ["org:{org_id}"], "columns": [
              {"name": "id", "type": "string", "nullable": false},
              {"name": "org_id", "type": "string", "nullable": false},
              {"name": "meta", "type": "json", "nullable": true},
              {"name": "file", "type": "blob_ref", "nullable": true},
              {"name": "count", "type": "integer", "nullable": false},
              {"name": "score", "type": "float", "nullable": true},
              {"name": "done", "type": "boolean", "nullable": false},
              {"name": "raw", "type": "bytes", "nullable": true},
              {"name": "doc", "type": "crdt", "nullable": true, "crdtType": "yjs-doc"},
              {"name": "secret", "type": "bytes", "nullable": true, "encrypted": true, "declaredType": "string"}]}]}
            """;

    /** SQL keywords as table and column names, an integer primary key. */
    private static final String KEYWORDS = """
            {"version": 1, "tables": [{"name": "order", "primaryKey": "select", "scopes": ["g:{group}"], "columns": [
              {"name": "select", "type": "integer", "nullable": false},
              {"name": "group", "type": "string", "nullable": false},
              {"name": "from", "type": "boolean", "nullable": true}]}]}
            """;

    private static final long[] NO_VERSIONS = new long[0];

    @TempDir
    Path dir;

    // ------------------------------------------------------------------------------------------------
    // schema of the file
    // ------------------------------------------------------------------------------------------------

    @Test
    void dataTableHasTheSchemaColumnsInOrderThenTheVersionColumn() throws Exception {
        TableSchema notes = notes();
        Path image = dir.resolve("notes.sqlite");
        SqliteImageBuilder.build(image, notes, 3, 42, "d", batches(List.of()));

        try (Connection c = open(image)) {
            assertEquals(
                    List.of(
                            new Col("id", "TEXT", true, 1),
                            new Col("project_id", "TEXT", true, 0),
                            new Col("title", "TEXT", false, 0),
                            new Col("body", "TEXT", false, 0),
                            new Col("priority", "INTEGER", false, 0),
                            new Col("done", "INTEGER", false, 0),
                            new Col("_syncular_version", "INTEGER", true, 0)),
                    tableInfo(c, "notes"));
        }
    }

    @Test
    void everyColumnTypeGetsItsDeclaredAffinity() throws Exception {
        TableSchema docs = allTypes();
        Path image = dir.resolve("docs.sqlite");
        SqliteImageBuilder.build(image, docs, 1, 1, "d", batches(List.of()));

        try (Connection c = open(image)) {
            assertEquals(
                    List.of(
                            new Col("id", "TEXT", true, 1),
                            new Col("org_id", "TEXT", true, 0),
                            new Col("meta", "TEXT", false, 0),
                            new Col("file", "TEXT", false, 0),
                            new Col("count", "INTEGER", true, 0),
                            new Col("score", "REAL", false, 0),
                            new Col("done", "INTEGER", true, 0),
                            new Col("raw", "BLOB", false, 0),
                            new Col("doc", "BLOB", false, 0),
                            // an encrypted column carries ciphertext: its wire type (bytes), not its declaredType
                            new Col("secret", "BLOB", false, 0),
                            new Col("_syncular_version", "INTEGER", true, 0)),
                    tableInfo(c, "docs"));
        }
    }

    @Test
    void metadataTableHasExactlyTheSpecifiedColumns() throws Exception {
        Path image = dir.resolve("notes.sqlite");
        SqliteImageBuilder.build(image, notes(), 3, 42, "d", batches(List.of()));

        try (Connection c = open(image)) {
            assertEquals(
                    List.of(
                            new Col("format", "INTEGER", true, 0),
                            new Col("table", "TEXT", true, 0),
                            new Col("schemaVersion", "INTEGER", true, 0),
                            new Col("asOfCommitSeq", "INTEGER", true, 0),
                            new Col("scopeDigest", "TEXT", true, 0),
                            new Col("rowCount", "INTEGER", true, 0)),
                    tableInfo(c, "_syncular_segment"));
        }
    }

    @Test
    void fileHoldsExactlyTheDataTableAndTheMetadataTable() throws Exception {
        Path image = dir.resolve("notes.sqlite");
        SqliteImageBuilder.build(image, notes(), 3, 42, "d", batches(List.of(List.of(noteRow(1)))));

        try (Connection c = open(image);
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(
                        "SELECT type, name FROM sqlite_schema WHERE type IN ('table', 'view', 'trigger')"
                                + " ORDER BY name")) {
            List<String> objects = new ArrayList<>();
            while (rs.next()) {
                objects.add(rs.getString(1) + " " + rs.getString(2));
            }
            assertEquals(List.of("table _syncular_segment", "table notes"), objects);
        }
    }

    @Test
    void keywordIdentifiersAreQuoted() throws Exception {
        TableSchema order = SchemaLoader.parse(KEYWORDS).table("order");
        Path image = dir.resolve("order.sqlite");
        SqliteImageBuilder.Result result = SqliteImageBuilder.build(
                image,
                order,
                1,
                9,
                "d",
                batches(List.of(List.of(row("7", 2, 7L, "g1", true), row("8", 3, 8L, "g1", null)))));

        assertEquals(2, result.rowCount());
        try (Connection c = open(image)) {
            assertEquals(
                    List.of(
                            new Col("select", "INTEGER", true, 1),
                            new Col("group", "TEXT", true, 0),
                            new Col("from", "INTEGER", false, 0),
                            new Col("_syncular_version", "INTEGER", true, 0)),
                    tableInfo(c, "order"));
            assertEquals(
                    List.of(List.of(7L, "g1", 1L, 2L), Arrays.asList(8L, "g1", null, 3L)),
                    rows(c, "SELECT * FROM \"order\" ORDER BY \"select\""));
            assertEquals(List.of(List.of(1L, "order", 1L, 9L, "d", 2L)), rows(c, "SELECT * FROM _syncular_segment"));
        }
    }

    @Test
    void identifiersWithQuotesAreEscaped() {
        assertEquals("\"plain\"", SqliteImageBuilder.quote("plain"));
        assertEquals("\"a\"\"b\"", SqliteImageBuilder.quote("a\"b"));
        assertEquals("\"table\"", SqliteImageBuilder.quote("table"));
    }

    // ------------------------------------------------------------------------------------------------
    // contents
    // ------------------------------------------------------------------------------------------------

    @Test
    void metadataRowDescribesTheImage() throws Exception {
        Path image = dir.resolve("notes.sqlite");
        SqliteImageBuilder.Result result = SqliteImageBuilder.build(
                image,
                notes(),
                3,
                1234567890123L,
                "scope-digest-x",
                batches(List.of(List.of(noteRow(1), noteRow(2)), List.of(noteRow(3)))));

        assertEquals(3, result.rowCount());
        assertEquals(Files.size(image), result.byteLength());
        try (Connection c = open(image)) {
            assertEquals(
                    List.of(List.of(1L, "notes", 3L, 1234567890123L, "scope-digest-x", 3L)),
                    rows(
                            c,
                            "SELECT format, \"table\", schemaVersion, asOfCommitSeq, scopeDigest, rowCount FROM _syncular_segment"));
        }
    }

    @Test
    void everyValueRoundTripsWithItsVersion() throws Exception {
        TableSchema docs = allTypes();
        String json = "{ \"b\": [1, 2.50, {\"x\": null}],\n  \"a\": \"é\" }";
        String blobRef = "{\"blobId\":\"sha256:abc\",\"size\":3}";
        byte[] raw = {0, 1, 2, (byte) 0xff, 0};
        byte[] doc = {9, 8, 7};
        byte[] secret = {1, 1, 2, 3, 5, 8};
        Path image = dir.resolve("docs.sqlite");
        SqliteImageBuilder.build(
                image,
                docs,
                1,
                77,
                "d",
                batches(List.of(List.of(
                        row("a", 5, "a", "o1", json, blobRef, 42L, 1.5, true, raw, doc, secret),
                        row("b", 1, "b", "o1", null, null, -9_007_199_254_740_993L, null, false, null, null, null),
                        row(
                                "c",
                                Long.MAX_VALUE,
                                "c",
                                "o2",
                                "[]",
                                null,
                                Long.MIN_VALUE,
                                Double.NEGATIVE_INFINITY,
                                true,
                                new byte[0],
                                null,
                                null)))));

        try (Connection c = open(image);
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT * FROM docs ORDER BY id")) {
            assertTrue(rs.next());
            assertEquals("a", rs.getString("id"));
            assertEquals("o1", rs.getString("org_id"));
            assertEquals(json, rs.getString("meta"), "json is stored verbatim, not re-serialized");
            assertEquals(blobRef, rs.getString("file"));
            assertEquals(42L, rs.getLong("count"));
            assertEquals(1.5, rs.getDouble("score"));
            assertEquals(1, rs.getObject("done"), "boolean true is stored as integer 1");
            assertArrayEquals(raw, rs.getBytes("raw"));
            assertArrayEquals(doc, rs.getBytes("doc"));
            assertArrayEquals(secret, rs.getBytes("secret"));
            assertEquals(5L, rs.getLong("_syncular_version"));

            assertTrue(rs.next());
            assertEquals("b", rs.getString("id"));
            assertNull(rs.getObject("meta"));
            assertNull(rs.getObject("file"));
            assertEquals(-9_007_199_254_740_993L, rs.getLong("count"));
            assertNull(rs.getObject("score"));
            assertEquals(0, rs.getObject("done"), "boolean false is stored as integer 0");
            assertNull(rs.getObject("raw"));
            assertNull(rs.getObject("doc"));
            assertNull(rs.getObject("secret"));
            assertEquals(1L, rs.getLong("_syncular_version"));

            assertTrue(rs.next());
            assertEquals("c", rs.getString("id"));
            assertEquals("[]", rs.getString("meta"));
            assertEquals(Long.MIN_VALUE, rs.getLong("count"));
            assertEquals(Double.NEGATIVE_INFINITY, rs.getDouble("score"));
            assertArrayEquals(new byte[0], rs.getBytes("raw"));
            assertEquals(Long.MAX_VALUE, rs.getLong("_syncular_version"));
            assertFalse(rs.next());
        }
        try (Connection c = open(image)) {
            // storage classes, not just values that convert: booleans are integers, blobs are blobs, json is text
            assertEquals(
                    List.of(
                            List.of("text", "text", "integer", "real", "integer", "blob", "blob", "blob", "integer"),
                            Arrays.asList(
                                    "null", "null", "integer", "null", "integer", "null", "null", "null", "integer"),
                            Arrays.asList(
                                    "text", "null", "integer", "real", "integer", "blob", "null", "null", "integer")),
                    rows(
                            c,
                            "SELECT typeof(meta), typeof(file), typeof(count), typeof(score), typeof(done), typeof(raw),"
                                    + " typeof(doc), typeof(secret), typeof(_syncular_version) FROM docs ORDER BY id"));
        }
    }

    @Test
    void emptyTableGivesAnEmptyDataTableAndRowCountZero() throws Exception {
        Path image = dir.resolve("empty.sqlite");
        AtomicInteger calls = new AtomicInteger();
        SqliteImageBuilder.Result result = SqliteImageBuilder.build(image, notes(), 3, 5, "d", () -> {
            calls.incrementAndGet();
            return List.of();
        });

        assertEquals(0, result.rowCount());
        assertEquals(1, calls.get(), "an empty batch ends the source");
        try (Connection c = open(image)) {
            assertEquals(List.of(List.of(0L)), rows(c, "SELECT count(*) FROM notes"));
            assertEquals(List.of(List.of(1L, 0L)), rows(c, "SELECT count(*), rowCount FROM _syncular_segment"));
        }
    }

    @Test
    void manyBatchesAreAllWrittenInOrder() throws Exception {
        // 7 batches of 700 rows: not a multiple of the JDBC batch, so partial flushes are exercised too
        List<List<StoredRow>> source = new ArrayList<>();
        int next = 0;
        for (int b = 0; b < 7; b++) {
            List<StoredRow> batch = new ArrayList<>();
            for (int i = 0; i < 700; i++) {
                batch.add(noteRow(next++));
            }
            source.add(batch);
        }
        AtomicInteger calls = new AtomicInteger();
        Deque<List<StoredRow>> queue = new ArrayDeque<>(source);
        Path image = dir.resolve("many.sqlite");
        SqliteImageBuilder.Result result = SqliteImageBuilder.build(image, notes(), 3, 5, "d", () -> {
            calls.incrementAndGet();
            return queue.isEmpty() ? null : queue.poll();
        });

        assertEquals(4900, result.rowCount());
        assertEquals(8, calls.get(), "seven batches and the end");
        try (Connection c = open(image)) {
            assertEquals(
                    List.of(List.of(4900L, 4900L)),
                    rows(c, "SELECT (SELECT count(*) FROM notes), rowCount FROM _syncular_segment"));
            List<List<Object>> all = rows(
                    c,
                    "SELECT id, project_id, title, priority, done, _syncular_version FROM notes" + " ORDER BY rowid");
            for (int i = 0; i < 4900; i++) {
                StoredRow expected = noteRow(i);
                Object[] v = expected.values();
                assertEquals(
                        Arrays.asList(
                                v[0],
                                v[1],
                                v[2],
                                v[4],
                                v[5] == null ? null : ((Boolean) v[5]) ? 1L : 0L,
                                expected.serverVersion()),
                        all.get(i),
                        "row " + i);
            }
        }
    }

    @Test
    void finishedFileIsAnOrdinaryWellFormedDatabase() throws Exception {
        Path image = dir.resolve("notes.sqlite");
        List<StoredRow> batch = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            batch.add(noteRow(i));
        }
        SqliteImageBuilder.build(image, notes(), 3, 5, "d", batches(List.of(batch)));

        try (InputStream in = Files.newInputStream(image)) {
            byte[] header = in.readNBytes(20);
            assertEquals("SQLite format 3\0", new String(header, 0, 16, StandardCharsets.US_ASCII));
            assertEquals(1, header[18], "file format write version 1: rollback journal, not WAL");
            assertEquals(1, header[19], "file format read version 1: rollback journal, not WAL");
        }
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(image), files.toList(), "no journal, WAL or shm file next to the image");
        }
        try (Connection c = open(image)) {
            assertEquals(List.of(List.of("ok")), rows(c, "PRAGMA integrity_check"));
            assertEquals(List.of(List.of("delete")), rows(c, "PRAGMA journal_mode"));
            // the primary key is enforced in the built file
            SQLException dup = assertThrows(SQLException.class, () -> {
                try (Statement st = c.createStatement()) {
                    st.executeUpdate(
                            "INSERT INTO notes (id, project_id, _syncular_version) VALUES ('note-00000001', 'p', 1)");
                }
            });
            assertTrue(dup.getMessage().contains("UNIQUE"), dup.getMessage());
        }
    }

    @Test
    void anExistingTargetIsReplaced() throws Exception {
        Path image = dir.resolve("notes.sqlite");
        Files.writeString(image, "not a database");

        SqliteImageBuilder.build(image, notes(), 3, 5, "d", batches(List.of(List.of(noteRow(1)))));

        try (Connection c = open(image)) {
            assertEquals(List.of(List.of(1L)), rows(c, "SELECT count(*) FROM notes"));
        }
    }

    // ------------------------------------------------------------------------------------------------
    // failures leave nothing behind
    // ------------------------------------------------------------------------------------------------

    @Test
    void aThrowingRowSourceLeavesNoFile() throws Exception {
        Path image = dir.resolve("notes.sqlite");
        IllegalStateException boom = new IllegalStateException("storage read failed");
        AtomicInteger calls = new AtomicInteger();

        IllegalStateException thrown = assertThrows(
                IllegalStateException.class,
                () -> SqliteImageBuilder.build(image, notes(), 3, 5, "d", () -> {
                    if (calls.incrementAndGet() == 1) {
                        return List.of(noteRow(1), noteRow(2));
                    }
                    throw boom;
                }));

        assertSame(boom, thrown, "an unchecked source exception propagates as thrown");
        assertEquals(2, calls.get());
        assertNoFiles();
    }

    @Test
    void aCheckedSourceExceptionIsWrappedAndLeavesNoFile() throws Exception {
        Path image = dir.resolve("notes.sqlite");
        Exception cause = new Exception("checked");

        IOException thrown = assertThrows(
                IOException.class,
                () -> SqliteImageBuilder.build(image, notes(), 3, 5, "d", () -> {
                    throw cause;
                }));

        assertSame(cause, thrown.getCause());
        assertNoFiles();
    }

    @Test
    void aValueOfTheWrongTypeFailsTheBuildAndLeavesNoFile() throws Exception {
        Path image = dir.resolve("notes.sqlite");
        StoredRow bad = row("x", 1, "x", "p", null, null, "not a long", null);

        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> SqliteImageBuilder.build(image, notes(), 3, 5, "d", batches(List.of(List.of(noteRow(1), bad)))));

        assertTrue(e.getMessage().contains("priority"), e.getMessage());
        assertNoFiles();
    }

    @Test
    void nullInANonNullableColumnFailsTheBuild() throws Exception {
        Path image = dir.resolve("notes.sqlite");
        StoredRow bad = row("x", 1, "x", null, null, null, null, null);

        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> SqliteImageBuilder.build(image, notes(), 3, 5, "d", batches(List.of(List.of(bad)))));

        assertTrue(e.getMessage().contains("project_id"), e.getMessage());
        assertNoFiles();
    }

    @Test
    void wrongArityFailsTheBuild() throws Exception {
        Path image = dir.resolve("notes.sqlite");
        StoredRow bad = row("x", 1, "x", "p");

        assertThrows(
                IllegalArgumentException.class,
                () -> SqliteImageBuilder.build(image, notes(), 3, 5, "d", batches(List.of(List.of(bad)))));
        assertNoFiles();
    }

    @Test
    void nanIsRefusedRatherThanStoredAsNull() throws Exception {
        Path image = dir.resolve("docs.sqlite");
        StoredRow bad = row("a", 1, "a", "o", null, null, 1L, Double.NaN, true, null, null, null);

        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> SqliteImageBuilder.build(image, allTypes(), 1, 5, "d", batches(List.of(List.of(bad)))));

        assertTrue(e.getMessage().contains("score"), e.getMessage());
        assertNoFiles();
    }

    @Test
    void aDuplicatePrimaryKeyFailsTheBuildAndLeavesNoFile() throws Exception {
        Path image = dir.resolve("notes.sqlite");

        IOException e = assertThrows(
                IOException.class,
                () -> SqliteImageBuilder.build(
                        image, notes(), 3, 5, "d", batches(List.of(List.of(noteRow(1)), List.of(noteRow(1))))));

        assertTrue(e.getCause() instanceof SQLException, String.valueOf(e.getCause()));
        assertNoFiles();
    }

    // ------------------------------------------------------------------------------------------------
    // helpers
    // ------------------------------------------------------------------------------------------------

    private record Col(String name, String type, boolean notNull, int pk) {}

    private static TableSchema notes() throws IOException {
        try (InputStream in = SqliteImageBuilderTest.class.getResourceAsStream("/schema/notes.json")) {
            return SchemaLoader.load(in).table("notes");
        }
    }

    private static TableSchema allTypes() {
        return SchemaLoader.parse(ALL_TYPES).table("docs");
    }

    /** A notes row (id, project_id, title, body, priority, done) with some NULLs; ids sort in index order. */
    private static StoredRow noteRow(int i) {
        String id = String.format("note-%08d", i);
        return row(
                id,
                1 + i % 4,
                id,
                "p" + i % 3,
                i % 5 == 0 ? null : "title " + i,
                i % 2 == 0 ? null : "body",
                i % 7 == 0 ? null : (long) i * 3,
                i % 6 == 0 ? null : i % 4 == 0);
    }

    private static StoredRow row(String rowId, long serverVersion, Object... values) {
        return new StoredRow(rowId, serverVersion, values, NO_VERSIONS, Map.of());
    }

    private static SqliteImageBuilder.RowBatches batches(List<List<StoredRow>> source) {
        Deque<List<StoredRow>> queue = new ArrayDeque<>(source);
        return () -> queue.isEmpty() ? List.of() : queue.poll();
    }

    private void assertNoFiles() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(), files.toList(), "the partial image (and any sidecar) is deleted");
        }
    }

    private static Connection open(Path image) throws SQLException {
        SQLiteConfig config = new SQLiteConfig();
        return config.createConnection("jdbc:sqlite:" + image.toAbsolutePath());
    }

    private static List<Col> tableInfo(Connection c, String table) throws SQLException {
        List<Col> cols = new ArrayList<>();
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("PRAGMA table_info(" + SqliteImageBuilder.quote(table) + ")")) {
            while (rs.next()) {
                cols.add(new Col(
                        rs.getString("name"), rs.getString("type"), rs.getInt("notnull") == 1, rs.getInt("pk")));
            }
        }
        return cols;
    }

    /** All rows of a query, integers widened to Long. */
    private static List<List<Object>> rows(Connection c, String sql) throws SQLException {
        List<List<Object>> out = new ArrayList<>();
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<Object> row = new ArrayList<>(n);
                for (int i = 1; i <= n; i++) {
                    Object v = rs.getObject(i);
                    row.add(v instanceof Integer x ? Long.valueOf(x) : v);
                }
                out.add(row);
            }
        }
        return out;
    }
}
