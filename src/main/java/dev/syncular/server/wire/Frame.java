package dev.syncular.server.wire;

/** One SSP2 frame (§1.2): its type byte and payload layout. {@code END} is implicit and never modelled. */
public sealed interface Frame
        permits ReqHeader,
                PushCommit,
                PullHeader,
                SubscriptionFrame,
                RespHeader,
                Lease,
                PushResult,
                PushResultDetails,
                SubStart,
                CommitFrame,
                SegmentRef,
                SegmentInline,
                SubEnd,
                ErrorFrame,
                UnknownFrame {
    int type();

    /** Writes the payload (without the 5-byte frame header). */
    void writePayload(WireWriter w);
}
