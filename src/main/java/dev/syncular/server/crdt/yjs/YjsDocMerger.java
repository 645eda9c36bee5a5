package dev.syncular.server.crdt.yjs;

import dev.syncular.server.sync.CrdtTypeMerger;
import java.util.Arrays;

/**
 * The built-in {@code yjs-doc} merger (§5.10.1, §5.10.2): the stored and the pushed value are Yjs v1
 * updates (a full document state is an update too), and the merged value is the single update
 * {@link UpdateMerger} makes of them, so the stored column always holds every edit it was ever given.
 * Yjs updates form a CRDT, which makes this commutative, associative and idempotent in document state. A
 * {@code null} or empty stored value is the empty document; bytes that are not an update throw
 * {@link YjsFormatException}.
 */
public final class YjsDocMerger implements CrdtTypeMerger {
    public static final String CRDT_TYPE = "yjs-doc";

    @Override
    public String crdtType() {
        return CRDT_TYPE;
    }

    @Override
    public byte[] merge(byte[] stored, byte[] incoming) {
        return UpdateMerger.merge(Arrays.asList(stored, incoming));
    }
}
