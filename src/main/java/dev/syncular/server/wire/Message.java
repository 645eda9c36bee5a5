package dev.syncular.server.wire;

import java.util.List;

/** A whole SSP2 message (§1.2): wire version, message kind and its frames in wire order ({@code END} implicit). */
public record Message(int wireVersion, int msgKind, List<Frame> frames) {
    public Message {
        frames = List.copyOf(frames);
    }

    public static Message request(List<Frame> frames) {
        return new Message(FrameType.WIRE_VERSION, FrameType.MSG_REQUEST, frames);
    }

    public static Message response(List<Frame> frames) {
        return new Message(FrameType.WIRE_VERSION, FrameType.MSG_RESPONSE, frames);
    }

    public boolean isRequest() {
        return msgKind == FrameType.MSG_REQUEST;
    }

    public byte[] encode() {
        return MessageEncoder.encode(this);
    }
}
