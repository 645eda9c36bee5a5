package dev.syncular.server.sync;

import dev.syncular.server.errors.SyncError;
import dev.syncular.server.storage.ServeGate;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.SyncStorage;
import io.smallrye.mutiny.Uni;

/**
 * The §2.4 read-verify-refuse serve gate around a unit of work: the gate read on entry ({@link #admit}),
 * the writer fence turned into its refusal ({@link #fenced}), the gate read again before anything is
 * released ({@link #verified}); every refusal is told to the {@link SyncObserver} ({@link #refuse}). The
 * decision itself is {@link ServeGates}.
 */
final class ServeGateCheck {
    private final SyncStorage storage;
    private final ServeGates gates;
    private final SyncObserver observer;

    ServeGateCheck(SyncStorage storage, ServeGates gates, SyncObserver observer) {
        this.storage = storage;
        this.gates = gates;
        this.observer = observer;
    }

    <T> Uni<T> refuse(SyncError refusal) {
        observer.gateRefused(
                String.valueOf(refusal.details().get("partition")),
                String.valueOf(refusal.details().get("reason")));
        return Uni.createFrom().failure(refusal);
    }

    /** The serve gate on entry (§2.4): the gate read this request is verified against before release. */
    Uni<ServeGate> admit(String partition) {
        return storage.readServeGate(partition, gates.runningSchemaVersion()).flatMap(gate -> {
            SyncError refusal = gates.refusal(partition, gate);
            return refusal != null ? refuse(refusal) : Uni.createFrom().item(gate);
        });
    }

    /** §2.4 writer fence: a write the storage fenced off answers the {@code writer_fenced} refusal. */
    <T> Uni<T> fenced(String partition, Uni<T> planned) {
        return planned.onFailure(e ->
                        e instanceof StorageException se && StorageException.WRITER_FENCE_REJECTED.equals(se.code()))
                .recoverWithUni(e -> refuse(gates.writerFenced(partition)));
    }

    /**
     * Read-verify-refuse: the whole response is planned, then the gate is read again; a refusing gate or a
     * changed token (stored schema version, log epoch) answers {@code sync.schema_not_ready} and nothing of
     * the planned response escapes. Writes already committed stay durable and replay idempotently (§2.3).
     */
    <T> Uni<T> verified(String partition, ServeGate before, Uni<T> planned) {
        return fenced(partition, planned)
                .flatMap(result -> storage.readServeGate(partition, gates.runningSchemaVersion())
                        .flatMap(after -> {
                            SyncError refusal = gates.verify(partition, before, after);
                            return refusal != null
                                    ? refuse(refusal)
                                    : Uni.createFrom().item(result);
                        }));
    }
}
