package dev.syncular.server.cli;

import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushResult;
import dev.syncular.server.wire.ReqHeader;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRef;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionStatus;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A client's sync state: its id, the partition's log epoch (§2.1), its subscriptions with their progress,
 * and the number of commits it has made (commit ids are {@code <clientId>-c<n>}). Builds the request of a
 * round (§1.5) and applies a response as §1.4 prescribes: the cursor and resume token of a subscription move
 * only at its {@code SUB_END}, a {@code reset} subscription starts over (§4.6), a revoked one is purged
 * (§3.3), a changed epoch voids everything synced (§2.1).
 */
public final class ClientState {
    public final String clientId;
    public String logEpoch;
    public long commitCount;
    public final Map<String, Subscription> subscriptions = new LinkedHashMap<>();

    public ClientState(String clientId) {
        this.clientId = clientId;
    }

    /** The id of the next commit this client makes. */
    public String nextCommitId() {
        return clientId + "-c" + (++commitCount);
    }

    /**
     * A request: the header, the outbox's commits once the log epoch is known (a first round only learns
     * it), the pull header and the given subscriptions, revoked ones left out.
     */
    public Message request(int schemaVersion, List<PushCommit> outbox, PullHeader pull, Collection<Subscription> subs) {
        List<Frame> frames = new ArrayList<>();
        frames.add(new ReqHeader(clientId, schemaVersion, logEpoch));
        if (logEpoch != null) {
            frames.addAll(outbox);
        }
        frames.add(pull);
        for (Subscription s : subs) {
            if (s.status != SubscriptionStatus.REVOKED) {
                frames.add(s.frame());
            }
        }
        return Message.request(frames);
    }

    /**
     * Applies a response: the progress here, the data through {@code handler}. A response that asks for a
     * newer schema ({@code requiredSchemaVersion}) changes nothing.
     */
    public void apply(Message response, ResponseHandler handler) {
        RespHeader header = (RespHeader) response.frames().get(0);
        if (header.requiredSchemaVersion() != null) {
            return;
        }
        if (header.resetRequired()) {
            if (logEpoch != null && !logEpoch.equals(header.logEpoch())) {
                handler.epochChanged();
                subscriptions.values().forEach(Subscription::restart);
            }
            logEpoch = header.logEpoch();
            return;
        }
        Subscription current = null;
        boolean reset = false;
        for (Frame f : response.frames()) {
            if (f instanceof PushResult r) {
                handler.pushResult(r);
            } else if (f instanceof SubStart s) {
                current = subscriptions.get(s.id());
                if (current == null) {
                    throw new IllegalStateException(
                            "the response names subscription '" + s.id() + "', which this client did not send");
                }
                current.status = s.status();
                current.reasonCode = s.reasonCode();
                reset = s.status() == SubscriptionStatus.RESET;
                if (s.status() == SubscriptionStatus.REVOKED) {
                    handler.revoked(current);
                    current.restart();
                }
            } else if (f instanceof CommitFrame c) {
                handler.commit(current, c);
            } else if (f instanceof SegmentInline s) {
                handler.inlineSegment(current, s);
            } else if (f instanceof SegmentRef ref) {
                handler.segmentRef(current, ref, header);
            } else if (f instanceof SubEnd e) {
                if (reset) {
                    current.restart();
                } else if (current.status == SubscriptionStatus.ACTIVE) {
                    current.cursor = e.nextCursor();
                    current.bootstrapState = e.bootstrapState();
                }
                current = null;
            }
        }
    }
}
