package dev.syncular.server.crdt.yjs;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The delete set that ends an update, and the one a transaction collects: per client (in the order the
 * clients were first seen), the clock ranges ({@code [clock, clock + len)}) that are deleted. Merging unions
 * the ranges; written clients go highest id first, each client's ranges in the order held (sorted by clock,
 * overlapping or touching ranges joined, once {@link #sortAndMerge} or {@link #union} made them so).
 */
final class DeleteSet {
    /** One deleted range. */
    record Range(long clock, long len) {
        long end() {
            return clock + len;
        }
    }

    private final Map<Long, List<Range>> clients = new LinkedHashMap<>();

    static DeleteSet read(Lib0Reader r) {
        DeleteSet ds = new DeleteSet();
        int numClients = r.readLength();
        for (int i = 0; i < numClients; i++) {
            long client = r.readVarUint();
            int n = r.readLength();
            if (n > 0) {
                List<Range> ranges = ds.clients.computeIfAbsent(client, c -> new ArrayList<>());
                for (int j = 0; j < n; j++) {
                    long clock = r.readVarUint();
                    long len = r.readVarUint();
                    if (clock + len > Lib0Reader.MAX_SAFE) {
                        throw new YjsFormatException("delete range out of range");
                    }
                    ranges.add(new Range(clock, len));
                }
            }
        }
        return ds;
    }

    /** Records a deleted range (unsorted until {@link #sortAndMerge}). */
    void add(long client, long clock, long len) {
        clients.computeIfAbsent(client, c -> new ArrayList<>()).add(new Range(clock, len));
    }

    boolean isEmpty() {
        return clients.isEmpty();
    }

    /** Sorts each client's ranges by clock and joins the overlapping or touching ones, in place. */
    void sortAndMerge() {
        clients.replaceAll((client, ranges) -> normalized(ranges));
    }

    /** The union of {@code sets}, normalized. */
    static DeleteSet union(List<DeleteSet> sets) {
        DeleteSet merged = new DeleteSet();
        for (DeleteSet ds : sets) {
            ds.clients.forEach((client, ranges) -> merged.clients
                    .computeIfAbsent(client, c -> new ArrayList<>())
                    .addAll(ranges));
        }
        merged.clients.replaceAll((client, ranges) -> normalized(ranges));
        return merged;
    }

    private static List<Range> normalized(List<Range> ranges) {
        List<Range> sorted = new ArrayList<>(ranges);
        sorted.sort(Comparator.comparingLong(Range::clock));
        List<Range> out = new ArrayList<>(sorted.size());
        for (Range r : sorted) {
            Range last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && last.end() >= r.clock()) {
                out.set(out.size() - 1, new Range(last.clock(), Math.max(last.len(), r.end() - last.clock())));
            } else {
                out.add(r);
            }
        }
        return out;
    }

    /**
     * This delete set as Yjs reads it back after writing it in the v2 update format, where a document keeps
     * its pending deletes: clients highest id first, each range's clock written as the distance from the end
     * of the range before it and its length less one. A negative distance or length (ranges out of order or
     * empty) does not survive: lib0 writes the low seven bits of it, and that is what is read back.
     */
    DeleteSet readBackFromV2() {
        DeleteSet out = new DeleteSet();
        List<Long> ids = new ArrayList<>(clients.keySet());
        ids.sort(Comparator.reverseOrder());
        for (long client : ids) {
            long written = 0;
            long read = 0;
            for (Range r : clients.get(client)) {
                read += v2Uint(r.clock() - written);
                long clock = read;
                written = r.clock() + r.len();
                long len = v2Uint(r.len() - 1) + 1;
                read += len;
                out.add(client, clock, len);
            }
        }
        return out;
    }

    /** What lib0 reads back from writing {@code n} as a varuint: negative numbers keep their low seven bits. */
    private static long v2Uint(long n) {
        return n >= 0 ? n : n & 0x7f;
    }

    void write(Lib0Writer w) {
        List<Long> ids = new ArrayList<>(clients.keySet());
        ids.sort(Comparator.reverseOrder());
        w.writeVarUint(ids.size());
        for (long client : ids) {
            List<Range> ranges = clients.get(client);
            w.writeVarUint(client);
            w.writeVarUint(ranges.size());
            for (Range r : ranges) {
                w.writeVarUint(r.clock());
                w.writeVarUint(r.len());
            }
        }
    }

    /** Deleted ranges by client, as read or merged. */
    Map<Long, List<Range>> clients() {
        return clients;
    }
}
