package dev.syncular.server.wire;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Streaming SSP2 decoder (§1.2, §1.4): bytes may arrive in any chunking; frames are decoded and checked
 * against the message grammar as soon as their last byte is present. Memory held is the current partial
 * frame only, and buffers grow with bytes actually received, never with an untrusted length prefix.
 */
public final class MessageDecoder {
    /** A buffer grown past this for one large frame is let go once that frame is decoded, not kept for the next. */
    static final int RETAINED_BUFFER_BYTES = 64 * 1024;

    /** The buffer every decoder starts with; its account is told only of what the buffer grows beyond it. */
    private static final int INITIAL_BUFFER_BYTES = 256;

    /**
     * Told of the decoder's buffer for a partial frame as it changes size: before a larger one is allocated (it may
     * throw to refuse it; the decoder is then unusable) and after a smaller one replaced it. The buffer is what a
     * request holds beyond its decoded frames: a frame of megabytes is, while it is decoded, held twice.
     */
    public interface BufferAccount {
        BufferAccount NONE = (from, to) -> {};

        void resized(int from, int to);
    }

    private final int expectedKind;
    private BufferAccount account = BufferAccount.NONE;
    private byte[] buf = new byte[INITIAL_BUFFER_BYTES];
    private int start;
    private int end;
    private boolean headerRead;
    private int msgKind;
    private int wireVersion;
    private Grammar grammar;
    private boolean ended;
    /** Framing-only mode: a bad frame is recorded, not thrown, and the stream is read on to its END. */
    private boolean keepFraming;
    /** {@link #abandon}ed: feeds are ignored. */
    private boolean abandoned;

    private WireException firstError;

    /** @param expectedKind {@link FrameType#MSG_REQUEST}, {@link FrameType#MSG_RESPONSE}, or 0 for either. */
    public MessageDecoder(int expectedKind) {
        this.expectedKind = expectedKind;
    }

    public static MessageDecoder forRequests() {
        return new MessageDecoder(FrameType.MSG_REQUEST);
    }

    /**
     * A request decoder for a stream that must be read to its end even when its content is bad (§8.7 socket
     * rounds: a decode error of the request is answered in-band once its {@code END} is found). A frame that
     * fails to decode, or breaks the message grammar, is recorded as {@link #error()} and the rest of the
     * stream is only framed. The envelope header, the frame headers and bytes after {@code END} still throw:
     * without them the stream's end cannot be found.
     */
    public static MessageDecoder forRequestsKeepingFraming() {
        MessageDecoder d = new MessageDecoder(FrameType.MSG_REQUEST);
        d.keepFraming = true;
        return d;
    }

    /** Tells {@code account} of this decoder's buffer from now on (§1.4: no request-sized memory uncounted). */
    public MessageDecoder accountingBuffer(BufferAccount account) {
        this.account = account;
        return this;
    }

    /** The first content error of a {@link #forRequestsKeepingFraming()} decoder, or {@code null}. */
    public WireException error() {
        return firstError;
    }

    public static MessageDecoder forResponses() {
        return new MessageDecoder(FrameType.MSG_RESPONSE);
    }

    /** Decodes a complete message of either kind. */
    public static Message decode(byte[] bytes) {
        return decodeAs(0, bytes);
    }

    public static Message decodeRequest(byte[] bytes) {
        return decodeAs(FrameType.MSG_REQUEST, bytes);
    }

    public static Message decodeResponse(byte[] bytes) {
        return decodeAs(FrameType.MSG_RESPONSE, bytes);
    }

    private static Message decodeAs(int kind, byte[] bytes) {
        MessageDecoder d = new MessageDecoder(kind);
        List<Frame> frames = d.feed(bytes, 0, bytes.length);
        d.finish();
        return new Message(d.wireVersion, d.msgKind, frames);
    }

    /**
     * Decodes a bare sequence of response frames (no envelope, no grammar) — for frames persisted on their
     * own, such as an idempotency record's {@code PUSH_RESULT} (§2.3). Trailing partial frames fail.
     */
    public static List<Frame> decodeResponseFrames(byte[] bytes) {
        MessageDecoder d = new MessageDecoder(FrameType.MSG_RESPONSE);
        d.msgKind = FrameType.MSG_RESPONSE;
        List<Frame> out = new ArrayList<>();
        WireReader r = new WireReader(bytes);
        while (r.hasRemaining()) {
            int type = r.u8();
            int length = r.count(1);
            int at = r.position();
            r.skip(length);
            out.add(d.decodeFrame(type, new WireReader(bytes, at, length)));
        }
        return out;
    }

    public int msgKind() {
        return msgKind;
    }

    public boolean isComplete() {
        return ended;
    }

    public List<Frame> feed(byte[] chunk) {
        return feed(chunk, 0, chunk.length);
    }

    /** Consumes a chunk; returns the frames completed by it, in order. */
    public List<Frame> feed(byte[] chunk, int off, int len) {
        if (len == 0 || abandoned) {
            return List.of();
        }
        if (ended) {
            throw WireException.invalid("bytes after END");
        }
        List<Frame> out = new ArrayList<>();
        if (start == end) {
            // Nothing buffered: decode the complete frames straight from the caller's chunk (decoded frames
            // never alias their input) and buffer only the incomplete tail. Saves copying whole messages.
            int p = drain(chunk, off, off + len, out);
            if (p < off + len) {
                append(chunk, p, off + len - p);
            }
            return out;
        }
        append(chunk, off, len);
        start = drain(buf, start, end, out);
        if (start == end) {
            start = end = 0;
            if (buf.length > RETAINED_BUFFER_BYTES) {
                // the frame that grew it is decoded (its fields copied out): a 15 MiB row must not stay held twice
                // for the rest of its round (issue 45, HostileMemoryIT)
                int from = buf.length;
                buf = new byte[INITIAL_BUFFER_BYTES];
                account.resized(from, buf.length);
            }
        }
        return out;
    }

    /** Decodes the envelope header (once) and every complete frame in {@code b[p, limit)}; returns the new position. */
    private int drain(byte[] b, int p, int limit, List<Frame> out) {
        if (!headerRead) {
            if (limit - p < FrameType.ENVELOPE_HEADER_BYTES) {
                checkMagicPrefix(b, p, limit - p);
                return p;
            }
            readEnvelopeHeader(b, p);
            p += FrameType.ENVELOPE_HEADER_BYTES;
        }
        while (limit - p >= FrameType.FRAME_HEADER_BYTES) {
            int type = b[p] & 0xff;
            long length =
                    (b[p + 1] & 0xffL) | (b[p + 2] & 0xffL) << 8 | (b[p + 3] & 0xffL) << 16 | (b[p + 4] & 0xffL) << 24;
            if (limit - p - FrameType.FRAME_HEADER_BYTES < length) {
                break;
            }
            int payloadStart = p + FrameType.FRAME_HEADER_BYTES;
            p = payloadStart + (int) length;
            if (type == FrameType.END) {
                if (length != 0) {
                    throw WireException.invalid("END frame with non-zero length");
                }
                ended = true;
                if (firstError == null) {
                    try {
                        grammar.end();
                    } catch (WireException e) {
                        if (!keepFraming) {
                            throw e;
                        }
                        firstError = e;
                    }
                }
                if (p != limit) {
                    throw WireException.invalid("bytes after END");
                }
                break;
            }
            if (firstError != null) {
                continue; // framing only, after a content error
            }
            try {
                Frame frame = decodeFrame(type, new WireReader(b, payloadStart, (int) length));
                grammar.accept(frame);
                out.add(frame);
            } catch (WireException e) {
                if (!keepFraming) {
                    throw e;
                }
                firstError = e;
            }
        }
        return p;
    }

    /**
     * Lets go of the buffer of a partial frame (told to the account): the decoder's request was refused or released,
     * and it decodes nothing more — a later {@link #feed} is ignored. A refused request can stay referenced until its
     * connection lets go of it; its megabytes must not.
     */
    public void abandon() {
        abandoned = true;
        int from = buf.length;
        buf = new byte[0];
        start = end = 0;
        account.resized(from, Math.min(from, INITIAL_BUFFER_BYTES)); // the initial buffer was never counted
    }

    /** The bytes of the buffer this decoder holds for a partial frame (its capacity, not what is in it). */
    public int heldBytes() {
        return buf.length;
    }

    /** Declares the byte stream over; a message that has not reached {@code END} is truncated (§1.2 rule 1). */
    public void finish() {
        if (!ended) {
            throw WireException.invalid("message truncated before END");
        }
    }

    private void append(byte[] chunk, int off, int len) {
        if (start > 0 && end + len > buf.length) {
            System.arraycopy(buf, start, buf, 0, end - start);
            end -= start;
            start = 0;
        }
        if (end + len > buf.length) {
            long needed = (long) end + len;
            long grown = (long) buf.length * 2;
            long frame = partialFrameBytes();
            if (frame >= needed && frame < grown) {
                grown = frame; // up to the partial frame's end, not past it: a 15 MiB frame takes 15 MiB, not 16
            }
            long want = Math.max(needed, grown);
            if (want > Integer.MAX_VALUE - 16) {
                throw WireException.invalid("message too large");
            }
            account.resized(buf.length, (int) want);
            buf = Arrays.copyOf(buf, (int) want);
        }
        System.arraycopy(chunk, off, buf, end, len);
        end += len;
    }

    /**
     * The whole size of the frame buffered from {@code start} as its header declares it, or -1 while that header is
     * not buffered yet. Only ever lowers a growth step (the buffer still grows with the bytes received).
     */
    private long partialFrameBytes() {
        if (!headerRead || end - start < FrameType.FRAME_HEADER_BYTES) {
            return -1;
        }
        int p = start;
        long length = (buf[p + 1] & 0xffL)
                | (buf[p + 2] & 0xffL) << 8
                | (buf[p + 3] & 0xffL) << 16
                | (buf[p + 4] & 0xffL) << 24;
        return FrameType.FRAME_HEADER_BYTES + length;
    }

    private static void checkMagicPrefix(byte[] b, int p, int available) {
        for (int i = 0; i < Math.min(4, available); i++) {
            if (b[p + i] != FrameType.MAGIC[i]) {
                throw WireException.invalid("envelope magic mismatch");
            }
        }
    }

    private void readEnvelopeHeader(byte[] b, int p) {
        checkMagicPrefix(b, p, FrameType.ENVELOPE_HEADER_BYTES);
        int version = (b[p + 4] & 0xff) | (b[p + 5] & 0xff) << 8;
        if (version != FrameType.WIRE_VERSION) {
            throw WireException.unsupportedWireVersion(version);
        }
        int kind = b[p + 6] & 0xff;
        if (kind != FrameType.MSG_REQUEST && kind != FrameType.MSG_RESPONSE) {
            throw WireException.invalid("unknown msgKind");
        }
        if (expectedKind != 0 && kind != expectedKind) {
            throw WireException.invalid("unexpected msgKind");
        }
        if (b[p + 7] != 0) {
            throw WireException.invalid("envelope flags must be zero");
        }
        wireVersion = version;
        msgKind = kind;
        grammar = Grammar.forKind(kind);
        headerRead = true;
    }

    private Frame decodeFrame(int type, WireReader r) {
        if (FrameType.isUnknown(type)) {
            return new UnknownFrame(type, r.bytesToEnd());
        }
        if (msgKind == FrameType.MSG_REQUEST) {
            switch (type) {
                case FrameType.REQ_HEADER:
                    return ReqHeader.read(r);
                case FrameType.PUSH_COMMIT:
                    return PushCommit.read(r);
                case FrameType.PULL_HEADER:
                    return PullHeader.read(r);
                case FrameType.SUBSCRIPTION:
                    return SubscriptionFrame.read(r);
                default:
                    throw WireException.invalid("response frame in a request");
            }
        }
        switch (type) {
            case FrameType.RESP_HEADER:
                return RespHeader.read(r);
            case FrameType.LEASE:
                return Lease.read(r);
            case FrameType.PUSH_RESULT:
                return PushResult.read(r);
            case FrameType.PUSH_RESULT_DETAILS:
                return PushResultDetails.read(r);
            case FrameType.SUB_START:
                return SubStart.read(r);
            case FrameType.COMMIT:
                return CommitFrame.read(r);
            case FrameType.SEGMENT_REF:
                return SegmentRef.read(r);
            case FrameType.SEGMENT_INLINE:
                return SegmentInline.read(r);
            case FrameType.SUB_END:
                return SubEnd.read(r);
            case FrameType.ERROR:
                return ErrorFrame.read(r);
            default:
                throw WireException.invalid("request frame in a response");
        }
    }
}
