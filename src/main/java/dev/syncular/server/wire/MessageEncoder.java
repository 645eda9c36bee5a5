package dev.syncular.server.wire;

/**
 * Streaming SSP2 encoder (§1.2, §1.4): writes the 8-byte envelope header, then each frame as it is
 * produced, then {@code END}; frames are checked against the message grammar so the encoder never emits
 * a message a conformant decoder would reject.
 */
public final class MessageEncoder {
    private final int msgKind;
    private final RowsSegmentWriter.Sink sink;
    private final WireWriter frame = new WireWriter(256);
    private final Grammar grammar;
    private boolean ended;

    public MessageEncoder(int msgKind, RowsSegmentWriter.Sink sink) {
        if (msgKind != FrameType.MSG_REQUEST && msgKind != FrameType.MSG_RESPONSE) {
            throw new IllegalArgumentException("unknown msgKind");
        }
        this.msgKind = msgKind;
        this.sink = sink;
        this.grammar = Grammar.forKind(msgKind);
        sink.write(envelopeHeader(msgKind), 0, FrameType.ENVELOPE_HEADER_BYTES);
    }

    public static byte[] envelopeHeader(int msgKind) {
        return new byte[] {
            FrameType.MAGIC[0],
            FrameType.MAGIC[1],
            FrameType.MAGIC[2],
            FrameType.MAGIC[3],
            (byte) FrameType.WIRE_VERSION,
            0,
            (byte) msgKind,
            0
        };
    }

    public static byte[] encode(Message message) {
        if (message.wireVersion() != FrameType.WIRE_VERSION) {
            throw new IllegalArgumentException("only wire version 3 is encoded");
        }
        WireWriter out = new WireWriter(512);
        MessageEncoder enc = new MessageEncoder(message.msgKind(), out::raw);
        for (Frame f : message.frames()) {
            enc.write(f);
        }
        enc.end();
        return out.toByteArray();
    }

    /** Encodes a single frame (5-byte header + payload) without grammar checks. */
    public static byte[] encodeFrame(Frame f) {
        WireWriter w = new WireWriter(128);
        writeFrame(w, f);
        return w.toByteArray();
    }

    static void writeFrame(WireWriter w, Frame f) {
        int at = w.size();
        w.u8(f.type()).i32(0);
        f.writePayload(w);
        w.patchU32(at + 1, w.size() - at - FrameType.FRAME_HEADER_BYTES);
    }

    public void write(Frame f) {
        if (ended) {
            throw new IllegalStateException("message already ended");
        }
        if (msgKind == FrameType.MSG_REQUEST
                ? FrameType.isResponseFrame(f.type())
                : FrameType.isRequestFrame(f.type())) {
            throw new IllegalArgumentException("frame registered for the other message kind");
        }
        try {
            grammar.accept(f);
        } catch (WireException e) {
            throw new IllegalStateException("frame out of grammar order: " + e.getMessage(), e);
        }
        frame.reset();
        writeFrame(frame, f);
        sink.write(frame.array(), 0, frame.size());
    }

    public void end() {
        if (ended) {
            return;
        }
        try {
            grammar.end();
        } catch (WireException e) {
            throw new IllegalStateException("message incomplete: " + e.getMessage(), e);
        }
        sink.write(new byte[] {FrameType.END, 0, 0, 0, 0}, 0, FrameType.FRAME_HEADER_BYTES);
        ended = true;
    }
}
