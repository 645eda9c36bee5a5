package dev.syncular.server.segments.memory;

import dev.syncular.server.segments.SegmentCollisionException;
import dev.syncular.server.segments.SegmentPublication;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentStoreStats;
import dev.syncular.server.segments.StoredSegment;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A single-process {@link SegmentStore} (tests, dev) with the same semantics as the PostgreSQL store
 * (§5.1): one entry per content address, one publication per context, merges extend a context's expiry
 * (never shorten it), a byte mismatch under an existing id fails with {@link SegmentCollisionException} and
 * changes nothing. Every mutation of an entry is one atomic {@link ConcurrentHashMap#compute}, so
 * concurrent publishers never lose a publication. Bytes are copied in and out.
 */
public final class InMemorySegmentStore implements SegmentStore {
    private record Entry(byte[] bytes, List<SegmentPublication> publications) {}

    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
    private final long maxSegmentBytes;

    public InMemorySegmentStore() {
        this(Long.MAX_VALUE);
    }

    /** @param maxSegmentBytes the {@link #maxSegmentBytes()} this store reports */
    public InMemorySegmentStore(long maxSegmentBytes) {
        this.maxSegmentBytes = maxSegmentBytes;
    }

    @Override
    public long maxSegmentBytes() {
        return maxSegmentBytes;
    }

    @Override
    public Uni<Void> publish(String segmentId, byte[] bytes, SegmentPublication publication) {
        Objects.requireNonNull(segmentId, "segmentId");
        Objects.requireNonNull(bytes, "bytes");
        Objects.requireNonNull(publication, "publication");
        return Uni.createFrom().item(() -> {
            entries.compute(segmentId, (id, old) -> {
                if (old == null) {
                    return new Entry(bytes.clone(), List.of(publication));
                }
                if (!Arrays.equals(old.bytes(), bytes)) {
                    throw new SegmentCollisionException();
                }
                List<SegmentPublication> pubs =
                        new ArrayList<>(old.publications().size() + 1);
                boolean merged = false;
                for (SegmentPublication p : old.publications()) {
                    if (!merged && p.sameContext(publication)) {
                        merged = true;
                        if (publication.expiresAtMs() > p.expiresAtMs()) {
                            p = new SegmentPublication(
                                    p.partition(),
                                    p.logEpoch(),
                                    p.table(),
                                    p.schemaVersion(),
                                    p.mediaType(),
                                    p.scopeDigest(),
                                    p.asOfCommitSeq(),
                                    p.rowCursor(),
                                    p.nextRowCursor(),
                                    p.rowCount(),
                                    p.createdAtMs(),
                                    publication.expiresAtMs());
                        }
                    }
                    pubs.add(p);
                }
                if (!merged) {
                    pubs.add(publication);
                }
                return new Entry(old.bytes(), List.copyOf(pubs));
            });
            return null;
        });
    }

    @Override
    public Uni<StoredSegment> describe(String segmentId) {
        Objects.requireNonNull(segmentId, "segmentId");
        return Uni.createFrom().item(() -> {
            Entry e = entries.get(segmentId);
            return e == null ? null : new StoredSegment(segmentId, e.bytes().length, e.publications());
        });
    }

    @Override
    public Uni<Match> find(ReuseKey key, long nowMs) {
        return Uni.createFrom().item(() -> {
            Match best = null;
            for (var e : entries.entrySet()) {
                for (SegmentPublication p : e.getValue().publications()) {
                    if (key.matches(p)
                            && p.expiresAtMs() > nowMs
                            && (best == null
                                    || p.expiresAtMs() > best.publication().expiresAtMs())) {
                        best = new Match(e.getKey(), e.getValue().bytes().length, p);
                    }
                }
            }
            return best;
        });
    }

    @Override
    public Uni<byte[]> read(String segmentId) {
        Objects.requireNonNull(segmentId, "segmentId");
        return Uni.createFrom().item(() -> {
            Entry e = entries.get(segmentId);
            return e == null ? null : e.bytes().clone();
        });
    }

    /**
     * Deletes every publication that expired before {@code nowMs}, then forgets the entries left without
     * any publication; returns how many entries were forgotten.
     */
    @Override
    public Uni<Integer> deleteExpired(long nowMs) {
        return Uni.createFrom().item(() -> {
            AtomicInteger forgotten = new AtomicInteger();
            for (String id : entries.keySet()) {
                entries.computeIfPresent(id, (k, e) -> {
                    List<SegmentPublication> live =
                            new ArrayList<>(e.publications().size());
                    for (SegmentPublication p : e.publications()) {
                        if (p.expiresAtMs() >= nowMs) {
                            live.add(p);
                        }
                    }
                    if (live.isEmpty()) {
                        forgotten.incrementAndGet();
                        return null;
                    }
                    return live.size() == e.publications().size() ? e : new Entry(e.bytes(), List.copyOf(live));
                });
            }
            return forgotten.get();
        });
    }

    @Override
    public Uni<SegmentStoreStats> stats(long nowMs) {
        return Uni.createFrom().item(() -> {
            long segments = 0;
            long bytes = 0;
            long publications = 0;
            long live = 0;
            for (Entry e : entries.values()) {
                segments++;
                bytes += e.bytes().length;
                publications += e.publications().size();
                live += e.publications().stream()
                        .filter(p -> p.expiresAtMs() > nowMs)
                        .count();
            }
            return new SegmentStoreStats("memory", segments, bytes, publications, live);
        });
    }
}
