package dev.syncular.server.cli;

import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRef;

/**
 * What a client does with the data frames of a response while {@link ClientState#apply} advances the sync
 * progress (§1.4). Callbacks come in wire order; one that throws aborts the application, and the caller must
 * not persist the state of that round.
 */
public interface ResponseHandler {
    /** §2.1: the partition's log epoch changed; everything synced before is void (the outbox stays). */
    default void epochChanged() {}

    default void pushResult(PushResult result) {}

    /** §3.3: the subscription was revoked; purge the rows of its last effective scopes. */
    default void revoked(Subscription subscription) {}

    /** §4.5: incremental changes. */
    default void commit(Subscription subscription, CommitFrame commit) {}

    /** §5.7: a rows segment carried in the response. */
    default void inlineSegment(Subscription subscription, SegmentInline segment) {}

    /** §5.4: a segment to fetch (its URL, or {@code GET <mount>/segments/{id}}) and verify by content address. */
    default void segmentRef(Subscription subscription, SegmentRef ref, RespHeader header) {}
}
