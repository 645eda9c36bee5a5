package dev.syncular.server.wire;

/**
 * §1.6: {@code RESP_HEADER} first; {@code LEASE} at most once right after it; {@code PUSH_RESULT}s (each
 * optionally followed by its {@code PUSH_RESULT_DETAILS}) before any subscription; subscription sections
 * {@code SUB_START … SUB_END} that never nest and never mix {@code COMMIT} with segment frames; and
 * {@code ERROR} anywhere after the header, followed by nothing but {@code END}.
 */
final class ResponseGrammar extends Grammar {
    private boolean header;
    private boolean errored;
    private int lastKnown = -1;
    private PushResult lastResult;
    private boolean subscriptionsBegan;
    private boolean inSubscription;
    private boolean sawCommit;
    private boolean sawSegment;

    @Override
    void accept(Frame frame) {
        int type = frame.type();
        if (errored) {
            throw violation("no frame may follow ERROR");
        }
        if (!header) {
            if (type != FrameType.RESP_HEADER) {
                throw violation("first frame must be RESP_HEADER");
            }
            header = true;
            lastKnown = type;
            return;
        }
        if (frame instanceof UnknownFrame) {
            return;
        }
        switch (type) {
            case FrameType.RESP_HEADER -> throw violation("RESP_HEADER must appear exactly once");
            case FrameType.LEASE -> {
                if (lastKnown != FrameType.RESP_HEADER) {
                    throw violation("LEASE must immediately follow RESP_HEADER");
                }
            }
            case FrameType.PUSH_RESULT -> {
                if (subscriptionsBegan) {
                    throw violation("PUSH_RESULT after a subscription section");
                }
            }
            case FrameType.PUSH_RESULT_DETAILS -> {
                PushResultDetails d = (PushResultDetails) frame;
                if (lastKnown != FrameType.PUSH_RESULT
                        || lastResult.status() != CommitStatus.REJECTED
                        || !lastResult.clientCommitId().equals(d.clientCommitId())) {
                    throw violation("PUSH_RESULT_DETAILS must follow its rejected PUSH_RESULT");
                }
            }
            case FrameType.SUB_START -> {
                if (inSubscription) {
                    throw violation("subscription sections must not nest");
                }
                subscriptionsBegan = true;
                inSubscription = true;
                sawCommit = false;
                sawSegment = false;
            }
            case FrameType.COMMIT -> {
                requireOpen();
                if (sawSegment) {
                    throw violation("COMMIT and segment frames mixed in one subscription");
                }
                sawCommit = true;
            }
            case FrameType.SEGMENT_REF, FrameType.SEGMENT_INLINE -> {
                requireOpen();
                if (sawCommit) {
                    throw violation("COMMIT and segment frames mixed in one subscription");
                }
                sawSegment = true;
            }
            case FrameType.SUB_END -> {
                requireOpen();
                inSubscription = false;
            }
            case FrameType.ERROR -> errored = true;
            default -> throw violation("request frame in a response");
        }
        lastKnown = type;
        lastResult = frame instanceof PushResult pr ? pr : null;
    }

    private void requireOpen() {
        if (!inSubscription) {
            throw violation("frame outside a subscription section");
        }
    }

    @Override
    void end() {
        if (!header) {
            throw violation("message has no header frame");
        }
        if (inSubscription && !errored) {
            throw violation("subscription section not closed");
        }
    }
}
