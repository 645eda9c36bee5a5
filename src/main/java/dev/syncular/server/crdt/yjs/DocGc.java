package dev.syncular.server.crdt.yjs;

/**
 * Garbage-collected ticks in a document (Yjs's {@code GC} struct): what is left of deleted items whose parent
 * type was collected too, or of items that lost their parent. Adjacent runs join.
 */
final class DocGc extends DocStruct {
    DocGc(long client, long clock, long length) {
        super(client, clock, length);
    }

    @Override
    boolean deleted() {
        return true;
    }

    @Override
    boolean mergeWith(DocStruct right) {
        if (!(right instanceof DocGc)) {
            return false;
        }
        length += right.length;
        return true;
    }

    /** Adds the run to the store; {@code offset} ticks the document already has are cut off first. */
    void integrate(StructStore store, long offset) {
        if (offset > 0) {
            clock += offset;
            length -= offset;
        }
        store.add(this);
    }

    @Override
    void write(Lib0Writer w) {
        w.writeUint8(Struct.GC_INFO);
        w.writeVarUint(length);
    }
}
