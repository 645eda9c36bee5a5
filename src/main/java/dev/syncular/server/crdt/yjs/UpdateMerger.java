package dev.syncular.server.crdt.yjs;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Merges Yjs v1 updates into one update without building a document, the result {@code Y.mergeUpdates}
 * gives (Yjs 13.6): the structs of all inputs are walked together, highest client id first and by clock
 * within a client; ticks already written are dropped, a struct that starts inside written ticks is cut to
 * its unwritten part, adjacent garbage-collected runs are joined, and a hole in a client's clocks is
 * written as a skip. The delete sets are united. Inputs that hold the same ticks give the same content
 * whichever order they come in; which input's copy of a tick is kept follows the input order, as in Yjs.
 * The {@code yjs-doc} merger no longer stores this form: {@link YjsDocMerger}'s document uses it, as Yjs
 * does, to collect pending structs and to write them, with pending deletes, into the encoded state.
 */
public final class UpdateMerger {
    private UpdateMerger() {}

    /** Merges updates ({@code null} or empty bytes count as the empty update); throws {@link YjsFormatException}. */
    public static byte[] merge(List<byte[]> updates) {
        List<YjsUpdate> decoded = new ArrayList<>(updates.size());
        for (byte[] u : updates) {
            decoded.add(YjsUpdate.decode(u));
        }
        return mergeDecoded(decoded);
    }

    /** Decodes and writes back one update: what {@code Y.mergeUpdates([update, emptyUpdate])} gives. */
    public static byte[] normalize(byte[] update) {
        return merge(List.of(update));
    }

    static byte[] mergeDecoded(List<YjsUpdate> updates) {
        List<Cursor> cursors = new ArrayList<>(updates.size());
        for (YjsUpdate u : updates) {
            cursors.add(new Cursor(u.structs()));
        }
        // Yjs's comparator, including its quirk: two different kinds of struct (an item and a collected run) at
        // the same id both claim to come first, so the comparisons V8's sort makes decide (JsArraySort).
        Comparator<Cursor> order = (a, b) -> {
            Struct x = a.curr;
            Struct y = b.curr;
            if (x.client() != y.client()) {
                return Long.compare(y.client(), x.client()); // higher client ids first
            }
            if (x.clock() != y.clock()) {
                return Long.compare(x.clock(), y.clock());
            }
            return x.getClass() == y.getClass() ? 0 : -1;
        };
        UpdateEncoder out = new UpdateEncoder();
        Struct pending = null; // the struct to write next; it may still grow (joined runs, a widened skip)
        while (true) {
            cursors.removeIf(c -> c.curr == null);
            if (cursors.isEmpty()) {
                break;
            }
            JsArraySort.sort(cursors, order);
            Cursor cursor = cursors.get(0);
            long client = cursor.curr.client();
            if (pending != null) {
                Struct curr = cursor.curr;
                boolean advanced = false;
                // drop what is already written (higher clients were written before lower ones)
                while (curr != null && curr.end() <= pending.end() && curr.client() >= pending.client()) {
                    curr = cursor.next();
                    advanced = true;
                }
                if (curr == null || curr.client() != client || (advanced && curr.clock() > pending.end())) {
                    continue; // re-sort: another input may hold the ticks in between
                }
                if (client != pending.client()) {
                    out.write(pending);
                    pending = curr;
                    cursor.next();
                } else if (pending.end() < curr.clock()) {
                    if (pending instanceof Struct.Skip skip) {
                        skip.setLength(curr.end() - skip.clock());
                    } else {
                        out.write(pending);
                        pending = new Struct.Skip(client, pending.end(), curr.clock() - pending.end());
                    }
                } else {
                    long overlap = pending.end() - curr.clock();
                    if (overlap > 0) {
                        if (pending instanceof Struct.Skip skip) {
                            skip.setLength(skip.length() - overlap); // keep the struct with content
                        } else {
                            curr = curr.sliceFrom(overlap);
                        }
                    }
                    if (!joinInto(pending, curr)) {
                        out.write(pending);
                        pending = curr;
                        cursor.next();
                    }
                }
            } else {
                pending = cursor.curr;
                cursor.next();
            }
            // copy the following contiguous structs of this input straight through
            for (Struct next = cursor.curr;
                    next != null && next.client() == client && next.clock() == pending.end();
                    next = cursor.next()) {
                out.write(pending);
                pending = next;
            }
        }
        if (pending != null) {
            out.write(pending);
        }
        List<DeleteSet> sets = new ArrayList<>(updates.size());
        for (YjsUpdate u : updates) {
            sets.add(u.deleteSet());
        }
        return out.finish(DeleteSet.union(sets));
    }

    /** Joins {@code right} into {@code left} when both are garbage-collected (or both skipped) runs. */
    private static boolean joinInto(Struct left, Struct right) {
        if (left instanceof Struct.Gc gc && right instanceof Struct.Gc) {
            gc.extend(right.length());
            return true;
        }
        if (left instanceof Struct.Skip skip && right instanceof Struct.Skip) {
            skip.setLength(skip.length() + right.length());
            return true;
        }
        return false; // items never join here: Yjs only joins items that are linked in a document
    }

    /** Walks one input's structs, passing over skips. */
    private static final class Cursor {
        private final List<Struct> structs;
        private int index = -1;
        Struct curr;

        Cursor(List<Struct> structs) {
            this.structs = structs;
            next();
        }

        Struct next() {
            do {
                index++;
                curr = index < structs.size() ? structs.get(index) : null;
            } while (curr instanceof Struct.Skip);
            return curr;
        }
    }
}
