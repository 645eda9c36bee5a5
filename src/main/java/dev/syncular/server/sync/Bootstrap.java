package dev.syncular.server.sync;

import dev.syncular.server.schema.ColumnSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionFrame;
import dev.syncular.server.wire.SubscriptionStatus;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The §4.7 bootstrap state machine of one subscription: pinned, paged and resumable ({@link BootstrapResume}).
 * A fresh bootstrap of a table without encrypted columns (§5.11) whose client accepts SQLite images starts at
 * the table's scope pin on the image lane (§5.3, {@link ImageLane}); every other one, and a resumed one, is
 * served as rows pages (§5.2, {@link RowsLane}) delivered inline (§5.7) or by reference (§5.4).
 */
final class Bootstrap {
    private final RowsLane rows;
    private final ImageLane images;

    Bootstrap(RowsLane rows, ImageLane images) {
        this.rows = rows;
        this.images = images;
    }

    /** §4.7 bootstrap: pinned, paged, resumable; pages become rows segments inline (§5.7) or by reference (§5.4). */
    Uni<List<Frame>> bootstrap(
            RoundState round,
            PullHeader pull,
            SubscriptionFrame sub,
            TableSchema table,
            Map<String, List<String>> effective,
            PartitionState state) {
        BootstrapResume resume = BootstrapResume.parse(sub.bootstrapState(), table, state);
        if (resume != null && resume.rowCursor() == null) {
            // a token handed back before any page (deferred by the response budget): nothing was delivered
            // under its pin, so the bootstrap starts fresh — and may still take the image lane
            resume = null;
        }
        long asOf = resume != null ? resume.asOfCommitSeq() : state.maxCommitSeq();
        String start = resume != null ? resume.rowCursor() : null;
        int pageRows = Pull.clamp(pull.limitSnapshotRows(), 1, 50_000, 1000);
        int maxPages = Pull.clamp(pull.maxSnapshotPages(), 1, 50, 4);
        List<Frame> frames = new ArrayList<>();
        frames.add(new SubStart(sub.id(), SubscriptionStatus.ACTIVE, "", effective, true));
        String digest = CanonicalJson.scopeDigest(effective);
        if (resume == null
                && pull.accepts(PullHeader.ACCEPT_SQLITE)
                && table.columns().stream().noneMatch(ColumnSchema::encrypted)) {
            // §5.3: the image lane is chosen only at the start of a table; a resumed bootstrap (always mid-table
            // here: an image completes its table) stays on the rows lane at its pin.
            // A bootstrap eligible for the image lane pins at its scope pin (§4.7) so a stored image's reuse key
            // stays stable across commits outside the scope.
            return scopePin(round, table, effective, state)
                    .flatMap(pin ->
                            images.lane(round, pull, table, effective, digest, pin, state, pageRows, maxPages, frames));
        }
        return rows.lane(round, pull, table, effective, digest, asOf, state, start, pageRows, maxPages, frames, null);
    }

    /**
     * A bootstrap section ended before its first page because the round's response budget is spent (§1.4):
     * no segment ({@code bootstrap} false), {@code nextCursor} the pin, and the resume token — the request's
     * own position, or for a bootstrap that has not started a token at the table's start, which
     * {@link #bootstrap} later treats as a fresh start (§4.7: every bootstrap response sets
     * {@code nextCursor = asOfCommitSeq}; the token keeps the subscription bootstrapping).
     */
    static List<Frame> deferred(
            SubscriptionFrame sub, TableSchema table, Map<String, List<String>> effective, PartitionState state) {
        BootstrapResume resume = BootstrapResume.parse(sub.bootstrapState(), table, state);
        long asOf = resume != null ? resume.asOfCommitSeq() : state.maxCommitSeq();
        String cursor = resume != null ? resume.rowCursor() : null;
        return List.of(
                new SubStart(sub.id(), SubscriptionStatus.ACTIVE, "", effective, false),
                new SubEnd(asOf, BootstrapResume.token(asOf, table.name(), cursor)));
    }

    /** §4.7 scope pin: raised to the horizon, capped at {@code maxCommitSeq}. */
    private Uni<Long> scopePin(
            RoundState round, TableSchema table, Map<String, List<String>> effective, PartitionState state) {
        if (effective.isEmpty()) {
            return Uni.createFrom().item(state.maxCommitSeq());
        }
        String first = new TreeSet<>(effective.keySet()).first();
        return round.reads
                .readScopePin(
                        round.ctx.partition(),
                        table.name(),
                        first,
                        new TreeSet<>(effective.get(first)),
                        state.maxCommitSeq())
                .map(pin -> Math.min(state.maxCommitSeq(), Math.max(pin, state.horizonSeq())));
    }
}
