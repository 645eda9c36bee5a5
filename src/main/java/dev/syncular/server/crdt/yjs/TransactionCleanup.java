package dev.syncular.server.crdt.yjs;

import java.util.List;
import java.util.Map;

/**
 * What Yjs does when a transaction ends that changes the bytes a document encodes to: the formatting
 * cleanup of nested texts after a remote change ({@link FormattingCleanup}), garbage collection of the
 * items the transaction deleted (their content becomes deleted content, or a garbage-collected run under a
 * collected type), and merging of adjacent structs that can be one — around the deletes, among the new
 * structs, and around items split during the transaction.
 */
final class TransactionCleanup {
    private TransactionCleanup() {}

    static void run(Transaction tr) {
        StructStore store = tr.doc.store;
        DeleteSet ds = tr.deleteSet;
        ds.sortAndMerge();
        tr.afterState = store.stateVector();
        // Yjs calls the observers of the changed types here; a nested text changed by a remote transaction
        // and holding formatting asks for the formatting cleanup, which runs after all observers.
        for (SharedType t : tr.changed) {
            if ((t.item == null || !t.item.deleted) && t.isText() && !tr.local && t.hasFormatting) {
                tr.needFormattingCleanup = true;
            }
        }
        if (tr.needFormattingCleanup) {
            FormattingCleanup.afterTransaction(tr);
        }
        collectDeleted(ds, store);
        mergeDeleted(ds, store);
        tr.afterState.forEach((client, clock) -> {
            long before = tr.before(client);
            if (before != clock) {
                List<DocStruct> structs = store.structs(client);
                int firstChange = Math.max(StructStore.findIndex(structs, before), 1);
                for (int i = structs.size() - 1; i >= firstChange; ) {
                    i -= 1 + mergeWithLefts(structs, i);
                }
            }
        });
        for (int i = tr.mergeStructs.size() - 1; i >= 0; i--) {
            DocItem m = tr.mergeStructs.get(i);
            List<DocStruct> structs = store.structs(m.client);
            int pos = StructStore.findIndex(structs, m.clock);
            if (pos + 1 < structs.size() && mergeWithLefts(structs, pos + 1) > 1) {
                continue;
            }
            if (pos > 0) {
                mergeWithLefts(structs, pos);
            }
        }
    }

    /** Garbage-collects the deleted items in the delete set (the document collects: gc is on). */
    private static void collectDeleted(DeleteSet ds, StructStore store) {
        for (Map.Entry<Long, List<DeleteSet.Range>> e : ds.clients().entrySet()) {
            List<DocStruct> structs = store.structs(e.getKey());
            List<DeleteSet.Range> ranges = e.getValue();
            for (int di = ranges.size() - 1; di >= 0; di--) {
                DeleteSet.Range r = ranges.get(di);
                for (int si = StructStore.findIndex(structs, r.clock());
                        si < structs.size() && structs.get(si).clock < r.end();
                        si++) {
                    if (structs.get(si) instanceof DocItem item && item.deleted) {
                        item.gc(store, false);
                    }
                }
            }
        }
    }

    /** Merges the structs in and right after each deleted range with their left neighbours, right to left. */
    private static void mergeDeleted(DeleteSet ds, StructStore store) {
        for (Map.Entry<Long, List<DeleteSet.Range>> e : ds.clients().entrySet()) {
            List<DocStruct> structs = store.structs(e.getKey());
            List<DeleteSet.Range> ranges = e.getValue();
            for (int di = ranges.size() - 1; di >= 0; di--) {
                DeleteSet.Range r = ranges.get(di);
                int si = Math.min(structs.size() - 1, 1 + StructStore.findIndex(structs, r.end() - 1));
                while (si > 0 && structs.get(si).clock >= r.clock()) {
                    si -= 1 + mergeWithLefts(structs, si);
                }
            }
        }
    }

    /**
     * Merges the struct at {@code pos} into its left neighbour, and on leftwards while that works; returns
     * how many structs were merged away.
     */
    static int mergeWithLefts(List<DocStruct> structs, int pos) {
        int i = pos;
        while (i > 0) {
            DocStruct right = structs.get(i);
            DocStruct left = structs.get(i - 1);
            if (left.deleted() != right.deleted() || left.getClass() != right.getClass() || !left.mergeWith(right)) {
                break;
            }
            if (right instanceof DocItem r
                    && r.parentSub != null
                    && r.parentType().map.get(r.parentSub) == r) {
                r.parentType().map.put(r.parentSub, (DocItem) left);
            }
            i--;
        }
        int merged = pos - i;
        if (merged > 0) {
            structs.subList(pos + 1 - merged, pos + 1).clear();
        }
        return merged;
    }
}
