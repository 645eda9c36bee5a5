package dev.syncular.server.wire;

/**
 * §1.5: {@code REQ_HEADER} first and once, {@code PUSH_COMMIT × N}, {@code PULL_HEADER} 0 or 1, then
 * {@code SUBSCRIPTION × M} only after it; a request with neither pushes nor a pull is a decode error.
 * Unknown frames may stand anywhere after the header.
 */
final class RequestGrammar extends Grammar {
    private boolean header;
    private int pushes;
    private boolean pull;

    @Override
    void accept(Frame frame) {
        int type = frame.type();
        if (!header) {
            if (type != FrameType.REQ_HEADER) {
                throw violation("first frame must be REQ_HEADER");
            }
            header = true;
            return;
        }
        switch (type) {
            case FrameType.REQ_HEADER -> throw violation("REQ_HEADER must appear exactly once");
            case FrameType.PUSH_COMMIT -> {
                if (pull) {
                    throw violation("PUSH_COMMIT after PULL_HEADER");
                }
                pushes++;
            }
            case FrameType.PULL_HEADER -> {
                if (pull) {
                    throw violation("PULL_HEADER must appear at most once");
                }
                pull = true;
            }
            case FrameType.SUBSCRIPTION -> {
                if (!pull) {
                    throw violation("SUBSCRIPTION without PULL_HEADER");
                }
            }
            default -> {
                if (!(frame instanceof UnknownFrame)) {
                    throw violation("response frame in a request");
                }
            }
        }
    }

    @Override
    void end() {
        if (!header) {
            throw violation("message has no header frame");
        }
        if (pushes == 0 && !pull) {
            throw violation("request carries neither PUSH_COMMIT nor PULL_HEADER");
        }
    }
}
