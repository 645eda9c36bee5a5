package dev.syncular.server.wire;

/** Envelope constants and the frame-type registry of §1.2 — the protocol's numbers in one place. */
public final class FrameType {
    private FrameType() {}

    /** "SSP2" (§1.2). */
    public static final byte[] MAGIC = {0x53, 0x53, 0x50, 0x32};
    /** The only wire version this codec reads and writes (§9 window {@code [3]}). */
    public static final int WIRE_VERSION = 3;

    public static final int MSG_REQUEST = 0x01;
    public static final int MSG_RESPONSE = 0x02;
    public static final int ENVELOPE_HEADER_BYTES = 8;
    public static final int FRAME_HEADER_BYTES = 5;

    public static final int END = 0x00;
    public static final int REQ_HEADER = 0x01;
    public static final int PUSH_COMMIT = 0x02;
    public static final int PULL_HEADER = 0x03;
    public static final int SUBSCRIPTION = 0x04;
    public static final int RESP_HEADER = 0x10;
    public static final int PUSH_RESULT = 0x11;
    public static final int SUB_START = 0x12;
    public static final int COMMIT = 0x13;
    public static final int SEGMENT_REF = 0x14;
    public static final int SEGMENT_INLINE = 0x15;
    public static final int SUB_END = 0x16;
    public static final int LEASE = 0x19;
    public static final int PUSH_RESULT_DETAILS = 0x1B;
    public static final int ERROR = 0x1F;

    /** True when the type has a layout for request messages in this wire version. */
    public static boolean isRequestFrame(int type) {
        return type >= REQ_HEADER && type <= SUBSCRIPTION;
    }

    /** True when the type has a layout for response messages in this wire version. */
    public static boolean isResponseFrame(int type) {
        return (type >= RESP_HEADER && type <= SUB_END)
                || type == LEASE
                || type == PUSH_RESULT_DETAILS
                || type == ERROR;
    }

    /** "Unknown" per §1.2 rule 2: no layout for either message kind (reserved entries included). */
    public static boolean isUnknown(int type) {
        return type != END && !isRequestFrame(type) && !isResponseFrame(type);
    }

    public static String name(int type) {
        switch (type) {
            case END:
                return "END";
            case REQ_HEADER:
                return "REQ_HEADER";
            case PUSH_COMMIT:
                return "PUSH_COMMIT";
            case PULL_HEADER:
                return "PULL_HEADER";
            case SUBSCRIPTION:
                return "SUBSCRIPTION";
            case RESP_HEADER:
                return "RESP_HEADER";
            case PUSH_RESULT:
                return "PUSH_RESULT";
            case SUB_START:
                return "SUB_START";
            case COMMIT:
                return "COMMIT";
            case SEGMENT_REF:
                return "SEGMENT_REF";
            case SEGMENT_INLINE:
                return "SEGMENT_INLINE";
            case SUB_END:
                return "SUB_END";
            case LEASE:
                return "LEASE";
            case PUSH_RESULT_DETAILS:
                return "PUSH_RESULT_DETAILS";
            case ERROR:
                return "ERROR";
            default:
                return "UNKNOWN";
        }
    }
}
