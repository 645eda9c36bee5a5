package dev.syncular.server.sync;

import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.SubscriptionFrame;
import io.smallrye.mutiny.Uni;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * One snapshot per distinct (table, effective scopes) in a round (issue 45: no amplification), however many of its
 * subscriptions name it. The data of a bootstrap page (§5.2) or an incremental log window (§4.5) depends only on the
 * table, the effective scopes of §3.2 and the position it starts from, so a round whose sections repeat those reads
 * once: each section still plans its own frames against the response budget (§1.4), which bounds what the repeats
 * add to the response, but the rows are read, encoded and published once.
 *
 * <p>Only a (table, effective scopes) named by two or more sections of the same kind is shared; the others take
 * their usual path, so a round without repeats keeps nothing beyond what it plans. A shared result is held until the
 * round ends: for an inline page its bytes are the response's own, for a page by reference only the descriptor.
 */
final class SnapshotShares {
    /** Shares nothing (a round without a pull, or whose subscriptions are all distinct). */
    static final SnapshotShares NONE = new SnapshotShares(Set.of());

    /** {@code kind ‖ table ‖ scope digest} of the sections that repeat. */
    private final Set<String> repeated;
    /** The reads made so far, by {@code kind ‖ table ‖ digest ‖ position}. */
    private final Map<String, CompletableFuture<?>> results = new HashMap<>();
    /** Reads a section took from another instead of making them. */
    private long reused;

    private SnapshotShares(Set<String> repeated) {
        this.repeated = repeated;
    }

    /** A bootstrap section (§4.7): its rows pages are shared. */
    static final char BOOTSTRAP = 'b';
    /** An incremental section (§4.5): its log window is shared. */
    static final char WINDOW = 'w';

    /**
     * The sections of {@code subs} that repeat a (kind, table, effective scopes), classified by {@link Pull#kind};
     * {@code allowed} {@code null} (revoked) shares nothing.
     */
    static SnapshotShares of(List<SubscriptionFrame> subs, Map<String, List<String>> allowed, PartitionState state) {
        if (allowed == null || subs.size() < 2) {
            return NONE;
        }
        Set<String> seen = new HashSet<>();
        Set<String> repeated = new HashSet<>();
        for (SubscriptionFrame sub : subs) {
            Map<String, List<String>> effective = EffectiveScopes.effective(sub.scopes(), allowed);
            if (effective == null) {
                continue;
            }
            Pull.Kind section = Pull.kind(sub, state);
            if (section == Pull.Kind.RESET) {
                continue; // §4.6 reset: reads nothing
            }
            char kind = section == Pull.Kind.BOOTSTRAP ? BOOTSTRAP : WINDOW;
            String key = key(kind, sub.table(), CanonicalJson.scopeDigest(effective));
            if (!seen.add(key)) {
                repeated.add(key);
            }
        }
        return repeated.isEmpty() ? NONE : new SnapshotShares(repeated);
    }

    /** Whether sections of {@code kind} over {@code table} and the scopes of {@code digest} repeat in the round. */
    boolean repeats(char kind, String table, String digest) {
        return !repeated.isEmpty() && repeated.contains(key(kind, table, digest));
    }

    /**
     * The result of {@code read} for {@code position} of a repeated (kind, table, digest): read by the first
     * section that asks, the same result (or failure) for the others.
     */
    @SuppressWarnings("unchecked")
    <T> Uni<T> once(char kind, String table, String digest, String position, Supplier<Uni<T>> read) {
        String key = key(kind, table, digest) + '\u0000' + position;
        CompletableFuture<T> result;
        boolean first;
        synchronized (results) {
            result = (CompletableFuture<T>) results.get(key);
            first = result == null;
            if (first) {
                result = new CompletableFuture<>();
                results.put(key, result);
            } else {
                reused++;
            }
        }
        if (first) {
            CompletableFuture<T> started = result;
            read.get().subscribe().with(started::complete, started::completeExceptionally);
        }
        return Uni.createFrom().completionStage(result);
    }

    /** Reads a section took from another section of the round ({@link SyncObserver#readsShared}). */
    long reused() {
        synchronized (results) {
            return reused;
        }
    }

    private static String key(char kind, String table, String digest) {
        return kind + "\u0000" + table + '\u0000' + digest;
    }
}
