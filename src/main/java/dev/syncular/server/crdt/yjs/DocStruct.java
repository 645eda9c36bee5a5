package dev.syncular.server.crdt.yjs;

/**
 * A struct held by a {@link YjsDoc}'s {@link StructStore}: a run of {@link #length} consecutive clock ticks
 * of one client, starting at {@link #clock}. Unlike the decoded {@link Struct}s of an update it is mutable:
 * integration cuts off ticks the document already has, splitting cuts it in two, merging joins its right
 * neighbour into it.
 */
abstract sealed class DocStruct permits DocItem, DocGc {
    final long client;
    long clock;
    long length;

    DocStruct(long client, long clock, long length) {
        this.client = client;
        this.clock = clock;
        this.length = length;
    }

    final long end() {
        return clock + length;
    }

    final YjsId id() {
        return new YjsId(client, clock);
    }

    /** Whether the ticks are deleted (always, for a garbage-collected run). */
    abstract boolean deleted();

    /** Joins {@code right}, the struct that follows in the client's run, into this one if they can be one. */
    abstract boolean mergeWith(DocStruct right);

    /** Writes the struct whole, as {@code Y.encodeStateAsUpdate} does. */
    abstract void write(Lib0Writer w);
}
