package dev.syncular.server.storage.postgres;

import static dev.syncular.server.storage.postgres.PgSql.q;

import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.StorageException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The DDL plan of the synced tables ({@code sync_rows_<table>}, one per table of the app schema): the table as
 * first created, and the additive upgrade from a stored layout (§2.4 schema upgrade).
 */
final class RowTableDdl {
    private final String pgSchema;

    RowTableDdl(String pgSchema) {
        this.pgSchema = pgSchema;
    }

    private String t(String name) {
        return PgSql.qualified(pgSchema, name);
    }

    String createRowTableDdl(TableSchema table) {
        StringBuilder sb = new StringBuilder("CREATE TABLE IF NOT EXISTS ")
                .append(t(RowTable.physicalName(table.name())))
                .append(" (");
        for (ColumnSchema c : table.columns()) {
            sb.append(q(c.name())).append(' ').append(RowTable.sqlType(c.type()));
            if (!c.nullable()) {
                sb.append(" NOT NULL");
            }
            sb.append(", ");
        }
        sb.append("\"_sync_partition\" text NOT NULL, \"_sync_row_id\" text COLLATE \"C\" NOT NULL,")
                .append(" \"_sync_server_version\" bigint NOT NULL, \"_sync_scopes\" jsonb NOT NULL,")
                .append(" \"_sync_payload\" bytea, \"_sync_column_versions\" bytea,")
                .append(" PRIMARY KEY (\"_sync_partition\", \"_sync_row_id\"))");
        return sb.toString();
    }

    /** A fresh storage: every synced table with its unique indexes. */
    List<String> fresh(CompiledSchema running) {
        List<String> ddl = new ArrayList<>();
        for (TableSchema ts : running.tables()) {
            ddl.add(createRowTableDdl(ts));
            ddl.addAll(UniqueIndexes.createWithTable(pgSchema, ts));
        }
        return ddl;
    }

    /**
     * Lower stored version: the additive upgrade. New tables are created; an existing table's persisted columns
     * must be an unchanged prefix of the running columns (name, type, nullability), and the trailing new columns
     * are added nullable. {@code _sync_column_versions} is added when absent.
     *
     * @throws StorageException {@code UNSUPPORTED_MIGRATION} when a table's change is not additive
     */
    List<String> additiveUpgrade(CompiledSchema running, Map<String, TableLayout> stored) {
        List<String> ddl = new ArrayList<>();
        for (TableSchema ts : running.tables()) {
            TableLayout before = stored.get(ts.name());
            String physical = t(RowTable.physicalName(ts.name()));
            ddl.add(createRowTableDdl(ts));
            if (before == null) {
                // a new table is empty: its unique indexes are created with it (existing tables: reconcile)
                ddl.addAll(UniqueIndexes.createWithTable(pgSchema, ts));
                continue;
            }
            TableLayout now = TableLayout.of(ts);
            String changed = firstChange(before, now);
            if (changed != null) {
                throw new StorageException(
                        StorageException.UNSUPPORTED_MIGRATION,
                        "schema upgrade is not additive",
                        Map.of("table", ts.name(), "column", changed));
            }
            for (int i = before.columns().size(); i < ts.columnCount(); i++) {
                ColumnSchema c = ts.column(i);
                ddl.add("ALTER TABLE " + physical + " ADD COLUMN IF NOT EXISTS " + q(c.name()) + " "
                        + RowTable.sqlType(c.type()));
            }
            ddl.add("ALTER TABLE " + physical + " ADD COLUMN IF NOT EXISTS \"_sync_column_versions\" bytea");
        }
        return ddl;
    }

    /**
     * The column at which {@code now} stops being an additive extension of {@code before}: the first stored column that
     * is missing or differs (name, type, nullability), else the new primary key when it changed; {@code null} when the
     * change is additive.
     */
    private static String firstChange(TableLayout before, TableLayout now) {
        for (int i = 0; i < before.columns().size(); i++) {
            TableLayout.ColumnLayout b = before.columns().get(i);
            if (i >= now.columns().size() || !now.columns().get(i).equals(b)) {
                return b.name();
            }
        }
        return before.primaryKey().equals(now.primaryKey()) ? null : now.primaryKey();
    }
}
