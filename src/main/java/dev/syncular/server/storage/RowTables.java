package dev.syncular.server.storage;

/**
 * The SQL names of the synced tables' projections, for read-only queries run against the storage's own database
 * (the registered queries of {@code operations}).
 */
public interface RowTables {

    /** The qualified, quoted name of one of the storage's own objects (e.g. {@code sync_partitions}). */
    String qualified(String name);

    /** The qualified, quoted name of {@code table}'s projection table. */
    String qualifiedRowTable(String table);
}
