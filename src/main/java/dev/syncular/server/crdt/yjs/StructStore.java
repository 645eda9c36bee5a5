package dev.syncular.server.crdt.yjs;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The structs of a {@link YjsDoc}, per client an array of runs that cover the clocks {@code [0, state)}
 * without gaps, in the order the clients were first integrated; and what an update could not place yet: the
 * pending structs (an update, with the lowest missing clock per client it waits for) and the pending delete
 * set. Lookups that miss (ids the document does not have) throw {@link YjsFormatException}, where Yjs would
 * fail too.
 */
final class StructStore {
    final Map<Long, List<DocStruct>> clients = new LinkedHashMap<>();
    /** Structs waiting for missing ones, or {@code null}. */
    PendingStructs pendingStructs;
    /** Deletes of clocks the document does not have yet, or {@code null}. */
    DeleteSet pendingDs;

    /** An update of structs that could not be integrated and the clocks, per client, they wait for. */
    record PendingStructs(Map<Long, Long> missing, byte[] update) {}

    long state(long client) {
        List<DocStruct> structs = clients.get(client);
        return structs == null ? 0 : structs.get(structs.size() - 1).end();
    }

    Map<Long, Long> stateVector() {
        Map<Long, Long> sv = new LinkedHashMap<>();
        clients.forEach((client, structs) ->
                sv.put(client, structs.get(structs.size() - 1).end()));
        return sv;
    }

    /** Appends a struct that continues its client's run. */
    void add(DocStruct s) {
        List<DocStruct> structs = clients.get(s.client);
        if (structs == null) {
            structs = new ArrayList<>();
            clients.put(s.client, structs);
        } else if (structs.get(structs.size() - 1).end() != s.clock) {
            throw new YjsFormatException("struct does not continue its client's clock");
        }
        structs.add(s);
    }

    List<DocStruct> structs(long client) {
        List<DocStruct> structs = clients.get(client);
        if (structs == null) {
            throw new YjsFormatException("reference to an unknown client");
        }
        return structs;
    }

    /** The index of the struct that holds {@code clock}. */
    static int findIndex(List<DocStruct> structs, long clock) {
        int lo = 0;
        int hi = structs.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            DocStruct s = structs.get(mid);
            if (s.clock <= clock) {
                if (clock < s.end()) {
                    return mid;
                }
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        throw new YjsFormatException("reference to a clock the document does not have");
    }

    DocStruct find(YjsId id) {
        List<DocStruct> structs = structs(id.client());
        return structs.get(findIndex(structs, id.clock()));
    }

    /** The index of the struct starting at {@code clock}, splitting the item that holds it if needed. */
    static int findIndexCleanStart(Transaction tr, List<DocStruct> structs, long clock) {
        int index = findIndex(structs, clock);
        DocStruct s = structs.get(index);
        if (s.clock < clock && s instanceof DocItem item) {
            structs.add(index + 1, item.split(tr, clock - s.clock));
            return index + 1;
        }
        return index;
    }

    /** The struct starting at {@code id} (an item is split there; a collected run is returned as it is). */
    DocStruct getCleanStart(Transaction tr, YjsId id) {
        List<DocStruct> structs = structs(id.client());
        return structs.get(findIndexCleanStart(tr, structs, id.clock()));
    }

    /** The struct ending at {@code id} (an item is split after it; a collected run is returned as it is). */
    DocStruct getCleanEnd(Transaction tr, YjsId id) {
        List<DocStruct> structs = structs(id.client());
        int index = findIndex(structs, id.clock());
        DocStruct s = structs.get(index);
        if (id.clock() != s.end() - 1 && s instanceof DocItem item) {
            structs.add(index + 1, item.split(tr, id.clock() - s.clock + 1));
        }
        return s;
    }

    void replace(DocStruct old, DocStruct replacement) {
        List<DocStruct> structs = structs(old.client);
        structs.set(findIndex(structs, old.clock), replacement);
    }

    /** Visits the structs covering {@code [clockStart, clockStart + len)}, split at both ends. */
    static void iterate(Transaction tr, List<DocStruct> structs, long clockStart, long len, Consumer<DocStruct> f) {
        if (len == 0) {
            return;
        }
        long clockEnd = clockStart + len;
        int index = findIndexCleanStart(tr, structs, clockStart);
        DocStruct s;
        do {
            s = structs.get(index++);
            if (clockEnd < s.end()) {
                findIndexCleanStart(tr, structs, clockEnd);
            }
            f.accept(s);
        } while (index < structs.size() && structs.get(index).clock < clockEnd);
    }
}
