package dev.syncular.server.crdt.yjs;

import dev.syncular.server.sync.CrdtTypeMerger;

/**
 * The built-in {@code yjs-doc} merger (§5.10.1, §5.10.2), byte for byte the reference merger: the stored and
 * the pushed value are Yjs v1 updates, both are applied to a fresh document (garbage collection on) and the
 * merged value is that document's {@code encodeStateAsUpdate} — the integrated state, with deleted content
 * collected, adjacent items joined, and structs or deletes still waiting for missing dependencies carried
 * along. Yjs updates form a CRDT, which makes this commutative, associative and idempotent in document
 * state. A {@code null} or empty value is the empty document; bytes that are not an update, or that cannot
 * be applied, throw {@link YjsFormatException}.
 */
public final class YjsDocMerger implements CrdtTypeMerger {
    public static final String CRDT_TYPE = "yjs-doc";

    @Override
    public String crdtType() {
        return CRDT_TYPE;
    }

    @Override
    public byte[] merge(byte[] stored, byte[] incoming) {
        YjsDoc doc = new YjsDoc();
        try {
            if (stored != null && stored.length > 0) {
                doc.applyUpdate(stored);
            }
            if (incoming != null && incoming.length > 0) {
                doc.applyUpdate(incoming);
            }
            return doc.encodeStateAsUpdate();
        } catch (YjsFormatException e) {
            throw e;
        } catch (RuntimeException | StackOverflowError e) {
            // an update that decodes but cannot be applied (Yjs fails on it too)
            throw new YjsFormatException("update cannot be applied to the document");
        }
    }
}
