package dev.syncular.server.conformance;

import dev.syncular.server.storage.PushOutcome;
import dev.syncular.server.storage.PushReadHint;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.SyncStorage;
import io.smallrye.mutiny.Uni;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * The conformance host's {@code idempotency-fault} capability (§6.3): an instance's storage as its engine sees it,
 * whose next locked §2.3 idempotency lookup of a push transaction, once {@code failNextIdempotencyLookup} armed it,
 * finds the record unreadable ({@link StorageException#IDEMPOTENCY_RECORD_UNREADABLE}). The push answers that
 * {@code sync.idempotency_cache_miss} (retryable, not persisted, nothing applied). Only the conformance host's build
 * of an engine's parts wraps its storage in it; every other call is forwarded as it is.
 */
final class IdempotencyLookupFault extends ForwardingSyncStorage {
    private final AtomicBoolean failNext;

    /** @param failNext armed by {@code failNextIdempotencyLookup}; the next lookup disarms it and fails */
    IdempotencyLookupFault(SyncStorage delegate, AtomicBoolean failNext) {
        super(delegate);
        this.failNext = failNext;
    }

    @Override
    public <T> Uni<T> inPartitionTransaction(String partition, Function<PushTx, Uni<T>> work) {
        return delegate.inPartitionTransaction(partition, tx -> work.apply(new Lookup(tx)));
    }

    @Override
    public <T> Uni<T> inPartitionTransaction(String partition, PushReadHint hint, Function<PushTx, Uni<T>> work) {
        return delegate.inPartitionTransaction(partition, hint, tx -> work.apply(new Lookup(tx)));
    }

    /** A push transaction whose idempotency lookup fails once when armed. */
    private final class Lookup extends ForwardingPushTx {
        Lookup(PushTx tx) {
            super(tx);
        }

        @Override
        public Uni<PushOutcome> findPushResult(String clientId, String clientCommitId) {
            if (failNext.getAndSet(false)) {
                return Uni.createFrom()
                        .failure(new StorageException(
                                StorageException.IDEMPOTENCY_RECORD_UNREADABLE,
                                "the idempotency record could not be read",
                                Map.of()));
            }
            return delegate.findPushResult(clientId, clientCommitId);
        }
    }
}
