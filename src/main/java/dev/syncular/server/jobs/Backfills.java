package dev.syncular.server.jobs;

import dev.syncular.server.storage.ActivationResult;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredCheckpoint;
import dev.syncular.server.storage.SyncStorage;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The Java API for a backfill job running inside the service (§2.4 backfill checkpoints): declare, claim
 * (takes ownership with a fresh owner epoch), run batches whose data and watermark commit together, and
 * activate once the backfilled data covers every source change. Every operation is atomic and safe to retry.
 *
 * <pre>{@code
 * StoredCheckpoint c = backfills.claim("tenant-1", "fill-estimate", 2).await()...;
 * backfills.batch("tenant-1", "fill-estimate", c.ownerEpoch(), watermark, rows, tx -> rewriteRows(tx));
 * backfills.activate("tenant-1", "fill-estimate", c.ownerEpoch(), watermark, List.of("tasks"));
 * }</pre>
 */
@ApplicationScoped
public class Backfills {
    private final SyncStorage storage;

    @Inject
    public Backfills(SyncStorage storage) {
        this.storage = storage;
    }

    public Uni<List<StoredCheckpoint>> list(String partition) {
        return storage.readCheckpoints(partition);
    }

    public Uni<StoredCheckpoint> declare(String partition, String name, int schemaVersion) {
        return storage.declareCheckpoint(partition, name, schemaVersion, System.currentTimeMillis());
    }

    /** Abandons a declaration that is not activated ({@link dev.syncular.server.storage.CheckpointStorage#abandonCheckpoint}). */
    public Uni<StoredCheckpoint> abandon(String partition, String name, int schemaVersion) {
        return storage.abandonCheckpoint(partition, name, schemaVersion);
    }

    public Uni<StoredCheckpoint> claim(String partition, String name, int schemaVersion) {
        return storage.claimCheckpoint(partition, name, schemaVersion, System.currentTimeMillis());
    }

    public Uni<Boolean> advance(String partition, String name, long ownerEpoch, long watermark, long observedRows) {
        return storage.advanceCheckpoint(
                partition, name, ownerEpoch, watermark, observedRows, System.currentTimeMillis());
    }

    /**
     * Runs one backfill batch and advances the watermark in the same storage transaction (under the partition
     * lock): both commit or neither does. Fails with {@code sync.storage.checkpoint_owner_changed} when another
     * owner claimed the checkpoint meanwhile, rolling the batch back.
     */
    public <T> Uni<T> batch(
            String partition,
            String name,
            long ownerEpoch,
            long watermark,
            long observedRows,
            Function<PushTx, Uni<T>> work) {
        return batch(
                        partition,
                        name,
                        ownerEpoch,
                        tx -> work.apply(tx).map(r -> new Batch<>(r, watermark, observedRows)))
                .map(Batch::result);
    }

    /**
     * {@link #batch(String, String, long, long, long, Function)} for work that learns its watermark while it runs,
     * e.g. the commit it appended ({@link PushTx#state()} after the append): the watermark and observed rows of
     * the returned {@link Batch} are advanced in the same transaction.
     */
    public <T> Uni<Batch<T>> batch(
            String partition, String name, long ownerEpoch, Function<PushTx, Uni<Batch<T>>> work) {
        return storage.inPartitionTransaction(
                partition,
                tx -> work.apply(tx)
                        .flatMap(b -> tx.advanceCheckpoint(
                                        name, ownerEpoch, b.watermark(), b.observedRows(), System.currentTimeMillis())
                                .flatMap(ok -> ok
                                        ? Uni.createFrom().item(b)
                                        : Uni.createFrom()
                                                .failure(new StorageException(
                                                        StorageException.CHECKPOINT_OWNER_CHANGED,
                                                        "checkpoint claimed by another owner",
                                                        Map.of("partition", partition, "name", name))))));
    }

    /** A batch's result with the watermark and the observed-rows count it advances the checkpoint to. */
    public record Batch<T>(T result, long watermark, long observedRows) {}

    public Uni<ActivationResult> activate(
            String partition, String name, long ownerEpoch, long watermark, List<String> sourceTables) {
        return storage.activateCheckpoint(
                partition, name, ownerEpoch, watermark, sourceTables, System.currentTimeMillis());
    }
}
