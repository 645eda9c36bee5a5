package dev.syncular.server.sync;

import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionFrame;
import dev.syncular.server.wire.SubscriptionStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A planned response (§1.6): the header and push results, then one section per pulled subscription. Sections
 * stay separate until release so the exit read's horizon can still turn an incremental one into a
 * {@code reset} (§4.6), and the client record (§4.5) is derived from the final sections.
 */
final class PlannedResponse {
    final RoundState round;
    final List<Frame> head = new ArrayList<>();
    final List<SubscriptionFrame> subs;
    final boolean pulled;
    final ClientRecord existing;
    final List<List<Frame>> sections = new ArrayList<>();
    /** Per section: an active incremental section, still subject to the horizon recheck. */
    final List<Boolean> incremental = new ArrayList<>();
    /**
     * The allowed scopes (§3.2) the pull ran with — empty when the resolver gave none — recorded per registered
     * subscription as its effective scopes; {@code null} until the pull resolved them.
     */
    Optional<Map<String, List<String>>> allowed;
    /** The registered subscriptions document (§8.1), built once. */
    private String registered;

    /** An early answer (schema floor, epoch reset): no round, no client record. */
    PlannedResponse(Frame only) {
        this.round = null;
        this.subs = List.of();
        this.pulled = false;
        this.existing = null;
        head.add(only);
    }

    PlannedResponse(RoundState round, List<SubscriptionFrame> subs, boolean pulled, ClientRecord existing) {
        this.round = round;
        this.subs = subs;
        this.pulled = pulled;
        this.existing = existing;
    }

    /** §4.6: every active incremental section whose request cursor is behind {@code horizonSeq} resets. */
    boolean expire(long horizonSeq) {
        boolean any = false;
        for (int i = 0; i < sections.size(); i++) {
            if (incremental.get(i) && horizonSeq > subs.get(i).cursor()) {
                sections.set(i, Pull.cursorExpired(subs.get(i)));
                incremental.set(i, false);
                any = true;
            }
        }
        return any;
    }

    List<Frame> frames() {
        if (sections.isEmpty()) {
            return head;
        }
        List<Frame> out = new ArrayList<>(head);
        for (List<Frame> section : sections) {
            out.addAll(section);
        }
        return out;
    }

    /**
     * §4.5: the record this round leaves — the minimum {@code nextCursor} over the active subscriptions
     * (else the stored cursor) and the registered subscriptions (§8.1); {@code null} for early answers.
     */
    ClientRecord clientRecord(long now) {
        if (round == null) {
            return null;
        }
        long minCursor = Long.MAX_VALUE;
        for (List<Frame> frames : sections) {
            if (((SubStart) frames.get(0)).status() == SubscriptionStatus.ACTIVE) {
                minCursor = Math.min(minCursor, ((SubEnd) frames.get(frames.size() - 1)).nextCursor());
            }
        }
        long cursor = minCursor != Long.MAX_VALUE ? minCursor : existing != null ? existing.cursor() : -1;
        String subscriptions = existing != null ? existing.subscriptionsJson() : null;
        if (pulled) {
            if (registered == null) {
                registered = ClientRecords.registeredSubscriptions(round, subs, allowed);
            }
            subscriptions = registered;
        }
        return new ClientRecord(
                round.ctx.partition(),
                round.header.clientId(),
                round.ctx.actorId(),
                cursor,
                now,
                subscriptions,
                3,
                round.header.schemaVersion());
    }
}
