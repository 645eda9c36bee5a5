package dev.syncular.server.sync;

/**
 * The merger registry seam of §5.10.2: {@code merge(stored, incoming)} for a {@code crdt} column's
 * {@code crdtType}. {@code stored} is {@code null} on insert. A missing merger or a throw rejects the
 * commit with {@code sync.crdt_merge_failed}.
 */
@FunctionalInterface
public interface CrdtMerger {
    /** Returns the merged state, or {@code null} when no merger is registered for {@code crdtType}. */
    byte[] merge(String crdtType, byte[] stored, byte[] incoming);

    CrdtMerger NONE = (type, stored, incoming) -> null;
}
