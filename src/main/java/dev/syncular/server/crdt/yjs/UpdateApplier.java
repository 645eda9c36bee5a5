package dev.syncular.server.crdt.yjs;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Applies a v1 update to a {@link YjsDoc} the way {@code Y.applyUpdate} does, in one remote transaction:
 * the structs are integrated client by client (highest id first), following each struct's dependencies on
 * other clients; structs whose dependencies are missing go to the pending structs with the clocks they
 * wait for, and pending structs are retried once a client they wait for has advanced; deletes of clocks the
 * document does not have yet go to the pending delete set, which is retried with every update.
 */
final class UpdateApplier {
    private final YjsDoc doc;
    private final Transaction tr;
    private final StructStore store;

    /** The unread structs of one client of the update. */
    private static final class Target {
        int i;
        List<Struct> refs;

        Target(List<Struct> refs) {
            this.refs = refs;
        }

        boolean exhausted() {
            return i == refs.size();
        }
    }

    private UpdateApplier(YjsDoc doc, Transaction tr) {
        this.doc = doc;
        this.tr = tr;
        this.store = doc.store;
    }

    static void apply(YjsDoc doc, byte[] update) {
        YjsUpdate decoded = YjsUpdate.decode(update);
        doc.transact(false, tr -> {
            tr.local = false;
            new UpdateApplier(doc, tr).read(decoded);
        });
    }

    private void read(YjsUpdate update) {
        Map<Long, Target> refs = new LinkedHashMap<>();
        for (YjsUpdate.Group g : update.groups()) {
            refs.put(g.client(), new Target(g.structs())); // a client listed twice keeps its last group
        }
        StructStore.PendingStructs rest = integrateStructs(refs);
        boolean retry = false;
        StructStore.PendingStructs pending = store.pendingStructs;
        if (pending != null) {
            for (Map.Entry<Long, Long> m : pending.missing().entrySet()) {
                if (m.getValue() < store.state(m.getKey())) {
                    retry = true;
                    break;
                }
            }
            if (rest != null) {
                rest.missing().forEach((client, clock) -> pending.missing().merge(client, clock, Math::min));
                store.pendingStructs = new StructStore.PendingStructs(
                        pending.missing(), UpdateMerger.merge(List.of(pending.update(), rest.update())));
            }
        } else {
            store.pendingStructs = rest;
        }
        // Yjs keeps pending deletes as a v2 update: each delete set is stored as it reads back from v2
        DeleteSet dsRest = pendingForm(DeleteSetApplier.apply(update.deleteSet(), tr, store));
        if (store.pendingDs != null) {
            DeleteSet dsRest2 = pendingForm(DeleteSetApplier.apply(store.pendingDs, tr, store));
            store.pendingDs = dsRest != null && dsRest2 != null
                    ? pendingForm(DeleteSet.union(List.of(dsRest, dsRest2)))
                    : dsRest != null ? dsRest : dsRest2;
        } else {
            store.pendingDs = dsRest;
        }
        if (retry) {
            byte[] again = store.pendingStructs.update();
            store.pendingStructs = null;
            apply(doc, again);
        }
    }

    private static DeleteSet pendingForm(DeleteSet ds) {
        return ds == null ? null : ds.readBackFromV2();
    }

    /** Integrates what can be integrated; returns the rest as pending structs, or {@code null}. */
    private StructStore.PendingStructs integrateStructs(Map<Long, Target> refs) {
        List<Long> ids = new ArrayList<>(refs.keySet());
        ids.sort(null);
        Target current = nextTarget(refs, ids);
        if (current == null) {
            return null;
        }
        Map<Long, List<Struct>> rest = new LinkedHashMap<>();
        Map<Long, Long> missingSv = new LinkedHashMap<>();
        Map<Long, Long> state = new LinkedHashMap<>();
        Deque<Struct> stack = new ArrayDeque<>();
        Struct head = current.refs.get(current.i++);
        while (true) {
            if (!(head instanceof Struct.Skip)) {
                long client = head.client();
                long localClock = state.computeIfAbsent(client, store::state);
                long offset = localClock - head.clock();
                if (offset < 0) {
                    stack.push(head);
                    missingSv.merge(client, head.clock() - 1, Math::min);
                    moveStackToRest(stack, refs, ids, rest);
                } else {
                    DocStruct s = toDocStruct(head);
                    Long missing = s instanceof DocItem item ? ItemIntegrator.missing(item, tr, store) : null;
                    if (missing != null) {
                        stack.push(head);
                        Target dependency = refs.get(missing);
                        if (dependency == null || dependency.exhausted()) {
                            missingSv.merge(missing, store.state(missing), Math::min);
                            moveStackToRest(stack, refs, ids, rest);
                        } else {
                            head = dependency.refs.get(dependency.i++);
                            continue;
                        }
                    } else if (offset == 0 || offset < s.length) {
                        if (s instanceof DocItem item) {
                            ItemIntegrator.integrate(item, tr, offset);
                        } else {
                            ((DocGc) s).integrate(store, offset);
                        }
                        state.put(client, s.end());
                    }
                }
            }
            if (!stack.isEmpty()) {
                head = stack.pop();
            } else if (current != null && current.i < current.refs.size()) {
                head = current.refs.get(current.i++);
            } else {
                current = nextTarget(refs, ids);
                if (current == null) {
                    break;
                }
                head = current.refs.get(current.i++);
            }
        }
        if (rest.isEmpty()) {
            return null;
        }
        return new StructStore.PendingStructs(missingSv, encodeRest(rest));
    }

    /** The client with the highest id that still has structs to read. */
    private static Target nextTarget(Map<Long, Target> refs, List<Long> ids) {
        while (!ids.isEmpty()) {
            Target t = refs.get(ids.get(ids.size() - 1));
            if (!t.exhausted()) {
                return t;
            }
            ids.remove(ids.size() - 1);
        }
        return null;
    }

    /** The stacked structs cannot be integrated: they and the rest of their clients' structs wait. */
    private static void moveStackToRest(
            Deque<Struct> stack, Map<Long, Target> refs, List<Long> ids, Map<Long, List<Struct>> rest) {
        for (Iterator<Struct> it = stack.descendingIterator(); it.hasNext(); ) { // bottom of the stack first
            Struct s = it.next();
            long client = s.client();
            Target t = refs.get(client);
            if (t != null) {
                t.i--;
                rest.put(client, new ArrayList<>(t.refs.subList(t.i, t.refs.size())));
                refs.remove(client);
                t.i = 0;
                t.refs = List.of();
            } else {
                rest.put(client, new ArrayList<>(List.of(s)));
            }
            ids.remove(Long.valueOf(client));
        }
        stack.clear();
    }

    private static byte[] encodeRest(Map<Long, List<Struct>> rest) {
        List<Long> clients = new ArrayList<>(rest.keySet());
        clients.sort((a, b) -> Long.compare(b, a));
        UpdateEncoder out = new UpdateEncoder();
        for (long client : clients) {
            for (Struct s : rest.get(client)) {
                out.write(s);
            }
        }
        return out.finish(new DeleteSet());
    }

    private DocStruct toDocStruct(Struct s) {
        if (s instanceof Struct.Gc gc) {
            return new DocGc(gc.client(), gc.clock(), gc.length());
        }
        Struct.Item r = (Struct.Item) s;
        Object parent = r.parent() instanceof String name ? doc.root(name) : r.parent();
        SharedType type = r.content() instanceof ItemContent.Type t ? new SharedType(null, t.typeRef()) : null;
        return new DocItem(
                r.client(), r.clock(), r.origin(), r.rightOrigin(), parent, r.parentSub(), r.content(), type);
    }
}
