package dev.syncular.server.crdt.yjs;

import java.util.List;
import java.util.Map;

/**
 * Applies a delete set to a {@link YjsDoc} (Yjs's {@code readAndApplyDeleteSet}): items in a deleted range are
 * split at its ends and deleted; the part of a range past what the document has of that client comes back
 * as a delete set to keep pending.
 */
final class DeleteSetApplier {
    private DeleteSetApplier() {}

    /** Applies {@code ds}; returns the ranges not applicable yet, or {@code null} when all were. */
    static DeleteSet apply(DeleteSet ds, Transaction tr, StructStore store) {
        DeleteSet unapplied = new DeleteSet();
        for (Map.Entry<Long, List<DeleteSet.Range>> e : ds.clients().entrySet()) {
            long client = e.getKey();
            long state = store.state(client);
            for (DeleteSet.Range range : e.getValue()) {
                long clock = range.clock();
                long clockEnd = range.end();
                if (clock >= state) {
                    unapplied.add(client, clock, clockEnd - clock);
                    continue;
                }
                if (state < clockEnd) {
                    unapplied.add(client, state, clockEnd - state);
                }
                List<DocStruct> structs = store.structs(client);
                int index = StructStore.findIndex(structs, clock);
                DocStruct s = structs.get(index);
                if (!s.deleted() && s.clock < clock) {
                    structs.add(index + 1, ((DocItem) s).split(tr, clock - s.clock));
                    index++;
                }
                while (index < structs.size()) {
                    s = structs.get(index++);
                    if (s.clock >= clockEnd) {
                        break;
                    }
                    if (!s.deleted()) {
                        if (clockEnd < s.end()) {
                            structs.add(index, ((DocItem) s).split(tr, clockEnd - s.clock));
                        }
                        ((DocItem) s).delete(tr);
                    }
                }
            }
        }
        return unapplied.isEmpty() ? null : unapplied;
    }
}
