package dev.syncular.server.sync;

import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.ChangeToWrite;
import dev.syncular.server.storage.PlannedReaction;
import dev.syncular.server.storage.PushOutcome;
import dev.syncular.server.storage.PushReadHint;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.StorableText;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.sync.PushOperations.Rejection;
import dev.syncular.server.sync.PushOperations.Staged;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.MessageEncoder;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.PushResultDetails;
import dev.syncular.server.wire.WireWriter;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.tuples.Tuple2;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * The push of a round (§6): its commits in request order, each either replayed from its retained result
 * (§2.3 idempotency identity, §7.2) or applied in one serialized partition transaction (§6.3, §6.4) — the
 * serve gate re-evaluated under the lock (§2.4), the §5.9.6 / §6.6 blob presence looked up before the lock and
 * re-checked under it, the operations applied in order ({@link PushOperations}), the §6.11 declared references
 * enforced over the result ({@link DeclaredReferences}), the whole-commit validators and reaction planners run
 * ({@link CommitPolicy}, §6.8, §6.9), then the commit appended with its rows and reactions written, or the
 * rejection (§6.3, §6.3.1) persisted. A row a declared unique index refuses when it is written fails the attempt
 * whole (§6.4); its rejection ({@code sync.constraint_violation}, {@link UniqueKeyRejection}) is then persisted in a
 * transaction of its own.
 *
 * <p>What runs under the partition lock (the push transaction holds it, and one pooled database connection, from
 * the locked idempotency lookup to commit or rollback; every other writer of the partition waits meanwhile):
 * the statements of the transaction, the in-process row validators and policy rules, CRDT merges (on a worker
 * thread, still inside the transaction) — and the whole-commit validators, which §6.8 requires inside the
 * transaction, after the staged operations and before {@code appendCommit}. Among those the validator webhook is
 * the one network call under the lock: it is bounded by its connect, read and whole-call timeouts, its pool and
 * answer cap, and a circuit breaker that fails validations at once (retryable) while the endpoint is failing
 * ({@code policy.Webhook}), so one push costs the partition at most one bounded call. Outside the lock: scope
 * resolution (host code), the §5.9.6 blob lookups and their entitlement reads (before), reaction delivery (after,
 * by the delivery worker) and the realtime fan-out.
 */
final class CommitPush {
    private final SchemaWindow window;
    private final SyncStorage storage;
    private final BlobStore blobs;
    private final LongSupplier clock;
    private final ServeGates gates;
    private final ServeGateCheck check;
    private final PushOperations operations;
    private final SyncObserver observer;
    private final WritePolicy policy;
    private final Tracing tracing;

    CommitPush(
            SchemaWindow window,
            SyncStorage storage,
            BlobStore blobs,
            LongSupplier clock,
            ServeGates gates,
            ServeGateCheck check,
            PushOperations operations,
            SyncObserver observer,
            WritePolicy policy,
            Tracing tracing) {
        this.tracing = tracing;
        this.policy = policy;
        this.window = window;
        this.storage = storage;
        this.blobs = blobs;
        this.clock = clock;
        this.gates = gates;
        this.check = check;
        this.operations = operations;
        this.observer = observer;
    }

    /** The commits in request order (§6.4), as a stream: the pipeline's depth does not grow with their number. */
    Uni<Void> pushAll(RoundState round, List<PushCommit> pushes, List<Frame> out) {
        return Multi.createFrom()
                .iterable(pushes)
                .onItem()
                .transformToUniAndConcatenate(commit -> tracing.span(
                                "sync.push", round.trace, SpanKind.INTERNAL, trace -> push(round, commit, trace))
                        .invoke(out::addAll))
                .collect()
                .last()
                .replaceWithVoid();
    }

    /** §2.3, §6.3, §6.4: optimistic idempotency lookup, then one serialized transaction per commit. */
    private Uni<List<Frame>> push(RoundState round, PushCommit commit, Context trace) {
        round.commitTrace = trace; // the parent of the commit's validator webhooks (commits run one at a time)
        Span.fromContext(trace).setAttribute(Tracing.PARTITION, round.ctx.partition());
        String partition = round.ctx.partition();
        String clientId = round.header.clientId();
        boolean[] replayed = {false};
        boolean[] unreadable = {false}; // the storage could not read the idempotency record (this attempt)
        PushCommit[] ran = {commit}; // a server command's commit once it ran (REMOTE.md §3), else the pushed one
        List<PlannedReaction> planned = new ArrayList<>(); // the reactions the committed transaction appended (§6.9)
        // the staged rows of the latest attempt: a unique index's refusal surfaces after the work (its writes are
        // pipelined), and is attributed to the operation that staged the refused row
        AtomicReference<Map<String, Staged>> attempt = new AtomicReference<>(Map.of());
        // §6.3: every push is serialized by partition and its idempotency key checked under that boundary;
        // host scope resolution runs before the lock is taken (host code, never under it; the §6.8 whole-commit
        // validators are the exception the spec makes, bounded: see the class comment), and the
        // push transaction re-evaluates the serve gate under the lock (§2.4).
        // §5.9.6: blob lookups before the lock, re-checked against the orphan sweep under it.
        // The transaction's first reads — the locked idempotency lookup and the row prefetch — are announced as
        // a read hint, so the storage may read them ahead with other queued pushes' reads (still under the lock).
        // §5.9.6: ... and the pusher's entitlement to each stored blob (uploaded by it, or referenced by a row it sees)
        return round.allowed
                .flatMap(allowed -> BlobPresence.precheck(
                                blobs,
                                storage,
                                partition,
                                round.ctx.actorId(),
                                allowed.orElse(null),
                                window.current(),
                                round.clientSchema,
                                commit)
                        .flatMap(blobCheck -> {
                            Map<String, List<String>> prefetchIds = prefetchIds(commit);
                            PushReadHint hint = new PushReadHint(clientId, commit.clientCommitId(), prefetchIds);
                            return storage.inPartitionTransaction(
                                    partition,
                                    hint,
                                    tx -> tx.readServeGate(gates.runningSchemaVersion())
                                            .flatMap(gate -> {
                                                SyncError refusal = gates.refusal(partition, gate);
                                                if (refusal != null) {
                                                    return check
                                                            .<Tuple2<
                                                                            Optional<PushOutcome>,
                                                                            Map<String, Optional<StoredRow>>>>
                                                                    refuse(refusal);
                                                }
                                                // The idempotency lookup and the row prefetch go out together (one
                                                // round trip under the
                                                // lock); the prefetched rows are used only when the commit is new.
                                                unreadable[0] = false;
                                                return Uni.combine()
                                                        .all()
                                                        .unis(
                                                                tx.findPushResult(clientId, commit.clientCommitId())
                                                                        .map(Optional::ofNullable)
                                                                        .onFailure(CommitPush::unreadableRecord)
                                                                        .recoverWithItem(e -> {
                                                                            unreadable[0] = true;
                                                                            return Optional.<PushOutcome>empty();
                                                                        }),
                                                                prefetch(tx, prefetchIds))
                                                        .asTuple();
                                            })
                                            .flatMap(found -> unreadable[0]
                                                    // §6.3: an unreadable idempotency record answers the retryable
                                                    // cache miss; nothing applied
                                                    ? Uni.createFrom().item(cacheMiss(commit))
                                                    : (replayed[0] = found.getItem1()
                                                                    .isPresent())
                                                            ? Uni.createFrom()
                                                                    .item(replay(
                                                                            found.getItem1()
                                                                                    .get(),
                                                                            commit))
                                                            : round.command != ServerCommand.NONE
                                                                    ? runCommand(round, tx, commit, allowed)
                                                                            .invoke(ops -> ran[0] = ops)
                                                                            .flatMap(ops -> commandBlobs(
                                                                                            round, tx, ops, allowed)
                                                                                    .flatMap(v -> apply(
                                                                                            round,
                                                                                            tx,
                                                                                            ops,
                                                                                            allowed,
                                                                                            found.getItem2(),
                                                                                            planned,
                                                                                            attempt)))
                                                                    : blobCheck
                                                                            .recheck(tx)
                                                                            .flatMap(checked -> {
                                                                                round.blobs = checked;
                                                                                return apply(
                                                                                        round,
                                                                                        tx,
                                                                                        commit,
                                                                                        allowed,
                                                                                        found.getItem2(),
                                                                                        planned,
                                                                                        attempt);
                                                                            })));
                        }))
                // §6.4, §10.2: a declared unique index refused a row when it was written; the attempt rolled back
                // whole, and the rejection becomes the commit's outcome
                .onFailure(e -> UniqueKeyRejection.violation(e) != null)
                .recoverWithUni(e -> {
                    planned.clear();
                    return finishRejected(
                            round,
                            commit,
                            UniqueKeyRejection.of(UniqueKeyRejection.violation(e), attempt.get()),
                            replayed);
                })
                .invoke(frames -> {
                    if (frames.get(0) instanceof PushResult r) {
                        Span.fromContext(trace)
                                .setAttribute(Tracing.OUTCOME_STATUS, r.status().name());
                        if (r.commitSeq() != null) {
                            Span.fromContext(trace).setAttribute(Tracing.COMMIT_SEQ, r.commitSeq());
                            round.lastCommitSeq = Math.max(round.lastCommitSeq, r.commitSeq());
                        }
                        observer.commitPushed(outcome(partition, clientId, ran[0], r, replayed[0]));
                        planned.forEach(p -> observer.reactionPlanned(p.type()));
                    }
                });
    }

    /**
     * The outcome of a commit whose attempt failed whole with {@code rejection} (a unique index refused a row, §6.4):
     * persisted in a transaction of its own, under the partition lock and the serve gate like any push, unless a
     * concurrent delivery of the same commit stored an outcome meanwhile (§2.3, §6.3: then that one is replayed).
     */
    private Uni<List<Frame>> finishRejected(
            RoundState round, PushCommit commit, Rejection rejection, boolean[] replayed) {
        String partition = round.ctx.partition();
        String clientId = round.header.clientId();
        return storage.inPartitionTransaction(
                partition,
                null,
                tx -> tx.readServeGate(gates.runningSchemaVersion()).flatMap(gate -> {
                    SyncError refusal = gates.refusal(partition, gate);
                    if (refusal != null) {
                        return check.<List<Frame>>refuse(refusal);
                    }
                    return tx.findPushResult(clientId, commit.clientCommitId()).flatMap(found -> {
                        if (found != null) {
                            replayed[0] = true;
                            return Uni.createFrom().item(replay(found, commit));
                        }
                        return reject(round, tx, commit, rejection, clock.getAsLong());
                    });
                }));
    }

    /**
     * REMOTE.md §3: the command runs here, after the partition lock and the locked idempotency lookup found no
     * result, and its operations become the commit. Its reads see only rows the actor's resolved scopes grant
     * (§3.4). A command that returns nothing fails the round ({@link ServerCommand.NoMutations}); one that throws
     * fails it with its exception: the transaction rolls back and nothing is stored.
     */
    private Uni<PushCommit> runCommand(
            RoundState round, PushTx tx, PushCommit placeholder, Optional<Map<String, List<String>>> allowed) {
        ServerCommand.Rows rows = (table, rowId) -> {
            TableSchema t = window.current().table(table);
            if (t == null) {
                return Uni.createFrom().item(Optional.empty());
            }
            return tx.readRows(table, List.of(rowId)).map(found -> {
                StoredRow row = found.get(rowId);
                Map<String, List<String>> grant = allowed.orElse(null);
                return row != null && grant != null && EffectiveScopes.authorizesRow(t, row.values(), grant)
                        ? Optional.of(row)
                        : Optional.<StoredRow>empty();
            });
        };
        return Uni.createFrom().deferred(() -> round.command.run(rows)).map(ops -> {
            if (ops == null || ops.isEmpty()) {
                throw new ServerCommand.NoMutations();
            }
            return new PushCommit(placeholder.clientCommitId(), List.copyOf(ops));
        });
    }

    /**
     * §5.9.6 / §6.6 for a command's commit (REMOTE.md §3: its operations meet everything an ordinary push meets):
     * its blob references are known only once it ran, under the lock, so their lookups (the store, the sweep mark
     * and the actor's entitlement, as for a push) run there, followed by the same under-the-lock re-check. Only
     * a command whose mutations reference blobs pays this; the others look up nothing.
     */
    private Uni<Void> commandBlobs(
            RoundState round, PushTx tx, PushCommit ops, Optional<Map<String, List<String>>> allowed) {
        return BlobPresence.precheck(
                        blobs,
                        storage,
                        round.ctx.partition(),
                        round.ctx.actorId(),
                        allowed.orElse(null),
                        window.current(),
                        round.clientSchema,
                        ops)
                .flatMap(check -> check.recheck(tx))
                .invoke(checked -> round.blobs = checked)
                .replaceWithVoid();
    }

    /** The observer's view of a committed push: replayed, applied, or refused by a conflict or an error (§6.3). */
    private static SyncObserver.Commit outcome(
            String partition, String clientId, PushCommit commit, PushResult r, boolean replayed) {
        SyncObserver.CommitOutcome outcome = replayed
                ? SyncObserver.CommitOutcome.CACHED
                : r.status() == CommitStatus.REJECTED
                        ? SyncObserver.CommitOutcome.REJECTED
                        : SyncObserver.CommitOutcome.APPLIED;
        String code = null;
        if (outcome == SyncObserver.CommitOutcome.REJECTED) {
            for (OpResult result : r.results()) {
                if (result instanceof OpResult.Conflict c) {
                    outcome = SyncObserver.CommitOutcome.CONFLICTED;
                    code = c.code();
                } else if (result instanceof OpResult.Error e) {
                    code = e.code();
                }
            }
        }
        return new SyncObserver.Commit(
                partition,
                clientId,
                commit.clientCommitId(),
                outcome,
                code,
                commit.operations().size(),
                pushedBytes(commit));
    }

    /** The size of a commit's operations as pushed (§6.1): each one's table, row id and sparse row payload. */
    static long pushedBytes(PushCommit commit) {
        long bytes = 0;
        for (PushOperation op : commit.operations()) {
            bytes += op.table().length() + op.rowId().length() + (op.payload() == null ? 0 : op.payload().length);
        }
        return bytes;
    }

    /** A retained result replays byte-equivalent: applied as {@code cached}, rejected unchanged (§2.3). */
    private static List<Frame> replay(PushOutcome outcome, PushCommit commit) {
        try {
            List<Frame> frames = new ArrayList<>(MessageDecoder.decodeResponseFrames(outcome.result()));
            PushResult original = (PushResult) frames.get(0);
            if (original.status() == CommitStatus.APPLIED) {
                frames.set(
                        0,
                        new PushResult(
                                original.clientCommitId(),
                                CommitStatus.CACHED,
                                original.commitSeq(),
                                original.results()));
            }
            return frames;
        } catch (RuntimeException e) {
            return cacheMiss(commit);
        }
    }

    /** §6.3: an unreadable retained result answers {@code sync.idempotency_cache_miss} and is not persisted. */
    /** §6.3: the storage could not read the idempotency record (answered with the retryable cache miss). */
    private static boolean unreadableRecord(Throwable e) {
        return e instanceof StorageException se && StorageException.IDEMPOTENCY_RECORD_UNREADABLE.equals(se.code());
    }

    private static List<Frame> cacheMiss(PushCommit commit) {
        return List.of(new PushResult(
                commit.clientCommitId(),
                CommitStatus.REJECTED,
                null,
                List.of(new OpResult.Error(
                        0, ErrorCode.IDEMPOTENCY_CACHE_MISS.code, "cached push result unreadable", true))));
    }

    private Uni<List<Frame>> apply(
            RoundState round,
            PushTx tx,
            PushCommit commit,
            Optional<Map<String, List<String>>> allowed,
            Map<String, Optional<StoredRow>> fetched,
            List<PlannedReaction> planned,
            AtomicReference<Map<String, Staged>> attempt) {
        Map<String, Staged> staged = new LinkedHashMap<>();
        attempt.set(staged);
        List<ChangeToWrite> changes = new ArrayList<>();
        List<OpResult> results = new ArrayList<>();
        List<OperationEvidence> evidence = policy.needsCommitEvidence() ? new ArrayList<>() : null;
        // §6.8 / §6.9 order: operations × N → references (§6.11) → whole-commit validation → reaction planning
        // → append log, reactions and idempotency result → commit
        return operations
                .applyOps(round, tx, commit, allowed, 0, staged, fetched, changes, results, evidence)
                .flatMap(r -> r != null
                        ? Uni.createFrom().item(r)
                        : DeclaredReferences.enforce(window.current(), tx, staged, changes, allowed.orElse(null)))
                .flatMap(rejection -> rejection != null || evidence == null
                        ? Uni.createFrom().item(new CommitPolicy.Decision(rejection, List.of()))
                        : CommitPolicy.decide(
                                policy,
                                new CommitEvidence(
                                        round.header.clientId(),
                                        commit.clientCommitId(),
                                        round.ctx.actorId(),
                                        round.ctx.partition(),
                                        List.copyOf(evidence)),
                                operations.reader(tx, staged),
                                round.commitTrace))
                .flatMap(decision -> {
                    Rejection rejection = decision.rejection();
                    long now = clock.getAsLong();
                    if (rejection != null) {
                        return reject(round, tx, commit, rejection, now);
                    }
                    // stored with the commit: the fan-out of every pod links to this push (§8.2 carries no trace)
                    return tx.appendCommit(
                                    round.ctx.actorId(),
                                    round.header.clientId(),
                                    commit.clientCommitId(),
                                    now,
                                    changes,
                                    Tracing.traceParent(round.commitTrace))
                            .flatMap(seq -> writeRows(tx, new ArrayList<>(staged.values()), seq, fetched)
                                    .flatMap(v -> decision.reactions().isEmpty()
                                            ? Uni.createFrom().voidItem()
                                            : tx.appendReactions(
                                                            seq,
                                                            round.header.clientId(),
                                                            commit.clientCommitId(),
                                                            decision.reactions(),
                                                            now)
                                                    .invoke(() -> {
                                                        planned.clear();
                                                        planned.addAll(decision.reactions());
                                                    }))
                                    .flatMap(v -> {
                                        PushResult applied = new PushResult(
                                                commit.clientCommitId(), CommitStatus.APPLIED, seq, results);
                                        return tx.savePushResult(
                                                        round.header.clientId(),
                                                        commit.clientCommitId(),
                                                        new PushOutcome(
                                                                CommitStatus.APPLIED,
                                                                seq,
                                                                MessageEncoder.encodeFrame(applied),
                                                                now))
                                                .map(x -> List.<Frame>of(applied));
                                    }));
                });
    }

    /** Persists {@code rejection} as the commit's outcome (§2.3, §6.3, §6.3.1): its result and details frames. */
    private static Uni<List<Frame>> reject(
            RoundState round, PushTx tx, PushCommit commit, Rejection rejection, long now) {
        PushResult rejected =
                new PushResult(commit.clientCommitId(), CommitStatus.REJECTED, null, List.of(rejection.result()));
        List<Frame> frames = new ArrayList<>(List.of(rejected));
        WireWriter persisted = new WireWriter();
        persisted.raw(MessageEncoder.encodeFrame(rejected));
        if (rejection.detailsJson() != null) {
            PushResultDetails details = new PushResultDetails(
                    commit.clientCommitId(),
                    List.of(new PushResultDetails.Entry(rejection.result().opIndex(), rejection.detailsJson())));
            frames.add(details);
            persisted.raw(MessageEncoder.encodeFrame(details));
        }
        return tx.savePushResult(
                        round.header.clientId(),
                        commit.clientCommitId(),
                        new PushOutcome(CommitStatus.REJECTED, null, persisted.toByteArray(), now))
                .map(v -> frames);
    }

    /**
     * Writes the staged rows in order — iterative, so a large commit never grows the stack. An upsert of a row
     * the commit's prefetch found stored (read under the lock; a commit writes each row once, at its end)
     * passes that row, so the storage can skip index maintenance it already satisfies.
     */
    private static Uni<Void> writeRows(
            PushTx tx, List<Staged> rows, long commitSeq, Map<String, Optional<StoredRow>> fetched) {
        return Multi.createFrom()
                .iterable(rows)
                .onItem()
                .transformToUniAndConcatenate(s -> {
                    if (s.row() == null) {
                        return tx.deleteRow(s.table(), s.rowId(), commitSeq);
                    }
                    Optional<StoredRow> stored = fetched.get(s.table() + '\u0000' + s.rowId());
                    return stored != null && stored.isPresent()
                            ? tx.upsertRow(s.table(), s.row(), stored.get())
                            : tx.upsertRow(s.table(), s.row());
                })
                .collect()
                .last()
                .replaceWithVoid();
    }

    /**
     * The distinct row ids the commit's operations target, by (known) table, in operation order — only ids the
     * storage can hold: an operation with another is rejected before it reads ({@link PushOperations}).
     */
    private Map<String, List<String>> prefetchIds(PushCommit commit) {
        Map<String, LinkedHashSet<String>> byTable = new LinkedHashMap<>();
        for (PushOperation op : commit.operations()) {
            if (window.current().table(op.table()) != null && StorableText.storableKey(op.rowId())) {
                byTable.computeIfAbsent(op.table(), t -> new LinkedHashSet<>()).add(op.rowId());
            }
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        byTable.forEach((t, ids) -> out.put(t, List.copyOf(ids)));
        return out;
    }

    /** Reads every row of {@code byTable} (see {@link #prefetchIds}) with one statement per table (under the lock). */
    private static Uni<Map<String, Optional<StoredRow>>> prefetch(PushTx tx, Map<String, List<String>> byTable) {
        Map<String, Optional<StoredRow>> out = new HashMap<>();
        Uni<Void> chain = Uni.createFrom().voidItem();
        for (Map.Entry<String, List<String>> e : byTable.entrySet()) {
            chain = chain.flatMap(v -> tx.readRows(e.getKey(), e.getValue())
                    .invoke(rows -> {
                        for (String id : e.getValue()) {
                            out.put(e.getKey() + '\u0000' + id, Optional.ofNullable(rows.get(id)));
                        }
                    })
                    .replaceWithVoid());
        }
        return chain.map(v -> out);
    }
}
