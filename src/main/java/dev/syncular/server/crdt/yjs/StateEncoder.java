package dev.syncular.server.crdt.yjs;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code Y.encodeStateAsUpdate(doc)} in the v1 format: every client's structs, highest client id first, then
 * the delete set read off the structs (runs of deleted structs joined). When the document holds pending
 * structs or a pending delete set, those are merged in the way {@code Y.mergeUpdates} merges
 * ({@link UpdateMerger}), as Yjs does, so the state carries them on.
 */
final class StateEncoder {
    private StateEncoder() {}

    static byte[] encode(StructStore store) {
        Lib0Writer w = new Lib0Writer(256);
        List<Long> clients = new ArrayList<>(store.clients.keySet());
        clients.sort((a, b) -> Long.compare(b, a));
        w.writeVarUint(clients.size());
        for (long client : clients) {
            List<DocStruct> structs = store.clients.get(client);
            w.writeVarUint(structs.size());
            w.writeVarUint(client);
            w.writeVarUint(structs.get(0).clock);
            for (DocStruct s : structs) {
                s.write(w);
            }
        }
        deleteSetOf(store).write(w);
        byte[] state = w.toBytes();
        if (store.pendingDs == null && store.pendingStructs == null) {
            return state;
        }
        List<YjsUpdate> parts = new ArrayList<>(3);
        parts.add(YjsUpdate.decode(state));
        if (store.pendingDs != null) {
            parts.add(new YjsUpdate(List.of(), List.of(), store.pendingDs));
        }
        if (store.pendingStructs != null) {
            parts.add(YjsUpdate.decode(store.pendingStructs.update()));
        }
        return UpdateMerger.mergeDecoded(parts);
    }

    /** The deleted ticks of the document, per client, consecutive deleted structs as one range. */
    private static DeleteSet deleteSetOf(StructStore store) {
        DeleteSet ds = new DeleteSet();
        for (Map.Entry<Long, List<DocStruct>> e : store.clients.entrySet()) {
            List<DocStruct> structs = e.getValue();
            for (int i = 0; i < structs.size(); i++) {
                DocStruct s = structs.get(i);
                if (!s.deleted()) {
                    continue;
                }
                long len = s.length;
                while (i + 1 < structs.size() && structs.get(i + 1).deleted()) {
                    len += structs.get(++i).length;
                }
                ds.add(e.getKey(), s.clock, len);
            }
        }
        return ds;
    }
}
