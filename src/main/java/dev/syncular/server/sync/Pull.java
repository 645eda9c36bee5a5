package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.CommitQuery;
import dev.syncular.server.storage.CommitWindow;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.RecentCommits;
import dev.syncular.server.storage.StoredChange;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.Change;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Op;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.RowCodec;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionFrame;
import dev.syncular.server.wire.SubscriptionStatus;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The pull of a round (§4): one section per subscription, in request order, over the effective scopes of
 * §3.2 — {@code revoked} when none are left (§3.3), {@code reset} for a cursor behind the pruning horizon
 * (§4.6), a {@link Bootstrap} (§4.7) for a fresh, resumed or future cursor, else the incremental log window
 * of §4.5 as {@code COMMIT} frames. The sections share the round's response budget (§1.4, {@link RoundState#plan}).
 */
final class Pull {
    private final Bootstrap bootstrap;
    private final RecentCommits recent;

    /**
     * The pull reads the round's storage ({@link RoundState#reads}: the primary, or a replica for a pull-only round), and
     * answers a log window from {@code recent} when this process holds it whole ({@link RecentCommits#OFF}: never).
     */
    Pull(Bootstrap bootstrap, RecentCommits recent) {
        this.bootstrap = bootstrap;
        this.recent = recent;
    }

    Uni<Void> pullAll(
            RoundState round,
            PullHeader pull,
            List<SubscriptionFrame> subs,
            PlannedResponse planned,
            PartitionState entry) {
        // Read-after-write without another read: commits are serialized per partition, so every sequence up
        // to this request's own last commit is durable; the window ends at the later of that and the entry read.
        PartitionState state = round.lastCommitSeq <= entry.maxCommitSeq()
                ? entry
                : new PartitionState(
                        entry.partition(),
                        entry.logEpoch(),
                        round.lastCommitSeq,
                        entry.horizonSeq(),
                        entry.createdAtMs(),
                        entry.lastSeenAtMs());
        if (subs.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        // The sections one after the other as a stream, never a chain of nested operators: the pipeline's depth
        // (and the stack of sections that complete at once: revoked, reset, ended early) does not grow with the
        // number of subscriptions.
        return round.allowed
                .invoke(allowed -> {
                    planned.allowed = allowed;
                    round.shares = SnapshotShares.of(subs, allowed.orElse(null), state);
                })
                .flatMap(allowed -> Multi.createFrom()
                        .iterable(subs)
                        .onItem()
                        .transformToUniAndConcatenate(
                                sub -> section(round, pull, sub, allowed.orElse(null), state, planned))
                        .collect()
                        .last())
                .replaceWithVoid();
    }

    /**
     * One subscription's section, added to {@code planned}. Once the round's response budget is spent (§1.4,
     * {@link RoundState#budgetSpent}) an active section ends early without data: an incremental one echoes its
     * cursor (§4.5: the client pulls again), a bootstrap hands back its resume token ({@link Bootstrap#deferred}).
     */
    private Uni<Void> section(
            RoundState round,
            PullHeader pull,
            SubscriptionFrame sub,
            Map<String, List<String>> allowed,
            PartitionState state,
            PlannedResponse planned) {
        TableSchema table = round.clientSchema.table(sub.table());
        Map<String, List<String>> effective = allowed == null ? null : EffectiveScopes.effective(sub.scopes(), allowed);
        Uni<List<Frame>> section;
        boolean incremental = false;
        if (effective == null) {
            // §3.3: revoked — no data, empty effective scopes, the request cursor echoed.
            section = Uni.createFrom()
                    .item(List.of(
                            new SubStart(
                                    sub.id(),
                                    SubscriptionStatus.REVOKED,
                                    ErrorCode.SCOPE_REVOKED.code,
                                    Map.of(),
                                    false),
                            new SubEnd(sub.cursor(), null)));
        } else if (kind(sub, state) == Kind.RESET) {
            section = Uni.createFrom().item(cursorExpired(sub));
        } else if (kind(sub, state) == Kind.BOOTSTRAP) {
            section = round.budgetSpent()
                    ? Uni.createFrom().item(Bootstrap.deferred(sub, table, effective, state))
                    : bootstrap.bootstrap(round, pull, sub, table, effective, state);
        } else {
            section = round.budgetSpent()
                    ? Uni.createFrom()
                            .item(List.of(
                                    new SubStart(sub.id(), SubscriptionStatus.ACTIVE, "", effective, false),
                                    new SubEnd(sub.cursor(), null)))
                    : incremental(round, pull, sub, table, effective, state);
            incremental = true;
        }
        boolean recheck = incremental;
        return section.invoke(frames -> {
                    planned.sections.add(frames);
                    planned.incremental.add(recheck);
                })
                .replaceWithVoid();
    }

    /** What a subscription's section is, its scopes not revoked (§3.3). */
    enum Kind {
        /** §4.6: a cursor behind the pruning horizon. */
        RESET,
        /** §4.7: no cursor, a bootstrap state, or a cursor past {@code maxCommitSeq}. */
        BOOTSTRAP,
        /** §4.5: the log window after the cursor. */
        INCREMENTAL
    }

    /** The section {@code sub} gets against {@code state} (§4.5–§4.7), shared with {@link SnapshotShares}. */
    static Kind kind(SubscriptionFrame sub, PartitionState state) {
        if (sub.bootstrapState() == null && sub.cursor() >= 0 && sub.cursor() < state.horizonSeq()) {
            return Kind.RESET;
        }
        if (sub.bootstrapState() != null || sub.cursor() < 0 || sub.cursor() > state.maxCommitSeq()) {
            return Kind.BOOTSTRAP;
        }
        return Kind.INCREMENTAL;
    }

    /** §4.6: a cursor behind the pruning horizon answers {@code reset} and echoes the request cursor. */
    static List<Frame> cursorExpired(SubscriptionFrame sub) {
        return List.of(
                new SubStart(sub.id(), SubscriptionStatus.RESET, ErrorCode.CURSOR_EXPIRED.code, Map.of(), false),
                new SubEnd(sub.cursor(), null));
    }

    /**
     * §4.5: one log commit as a subscription's {@code COMMIT} frame — its changes to {@code table} that match
     * {@code query}'s effective scopes (§3.2), rows narrowed to the client schema's columns (§9) — or
     * {@code null} when none is left. Shared by the incremental pull and the §8.2 realtime delta.
     */
    static CommitFrame commitFrame(TableSchema table, RowCodec codec, StoredCommit c, CommitQuery query) {
        List<Change> changes = new ArrayList<>(c.changes().size());
        for (StoredChange ch : c.changes()) {
            if (!ch.table().equals(table.name()) || !query.matches(ch.scopes())) {
                continue;
            }
            byte[] row = ch.op() == Op.UPSERT ? codec.encode(ClientRows.narrow(ch.row(), table.columnCount())) : null;
            changes.add(new Change(0, ch.rowId(), ch.op(), ch.rowVersion(), ch.scopes(), row));
        }
        return changes.isEmpty()
                ? null
                : new CommitFrame(c.commitSeq(), c.createdAtMs(), c.actorId(), List.of(table.name()), changes);
    }

    /** A {@code PULL_HEADER} limit (§4.2): {@code 0} asks for the default, anything else is clamped. */
    static int clamp(int value, int min, int max, int dflt) {
        return value == 0 ? dflt : Math.max(min, Math.min(max, value));
    }

    /**
     * §4.5: the log window {@code cursor < commitSeq ≤ maxCommitSeq}, scope-filtered, cut at {@code limitCommits}
     * changes, and after the commit that spends the round's response budget (§1.4; at least one commit is
     * delivered) — {@code nextCursor} is then the last sequence fully delivered. The §4.6 horizon recheck after
     * the read is the request's exit read ({@link SyncEngine}).
     */
    private Uni<List<Frame>> incremental(
            RoundState round,
            PullHeader pull,
            SubscriptionFrame sub,
            TableSchema table,
            Map<String, List<String>> effective,
            PartitionState state) {
        int limit = clamp(pull.limitCommits(), 1, 1000, 1000);
        CommitQuery query = new CommitQuery(
                table.name(), EffectiveScopes.asSets(effective), sub.cursor(), state.maxCommitSeq(), limit);
        RowCodec codec = new RowCodec(table.rowLayout());
        // the same window from memory when this process committed all of it in the round's epoch (§2.1)
        Supplier<Uni<CommitWindow>> readWindow = () -> recent.window(round.ctx.partition(), state.logEpoch(), query)
                .map(w -> Uni.createFrom().item(w))
                .orElseGet(() -> round.reads.readCommits(round.ctx.partition(), query));
        String digest = CanonicalJson.scopeDigest(effective);
        // one read of a window its round's other sections name too (same table, scopes and cursor)
        Uni<CommitWindow> read = round.shares.repeats(SnapshotShares.WINDOW, table.name(), digest)
                ? round.shares.once(
                        SnapshotShares.WINDOW, table.name(), digest, Long.toString(sub.cursor()), readWindow)
                : readWindow.get();
        return read.map(window -> {
            List<Frame> frames = new ArrayList<>();
            frames.add(new SubStart(sub.id(), SubscriptionStatus.ACTIVE, "", effective, false));
            long next = Math.max(sub.cursor(), window.scannedThroughSeq());
            boolean delivered = false;
            for (StoredCommit c : window.commits()) {
                CommitFrame frame = commitFrame(table, codec, c, query);
                if (frame == null) {
                    continue;
                }
                if (delivered && round.budgetSpent()) {
                    // §1.4 budget: cut before this commit, like the change limit (never inside a commit)
                    next = c.commitSeq() - 1;
                    break;
                }
                frames.add(frame);
                round.plan(frame);
                delivered = true;
            }
            frames.add(new SubEnd(next, null));
            return frames;
        });
    }
}
