package dev.syncular.server.realtime;

import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.sync.RealtimeDelta;
import dev.syncular.server.wire.Message;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The §8.2 deltas of one commit's fan-out, each encoded once per distinct (log epoch, registrations): the sockets
 * of one scope usually hold the same registrations, and a commit to 10,000 of them was encoded 10,000 times. The
 * encodings kept are bounded in bytes across the pod's fan-outs ({@link #POD_MAX_BYTES}, shared through
 * {@code podBytes}): past it a delta is encoded for its session alone, as before. A fan-out's slices run one after
 * the other, never at once; {@link #release} gives its bytes back when it ends.
 */
final class FanoutDeltas {
    /** The bytes of encoded deltas the pod's fan-outs keep for reuse, together. */
    static final long POD_MAX_BYTES = 8L << 20;

    private static final byte[] NONE = new byte[0];

    private record Key(String logEpoch, List<RealtimeDelta.Registration> registrations) {}

    private final StoredCommit commit;
    private final AtomicLong podBytes;
    private final Map<Key, byte[]> encoded = new HashMap<>();
    private long bytes;

    FanoutDeltas(StoredCommit commit, AtomicLong podBytes) {
        this.commit = commit;
        this.podBytes = podBytes;
    }

    /** The encoded delta of the commit for a session of {@code logEpoch} holding {@code registrations}; null: none. */
    byte[] of(String logEpoch, List<RealtimeDelta.Registration> registrations) {
        Key key = new Key(logEpoch, registrations);
        byte[] known = encoded.get(key);
        if (known != null) {
            return known == NONE ? null : known;
        }
        Message delta = RealtimeDelta.delta(logEpoch, registrations, commit);
        byte[] built = delta == null ? NONE : delta.encode();
        if (podBytes.addAndGet(built.length) <= POD_MAX_BYTES) {
            encoded.put(key, built);
            bytes += built.length;
        } else {
            podBytes.addAndGet(-built.length);
        }
        return built == NONE ? null : built;
    }

    /** The fan-out ended: its encodings are dropped and their bytes returned to the pod's bound. */
    void release() {
        podBytes.addAndGet(-bytes);
        bytes = 0;
        encoded.clear();
    }
}
