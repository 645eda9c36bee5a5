package dev.syncular.server.wire;

/**
 * A frame with no layout in this wire version for either message kind (§1.2 rule 2), skipped by length
 * and preserved byte for byte. Encoding one under a registered type is refused.
 */
public record UnknownFrame(int frameType, byte[] payload) implements Frame {
    public UnknownFrame {
        if (frameType < 0 || frameType > 0xff || !FrameType.isUnknown(frameType)) {
            throw new IllegalArgumentException("frame type is registered in this wire version");
        }
    }

    @Override
    public int type() {
        return frameType;
    }

    @Override
    public void writePayload(WireWriter w) {
        w.raw(payload);
    }
}
