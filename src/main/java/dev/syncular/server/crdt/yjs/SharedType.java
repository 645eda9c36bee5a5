package dev.syncular.server.crdt.yjs;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A shared type of a {@link YjsDoc}: a root type, known by its name (the merger never asks for a root's kind,
 * so roots stay generic, as in a fresh {@code Y.Doc}), or a nested type held by a type item. It keeps the
 * first item of its list ({@code start}) and, per map key, the key's current item ({@code map}, the newest
 * at the right end of that key's history).
 */
final class SharedType {
    static final int ROOT = -1;
    private static final int TEXT = 2;
    private static final int XML_TEXT = 6;

    /** The root name, or {@code null} for a nested type. */
    final String rootName;
    /** The type reference of a nested type (see {@link ItemContent.Type}), {@link #ROOT} for a root. */
    final int typeRef;
    /** The item holding a nested type once integrated; {@code null} for a root. */
    DocItem item;

    DocItem start;
    final Map<String, DocItem> map = new LinkedHashMap<>();
    /** Whether a formatting item was ever integrated into this type. */
    boolean hasFormatting;

    SharedType(String rootName, int typeRef) {
        this.rootName = rootName;
        this.typeRef = typeRef;
    }

    /** A nested text or XML text: the kinds whose formatting Yjs cleans up after a remote change. */
    boolean isText() {
        return typeRef == TEXT || typeRef == XML_TEXT;
    }

    /**
     * Deletes everything in the type when its item is deleted; content deleted before the transaction is
     * remembered for merging, since the transaction's delete set does not name it.
     */
    void deleteContent(Transaction tr) {
        for (DocItem it = start; it != null; it = it.right) {
            deleteOrRemember(tr, it);
        }
        for (DocItem it : new ArrayList<>(map.values())) {
            deleteOrRemember(tr, it);
        }
        tr.changed.remove(this);
    }

    private static void deleteOrRemember(Transaction tr, DocItem it) {
        if (!it.deleted) {
            it.delete(tr);
        } else if (it.clock < tr.before(it.client)) {
            tr.mergeStructs.add(it);
        }
    }

    /** Turns all content into garbage-collected runs when the type's item is collected. */
    void collectContent(StructStore store) {
        for (DocItem it = start; it != null; it = it.right) {
            it.gc(store, true);
        }
        start = null;
        for (DocItem current : map.values()) {
            for (DocItem it = current; it != null; it = it.left) {
                it.gc(store, true);
            }
        }
        map.clear();
    }
}
