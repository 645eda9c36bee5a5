package dev.syncular.server.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import dev.syncular.server.sync.CandidateReader.CandidateRow;
import dev.syncular.server.sync.PushOperations.Staged;
import dev.syncular.server.testsupport.ScratchSchemas;
import io.smallrye.mutiny.Uni;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The §6.8 candidate scan ({@link TransactionCandidates#scanRows}) on real PostgreSQL, for a scope column of each
 * type a scope can have: the filter's values are scope values, text (§3.1, §3.2), compared with the text
 * {@link EffectiveScopes#scopeValue} gives the row's values — a {@code float} as JavaScript prints it ({@code "2"},
 * {@code "1e+21"}, {@code "0"} for -0, {@code "NaN"}), an {@code integer} in decimal, a {@code boolean} as
 * {@code true}/{@code false}. A text that is no value's scope value ({@code "2.0"}, {@code "07"}, {@code "yes"},
 * {@code "abc"}) is held by no row: the scan is empty, never a storage refusal or an internal error. Stored rows
 * are written in their own transactions; the scan runs in a push transaction with staged rows laid over them (an
 * insert, an update that moves a row's scopes, a delete).
 */
class TransactionCandidatesTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @RegisterExtension
    static final ScratchSchemas scratch = ScratchSchemas.open(4);

    static final CompiledSchema SCHEMA = SchemaLoader.parse("""
            {"version": 1, "tables": [{
              "name": "gauges", "primaryKey": "id",
              "columns": [
                {"name": "id", "type": "string", "nullable": false},
                {"name": "name", "type": "string", "nullable": false},
                {"name": "rank", "type": "integer", "nullable": false},
                {"name": "level", "type": "float", "nullable": false},
                {"name": "open", "type": "boolean", "nullable": false}
              ],
              "scopes": ["name:{name}", "rank:{rank}", "level:{level}", "open:{open}"]
            }]}
            """);

    static final TableSchema GAUGES = SCHEMA.table("gauges");

    private static PostgresSyncStorage storage;
    private static String partition;

    private static <T> T await(Uni<T> u) {
        return u.await().atMost(WAIT);
    }

    private static StoredRow row(String id, String name, long rank, double level, boolean open) {
        Object[] values = {id, name, rank, level, open};
        return new StoredRow(id, 1, values, new long[values.length], EffectiveScopes.storedScopes(GAUGES, values));
    }

    /**
     * Stored: a (north, 7, 2.0, true), b (south, -7, 1e21, false), c (north, 7, 0.1, false), d ("2", 2^63-1, -0.0,
     * true), i (south, 0, Infinity, false), n (north, -2^63, NaN, true), z (north, 0, 0.0, true).
     */
    @BeforeAll
    static void storeRows() {
        storage = new PostgresSyncStorage(
                scratch.pool, scratch.fresh("sync_scan_test_"), PostgresSyncStorage.Settings.DEFAULTS);
        await(storage.ensureSchema(SCHEMA));
        partition = "p-" + UUID.randomUUID();
        await(storage.touchPartition(partition, 1_000L));
        for (StoredRow r : List.of(
                row("a", "north", 7, 2.0, true),
                row("b", "south", -7, 1e21, false),
                row("c", "north", 7, 0.1, false),
                row("d", "2", Long.MAX_VALUE, -0.0, true),
                row("i", "south", 0, Double.POSITIVE_INFINITY, false),
                row("n", "north", Long.MIN_VALUE, Double.NaN, true),
                row("z", "north", 0, 0.0, true))) {
            await(storage.inPartitionTransaction(partition, tx -> tx.upsertRow("gauges", r)));
        }
    }

    /**
     * Staged over them: s1 inserted (north, 7, 2.0, true), c updated to level 2.0, a deleted. The candidate state:
     * b, c (north, 7, 2.0, false), d, i, n, s1, z.
     */
    private static Map<String, Staged> staged() {
        Map<String, Staged> staged = new LinkedHashMap<>();
        staged.put("gauges\u0000s1", new Staged("gauges", "s1", row("s1", "north", 7, 2.0, true), 0, new boolean[5]));
        staged.put("gauges\u0000c", new Staged("gauges", "c", row("c", "north", 7, 2.0, false), 1, new boolean[5]));
        staged.put("gauges\u0000a", new Staged("gauges", "a", null, 2, new boolean[5]));
        return staged;
    }

    private static List<String> scan(Map<String, String> filter, String after, int limit) {
        return await(storage.inPartitionTransaction(
                        partition,
                        tx -> new TransactionCandidates(SCHEMA, tx, staged(), RegisteredQueries.NONE)
                                .scanRows("gauges", filter, after, limit)))
                .stream()
                .map(CandidateRow::rowId)
                .toList();
    }

    private static List<String> scan(String variable, String value) {
        return scan(Map.of(variable, value), null, 100);
    }

    private static void assertNoRow(String variable, String... values) {
        for (String v : values) {
            assertEquals(List.of(), scan(variable, v), variable + " = \"" + v + "\" is no row's scope value");
        }
    }

    private static StorageException refused(Map<String, String> filter) {
        Throwable thrown = assertThrows(Throwable.class, () -> scan(filter, null, 100));
        Throwable t = thrown;
        while (!(t instanceof StorageException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (!(t instanceof StorageException se)) {
            throw new AssertionError("expected a StorageException", thrown);
        }
        return se;
    }

    @Test
    void stringScopeValuesMatchTheTextItself() {
        assertEquals(List.of("c", "n", "s1", "z"), scan("name", "north"));
        assertEquals(List.of("b", "i"), scan("name", "south"));
        assertEquals(List.of("d"), scan("name", "2"));
        assertNoRow("name", "North", "nort", "north ", "", "2.0");
    }

    @Test
    void integerScopeValuesAreDecimal() {
        assertEquals(List.of("c", "s1"), scan("rank", "7"));
        assertEquals(List.of("b"), scan("rank", "-7"));
        assertEquals(List.of("i", "z"), scan("rank", "0"));
        assertEquals(List.of("d"), scan("rank", "9223372036854775807"));
        assertEquals(List.of("n"), scan("rank", "-9223372036854775808"));
        // Not a decimal an integer prints as: formerly Long.valueOf threw NumberFormatException (an internal error)
        // or the scan read the rows of 7 for "07".
        assertNoRow(
                "rank",
                "seven",
                "",
                "07",
                "+7",
                "-0",
                "7.0",
                "7e0",
                " 7",
                "7 ",
                "\u0667",
                "9223372036854775808",
                "-9223372036854775809");
    }

    @Test
    void floatScopeValuesAreAsJavaScriptPrintsThem() {
        assertEquals(List.of("c", "s1"), scan("level", "2"));
        assertEquals(List.of("b"), scan("level", "1e+21"));
        assertEquals(List.of("d", "z"), scan("level", "0"), "-0 prints 0");
        assertEquals(List.of("i"), scan("level", "Infinity"));
        assertEquals(List.of("n"), scan("level", "NaN"));
        // Formerly refused by the storage ("row value does not match the column type") whatever the text.
        assertNoRow(
                "level",
                "2.0",
                "02",
                "+2",
                " 2",
                "2 ",
                "2d",
                "0x1p1",
                "1e21",
                "1E+21",
                "1e+021",
                "-0",
                "0.0",
                "0.1",
                "-Infinity",
                "Infinite",
                "two",
                "");
    }

    @Test
    void booleanScopeValuesAreTrueAndFalse() {
        assertEquals(List.of("d", "n", "s1", "z"), scan("open", "true"));
        assertEquals(List.of("b", "c", "i"), scan("open", "false"));
        assertNoRow("open", "TRUE", "True", "1", "0", "yes", "t", "");
    }

    @Test
    void everyVariableOfTheFilterMustMatch() {
        Map<String, String> three = new LinkedHashMap<>();
        three.put("name", "north");
        three.put("open", "true");
        three.put("level", "2");
        assertEquals(List.of("s1"), scan(three, null, 100));
        Map<String, String> levelRank = new LinkedHashMap<>();
        levelRank.put("level", "2");
        levelRank.put("rank", "7");
        assertEquals(List.of("c", "s1"), scan(levelRank, null, 100));
        // A value no row holds empties the scan in any position of the filter.
        Map<String, String> heldFirst = new LinkedHashMap<>();
        heldFirst.put("open", "true");
        heldFirst.put("level", "2.0");
        assertEquals(List.of(), scan(heldFirst, null, 100));
        Map<String, String> heldSecond = new LinkedHashMap<>();
        heldSecond.put("level", "2.0");
        heldSecond.put("open", "true");
        assertEquals(List.of(), scan(heldSecond, null, 100));
    }

    @Test
    void keysetPagesOverStagedAndStoredRows() {
        assertEquals(List.of("c", "n"), scan(Map.of("name", "north"), null, 2));
        assertEquals(List.of("s1", "z"), scan(Map.of("name", "north"), "n", 2));
        assertEquals(List.of("s1"), scan(Map.of("level", "2"), "c", 1));
        assertEquals(List.of(), scan(Map.of("level", "2"), "s1", 1000));
    }

    @Test
    void anEmptyFilterAnUndeclaredVariableOrANullValueFailLoudly() {
        assertEquals("sync.storage.scan_requires_scope", refused(Map.of()).code());
        Map<String, String> undeclaredSecond = new LinkedHashMap<>();
        undeclaredSecond.put("name", "north");
        undeclaredSecond.put("colour", "red");
        StorageException e = refused(undeclaredSecond);
        assertEquals(StorageException.INVALID_ARGUMENT, e.code());
        assertEquals(Map.of("table", "gauges", "variable", "colour"), e.details());
        assertEquals(
                StorageException.INVALID_ARGUMENT,
                refused(Map.of("colour", "red")).code());
        Map<String, String> nullValue = new LinkedHashMap<>();
        nullValue.put("level", null);
        assertEquals(StorageException.INVALID_ARGUMENT, refused(nullValue).code());
    }
}
