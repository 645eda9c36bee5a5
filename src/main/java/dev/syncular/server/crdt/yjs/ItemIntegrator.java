package dev.syncular.server.crdt.yjs;

import java.util.HashSet;
import java.util.Objects;
import java.util.Set;

/**
 * Places an item into its document (Yjs's {@code getMissing} and {@code integrate}): it finds the item's
 * neighbours and parent from its origins, resolves concurrent inserts at the same place by the YATA rules
 * (items with the same origin are ordered by client id, lower first, unless that would cross the origin of
 * another conflicting item), links it in, and applies map semantics (only the rightmost item of a key
 * lives; the one before it is deleted). An item whose neighbour or parent was garbage-collected, or that has
 * no parent, becomes a garbage-collected run.
 */
final class ItemIntegrator {
    private ItemIntegrator() {}

    /**
     * The client of a struct the item depends on and the document does not have yet, or {@code null} once
     * every dependency is there — then the neighbours are found (splitting items at the origins) and the
     * parent is resolved.
     */
    static Long missing(DocItem item, Transaction tr, StructStore store) {
        YjsId origin = item.origin;
        YjsId rightOrigin = item.rightOrigin;
        if (origin != null && origin.client() != item.client && origin.clock() >= store.state(origin.client())) {
            return origin.client();
        }
        if (rightOrigin != null
                && rightOrigin.client() != item.client
                && rightOrigin.clock() >= store.state(rightOrigin.client())) {
            return rightOrigin.client();
        }
        if (item.parent instanceof YjsId p && p.client() != item.client && p.clock() >= store.state(p.client())) {
            return p.client();
        }
        boolean collectedNeighbour = false;
        if (origin != null) {
            DocStruct left = store.getCleanEnd(tr, origin);
            if (left instanceof DocItem l) {
                item.left = l;
                item.origin = l.lastId();
            } else {
                collectedNeighbour = true;
            }
        }
        if (rightOrigin != null) {
            DocStruct right = store.getCleanStart(tr, rightOrigin);
            if (right instanceof DocItem r) {
                item.right = r;
                item.rightOrigin = r.id();
            } else {
                collectedNeighbour = true;
            }
        }
        if (collectedNeighbour) {
            item.parent = null;
        } else if (item.parent == null) {
            DocItem from = item.left != null ? item.left : item.right;
            if (from != null) {
                item.parent = from.parent;
                item.parentSub = from.parentSub;
            }
        } else if (item.parent instanceof YjsId p) {
            DocStruct parentItem = store.find(p);
            item.parent = parentItem instanceof DocItem pi && pi.content instanceof ItemContent.Type ? pi.type : null;
        }
        return null;
    }

    /** Integrates the item, less its first {@code offset} ticks that the document already has. */
    static void integrate(DocItem item, Transaction tr, long offset) {
        StructStore store = tr.doc.store;
        if (offset > 0) {
            item.clock += offset;
            DocStruct left = store.getCleanEnd(tr, new YjsId(item.client, item.clock - 1));
            if (!(left instanceof DocItem l)) {
                if (item.parent != null) {
                    throw new YjsFormatException("item continues a garbage-collected run"); // Yjs fails here too
                }
                item.left = null;
            } else {
                item.left = l;
                item.origin = l.lastId();
            }
            item.content = item.content.sliceFrom(offset);
            item.length -= offset;
        }
        if (item.parent == null) {
            new DocGc(item.client, item.clock, item.length).integrate(store, 0);
            return;
        }
        SharedType parent = item.parentType();
        if ((item.left == null && (item.right == null || item.right.left != null))
                || (item.left != null && item.left.right != item.right)) {
            item.left = resolveConflicts(item, parent, store);
        }
        if (item.left != null) {
            item.right = item.left.right;
            item.left.right = item;
        } else {
            DocItem r;
            if (item.parentSub != null) {
                r = firstOfKey(parent, item.parentSub);
            } else {
                r = parent.start;
                parent.start = item;
            }
            item.right = r;
        }
        if (item.right != null) {
            item.right.left = item;
        } else if (item.parentSub != null) {
            parent.map.put(item.parentSub, item); // the newest value of the key
            if (item.left != null) {
                item.left.delete(tr);
            }
        }
        store.add(item);
        integrateContent(item, tr, parent);
        tr.addChanged(parent);
        if ((parent.item != null && parent.item.deleted) || (item.parentSub != null && item.right != null)) {
            item.delete(tr);
        }
    }

    /** YATA: the item to insert after, among the items between the item's left neighbour and its right one. */
    private static DocItem resolveConflicts(DocItem item, SharedType parent, StructStore store) {
        DocItem left = item.left;
        DocItem o;
        if (left != null) {
            o = left.right;
        } else if (item.parentSub != null) {
            o = firstOfKey(parent, item.parentSub);
        } else {
            o = parent.start;
        }
        Set<DocStruct> conflicting = new HashSet<>();
        Set<DocStruct> beforeOrigin = new HashSet<>();
        while (o != null && o != item.right) {
            beforeOrigin.add(o);
            conflicting.add(o);
            if (Objects.equals(item.origin, o.origin)) {
                if (o.client < item.client) { // same origin: the lower client id goes first
                    left = o;
                    conflicting.clear();
                } else if (Objects.equals(item.rightOrigin, o.rightOrigin)) {
                    break; // same place on both sides: this item goes before o
                }
            } else if (o.origin != null && beforeOrigin.contains(store.find(o.origin))) {
                if (!conflicting.contains(store.find(o.origin))) {
                    left = o;
                    conflicting.clear();
                }
            } else {
                break;
            }
            o = o.right;
        }
        return left;
    }

    private static DocItem firstOfKey(SharedType parent, String key) {
        DocItem r = parent.map.get(key);
        while (r != null && r.left != null) {
            r = r.left;
        }
        return r;
    }

    /** What integrating the content does to the document (Yjs's {@code content.integrate}). */
    private static void integrateContent(DocItem item, Transaction tr, SharedType parent) {
        if (item.content instanceof ItemContent.Deleted) {
            tr.deleteSet.add(item.client, item.clock, item.length);
            item.deleted = true;
        } else if (item.content instanceof ItemContent.Type) {
            item.type.item = item;
        } else if (item.content instanceof ItemContent.Format) {
            parent.hasFormatting = true;
        }
    }
}
