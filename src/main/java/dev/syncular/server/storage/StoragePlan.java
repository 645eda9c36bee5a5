package dev.syncular.server.storage;

import java.util.List;
import java.util.Map;

/**
 * What the storage's schema step (§2.4) would do for a schema it is not running yet, read without changing
 * anything: the decision start-up takes on the stored marker ({@link #action}), the statements it would run, and
 * the sizes a plan estimates their cost and the clients' re-bootstraps from.
 *
 * @param storedVersion  the stored marker's schema version, 0 when the storage holds none yet
 * @param action         {@code create} (no marker: every table created), {@code upgrade} (the additive upgrade),
 *                       {@code unchanged} (the same version, verified) or {@code refused}
 * @param refusal        the refusal start-up would fail (or, for a newer stored version, stay unready) with; null
 *                       when the step is allowed
 * @param ddl            the statements of the migration transaction, in order (recorded with the marker when run)
 * @param concurrentDdl  the unique-index builds and drops that follow it, outside any transaction
 * @param writesBlockedMs the estimated time the migration transaction holds every push back (its statements, and
 *                       the writer fences it raises under the {@code sync_partitions} table lock)
 * @param partitions     registered partitions: each gets its writer fence raised by the upgrade transaction
 * @param tables         the tables of the new schema that the storage holds already, with their sizes
 * @param clients        client records seen since the plan's cut-off, per schema version
 */
public record StoragePlan(
        int storedVersion,
        String action,
        StorageException refusal,
        List<Statement> ddl,
        List<Statement> concurrentDdl,
        long writesBlockedMs,
        long partitions,
        List<TableSize> tables,
        List<ClientVersion> clients) {
    public static final String CREATE = "create";
    public static final String UPGRADE = "upgrade";
    public static final String UNCHANGED = "unchanged";
    public static final String REFUSED = "refused";

    public StoragePlan {
        ddl = List.copyOf(ddl);
        concurrentDdl = List.copyOf(concurrentDdl);
        tables = List.copyOf(tables);
        clients = List.copyOf(clients);
    }

    /**
     * One planned statement: its SQL, the synced table it touches (null for none), the lock it takes, whether that
     * lock holds writes back, the table's current rows and the estimated time on them.
     */
    public record Statement(String sql, String table, String lock, boolean blocksWrites, long rows, long estimatedMs) {}

    /** The SQL of {@code statements}, in order. */
    public static List<String> sql(List<Statement> statements) {
        return statements.stream().map(Statement::sql).toList();
    }

    /**
     * A synced table the storage holds: its rows, its bytes on disk (table, indexes and TOAST), its rows per
     * partition, and the columns of the new schema its stored layout lacks (the upgrade adds them, NULL in every
     * existing row).
     */
    public record TableSize(
            String table, long rows, long bytes, Map<String, Long> rowsByPartition, List<String> addedColumns) {
        public TableSize {
            rowsByPartition = Map.copyOf(rowsByPartition);
            addedColumns = List.copyOf(addedColumns);
        }
    }

    /**
     * The client records of one schema version ({@code 0}: a record that names none): distinct clients and actors, and
     * per subscribed table what its subscriptions reach ({@link TableReach}).
     */
    public record ClientVersion(int schemaVersion, long clients, long actors, Map<String, TableReach> tables) {
        public ClientVersion {
            tables = Map.copyOf(tables);
        }
    }

    /**
     * What the subscriptions of one version's clients on one table reach now: the distinct clients, and summed over the
     * subscriptions the rows their recorded effective scopes (§3.2; the requested ones for a record without) cover and
     * those rows' bytes — what re-bootstrapping them sends. Rows and bytes are 0 for a table the storage does not hold.
     */
    public record TableReach(long clients, long rows, long bytes) {}
}
