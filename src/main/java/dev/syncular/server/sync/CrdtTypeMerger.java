package dev.syncular.server.sync;

/**
 * The merge function of one {@code crdtType} (§5.10.2): {@code merge(stored, incoming) -> merged}, where
 * {@code stored} is the column's current value ({@code null} for a new row or a NULL column, the empty
 * document) and {@code incoming} the pushed value. It MUST be commutative, associative and idempotent over
 * the updates it consumes, and throws on bytes it cannot merge (the push then fails with
 * {@code sync.crdt_merge_failed}).
 *
 * <p>The server registers the built-in {@code yjs-doc} merger; a team building its own image adds another
 * {@code crdtType} by making an implementation a CDI bean ({@code @ApplicationScoped}), which the edge puts
 * into the {@link CrdtMergerRegistry}.
 */
public interface CrdtTypeMerger {
    /** The {@code crdtType} name a schema's {@code crdt} column selects this merger with (§5.10.1). */
    String crdtType();

    byte[] merge(byte[] stored, byte[] incoming);
}
