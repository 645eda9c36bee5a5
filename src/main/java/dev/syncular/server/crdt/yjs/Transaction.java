package dev.syncular.server.crdt.yjs;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One change of a {@link YjsDoc} (applying an update, or the formatting cleanup Yjs runs after one): the state
 * vector before it, the items it deleted, the types it changed, and the split-off items to try to merge again
 * when it is cleaned up ({@link TransactionCleanup}).
 */
final class Transaction {
    final YjsDoc doc;
    final DeleteSet deleteSet = new DeleteSet();
    final Map<Long, Long> beforeState;
    Map<Long, Long> afterState = Map.of();
    /** Types changed whose item existed before the transaction (or roots), in order of first change. */
    final Set<SharedType> changed = new LinkedHashSet<>();

    final List<DocItem> mergeStructs = new ArrayList<>();
    /** Applying a remote update is not local; Yjs cleans up formatting only after remote transactions. */
    boolean local;

    boolean needFormattingCleanup;

    Transaction(YjsDoc doc, boolean local) {
        this.doc = doc;
        this.local = local;
        this.beforeState = doc.store.stateVector();
    }

    long before(long client) {
        return beforeState.getOrDefault(client, 0L);
    }

    void addChanged(SharedType type) {
        DocItem item = type.item;
        if (item == null || (item.clock < before(item.client) && !item.deleted)) {
            changed.add(type);
        }
    }
}
