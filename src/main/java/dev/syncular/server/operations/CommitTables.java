package dev.syncular.server.operations;

import dev.syncular.server.storage.QueryReads;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import org.jboss.logging.Logger;

/**
 * Which tables the notified commits of a partition touched (REMOTE.md §6: "a commit touching one of the
 * descriptor's tables reruns the query"), read cheaply: the commit notification carries only
 * {@code <partition>:<commitSeq>}, so one index-only read of the change log ({@link QueryReads#changedTables}) — no
 * payload decoded. Per partition at most one such read is in flight; the commits notified meanwhile are read together
 * by the next one. A failed read reports {@link #ALL} (every watch of the partition reruns: a missed rerun would
 * leave a stale snapshot).
 */
final class CommitTables {
    private static final Logger LOG = Logger.getLogger(CommitTables.class);
    /** The tables of a commit whose read failed: every table. */
    static final Set<String> ALL = Set.of("\u0000all");

    private final QueryReads reads;
    private final ConcurrentHashMap<String, Pending> byPartition = new ConcurrentHashMap<>();

    private static final class Pending {
        final List<Long> seqs = new ArrayList<>();
        boolean reading;
        /** No longer the partition's: its last read found nothing more and it left the map (under its lock). */
        boolean retired;
    }

    CommitTables(QueryReads reads) {
        this.reads = reads;
    }

    /** Commit {@code seq} of {@code partition} was notified: {@code touched} hears its tables once read. */
    void committed(String partition, long seq, BiConsumer<String, Set<String>> touched) {
        while (true) {
            Pending p = byPartition.computeIfAbsent(partition, k -> new Pending());
            synchronized (p) {
                if (p.retired) {
                    continue; // it left the map as its read ended: the partition's next one is a new entry
                }
                p.seqs.add(seq);
                if (p.reading) {
                    return;
                }
                p.reading = true;
            }
            read(partition, p, touched);
            return;
        }
    }

    private void read(String partition, Pending p, BiConsumer<String, Set<String>> touched) {
        List<Long> seqs;
        synchronized (p) {
            if (p.seqs.isEmpty()) {
                // retired and removed under one lock: a commit that found this entry before the removal waits
                // here and then takes a new one, so a partition never has two reads in flight
                p.reading = false;
                p.retired = true;
                byPartition.remove(partition, p);
                return;
            }
            seqs = List.copyOf(p.seqs);
            p.seqs.clear();
        }
        reads.changedTables(partition, seqs)
                .subscribe()
                .with(
                        tables -> {
                            deliver(partition, tables, touched);
                            read(partition, p, touched);
                        },
                        e -> {
                            LOG.debugf(
                                    "reading the tables of notified commits failed; every watch of the partition reruns: %s",
                                    e.toString());
                            deliver(partition, ALL, touched);
                            read(partition, p, touched);
                        });
    }

    private static void deliver(String partition, Set<String> tables, BiConsumer<String, Set<String>> touched) {
        if (tables.isEmpty()) {
            return;
        }
        try {
            touched.accept(partition, tables);
        } catch (RuntimeException e) {
            LOG.warn("Watch rerun scheduling failed", e);
        }
    }
}
