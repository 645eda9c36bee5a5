package dev.syncular.server.crdt.yjs;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The cleanup of redundant formatting items that Yjs runs, in a transaction of its own, after a remote
 * transaction changed a nested text holding formatting: a type into which the transaction inserted a
 * formatting item (or whose formatting item it deleted) is cleaned in full; around other deleted items,
 * formatting items for a key already set later in the same gap are deleted. As in Yjs 13.6, the full
 * cleanup only reaches the formatting before the first content item of the type.
 */
final class FormattingCleanup {
    private FormattingCleanup() {}

    static void afterTransaction(Transaction tr) {
        YjsDoc doc = tr.doc;
        Set<SharedType> needFullCleanup = new LinkedHashSet<>();
        tr.afterState.forEach((client, afterClock) -> {
            long clock = tr.before(client);
            if (afterClock != clock) {
                // Yjs passes the after-clock as the length here: the walk runs to the end of the client's structs
                StructStore.iterate(tr, doc.store.structs(client), clock, afterClock, s -> {
                    if (s instanceof DocItem item && !item.deleted && item.content instanceof ItemContent.Format) {
                        needFullCleanup.add(item.parentType());
                    }
                });
            }
        });
        doc.transact(true, t -> {
            forEachDeleted(tr, s -> {
                if (!(s instanceof DocItem item)) {
                    return;
                }
                SharedType parent = item.parentType();
                if (!parent.hasFormatting || needFullCleanup.contains(parent)) {
                    return;
                }
                if (item.content instanceof ItemContent.Format) {
                    needFullCleanup.add(parent);
                } else {
                    cleanupContextless(t, item);
                }
            });
            for (SharedType text : needFullCleanup) {
                cleanupType(t, text);
            }
        });
    }

    /** Visits the structs in the transaction's delete set (Yjs's {@code iterateDeletedStructs}). */
    private static void forEachDeleted(Transaction tr, Consumer<DocStruct> f) {
        for (Map.Entry<Long, List<DeleteSet.Range>> e : tr.deleteSet.clients().entrySet()) {
            List<DocStruct> structs = tr.doc.store.clients.get(e.getKey());
            if (structs == null) {
                continue;
            }
            long clockState = structs.get(structs.size() - 1).end();
            for (DeleteSet.Range r : e.getValue()) {
                if (r.clock() >= clockState) {
                    break;
                }
                StructStore.iterate(tr, structs, r.clock(), r.len(), f);
            }
        }
    }

    /** Deletes formatting items of a key set again further right in the same gap between content items. */
    private static void cleanupContextless(Transaction t, DocItem item) {
        while (item != null && item.right != null && (item.right.deleted || !item.right.countable)) {
            item = item.right;
        }
        Set<String> keys = new HashSet<>();
        while (item != null && (item.deleted || !item.countable)) {
            if (!item.deleted && item.content instanceof ItemContent.Format f) {
                if (!keys.add(f.key())) {
                    item.delete(t);
                }
            }
            item = item.left;
        }
    }

    /** Yjs's {@code cleanupYTextFormatting}: walks the type gap by gap between content items. */
    private static void cleanupType(Transaction t, SharedType type) {
        DocItem start = type.start;
        Map<String, Object> startAttributes = new HashMap<>();
        Map<String, Object> currentAttributes = new HashMap<>(startAttributes);
        for (DocItem end = type.start; end != null; end = end.right) {
            if (end.deleted) {
                continue;
            }
            if (end.content instanceof ItemContent.Format f) {
                update(currentAttributes, f);
            } else {
                cleanupGap(t, start, end, startAttributes, currentAttributes);
                startAttributes = new HashMap<>(currentAttributes);
                start = end;
            }
        }
    }

    private static void cleanupGap(
            Transaction t,
            DocItem start,
            DocItem curr,
            Map<String, Object> startAttributes,
            Map<String, Object> currAttributes) {
        DocItem end = start;
        Map<String, ItemContent.Format> endFormats = new HashMap<>();
        while (end != null && (!end.countable || end.deleted)) {
            if (!end.deleted && end.content instanceof ItemContent.Format cf) {
                endFormats.put(cf.key(), cf);
            }
            end = end.right;
        }
        boolean reachedCurr = false;
        for (; start != end; start = start.right) {
            if (curr == start) {
                reachedCurr = true;
            }
            if (start.deleted || !(start.content instanceof ItemContent.Format f)) {
                continue;
            }
            String key = f.key();
            Object value = FormatValue.of(f);
            Object startValue = startAttributes.get(key);
            if (endFormats.get(key) != f || FormatValue.same(startValue, value)) {
                // overwritten later in the gap, or setting what is already set
                start.delete(t);
                if (!reachedCurr
                        && FormatValue.same(currAttributes.get(key), value)
                        && !FormatValue.same(startValue, value)) {
                    if (startValue == null) {
                        currAttributes.remove(key);
                    } else {
                        currAttributes.put(key, startValue);
                    }
                }
            }
            if (!reachedCurr && !start.deleted) {
                update(currAttributes, f);
            }
        }
    }

    private static void update(Map<String, Object> attributes, ItemContent.Format f) {
        Object value = FormatValue.of(f);
        if (value == null) {
            attributes.remove(f.key());
        } else {
            attributes.put(f.key(), value);
        }
    }
}
