package dev.syncular.server.round;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.wire.Change;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.ErrorFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.FrameType;
import dev.syncular.server.wire.MessageEncoder;
import dev.syncular.server.wire.SegmentInline;
import io.vertx.core.buffer.Buffer;
import java.io.ByteArrayOutputStream;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.jboss.logging.Logger;

/**
 * The chunks of one SSP2 response body (§1.2, §1.4), produced lazily as the HTTP layer asks for them: the
 * envelope header, the encoded frames and {@code END}, passed through the negotiated {@link ContentCoding}
 * (whose codec may hold bytes back and emit them later) and gathered into chunks of about
 * {@link #CHUNK_BYTES}: a typical sync response leaves in one chunk (one socket write instead of one per
 * frame), a large one in bounded pieces. Frames go through {@link MessageEncoder}, so a frame sequence the
 * response grammar forbids is never sent as if it were valid.
 *
 * <p>A failure while encoding happens after the 200 was committed, so it is reported in-band (§1.1): an
 * {@code ERROR} frame ({@code sync.internal_error}) and {@code END}, which makes the client abort the
 * open subscription (§1.4 rule 5). The exception itself is only logged.
 */
public final class ResponseBody implements Iterator<Buffer> {
    private static final Logger LOG = Logger.getLogger(ResponseBody.class);
    private static final byte[] END = {FrameType.END, 0, 0, 0, 0};
    /** A chunk is handed over once at least this many (coded) bytes are pending, and at the end. */
    static final int CHUNK_BYTES = 32 * 1024;

    private final List<Frame> frames;
    /** The coded bytes not yet handed over as a chunk: the compressor writes here. */
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream(1024);

    private final ContentCoding.Compressor compressor;
    private MessageEncoder encoder;
    private int index;
    private boolean done;
    private Buffer next;

    ResponseBody(List<Frame> frames, ContentCoding coding) {
        this.frames = frames;
        this.compressor = coding.compressor(pending);
    }

    public static Iterable<Buffer> of(List<Frame> frames, ContentCoding coding) {
        return () -> new ResponseBody(frames, coding);
    }

    /**
     * About how many bytes {@code frames} encode to (identity), counted only up to {@code enough}: the size
     * {@link ContentCoding#choose} decides by, without encoding anything. Exact for neither, within a few bytes
     * per frame and change (strings counted in chars, fixed fields at their largest).
     */
    public static long estimatedBytes(List<Frame> frames, long enough) {
        long n = 8; // envelope header + END
        for (Frame f : frames) {
            n += FrameType.FRAME_HEADER_BYTES;
            if (f instanceof CommitFrame c) {
                n += 24 + c.actorId().length();
                for (String t : c.tables()) {
                    n += 4 + t.length();
                }
                for (Change ch : c.changes()) {
                    n += 16 + ch.rowId().length() + (ch.row() == null ? 0 : ch.row().length);
                    for (Map.Entry<String, String> e : ch.scopes().entrySet()) {
                        n += 8 + e.getKey().length() + e.getValue().length();
                    }
                    if (n >= enough) {
                        return n;
                    }
                }
            } else if (f instanceof SegmentInline s) {
                n += 4 + s.payload().length;
            } else {
                n += 48;
            }
            if (n >= enough) {
                return n;
            }
        }
        return n;
    }

    @Override
    public boolean hasNext() {
        while (next == null && !done) {
            step();
        }
        return next != null;
    }

    @Override
    public Buffer next() {
        if (!hasNext()) {
            throw new NoSuchElementException();
        }
        Buffer b = next;
        next = null;
        return b;
    }

    private void step() {
        try {
            if (encoder == null) {
                encoder = new MessageEncoder(FrameType.MSG_RESPONSE, compressor::write); // writes the envelope header
            } else if (index < frames.size()) {
                encoder.write(frames.get(index++));
            } else {
                encoder.end();
                compressor.finish();
                done = true;
            }
        } catch (RuntimeException e) {
            LOG.error("Encoding a sync response failed after streaming began; sending an in-band ERROR", e);
            ErrorCode c = ErrorCode.INTERNAL_ERROR;
            byte[] error = MessageEncoder.encodeFrame(new ErrorFrame(
                    c.code, "internal server error", c.category, c.retryable, c.recommendedAction, null));
            try {
                compressor.write(error, 0, error.length);
                compressor.write(END, 0, END.length);
                compressor.finish();
            } catch (RuntimeException again) {
                LOG.error("Cannot terminate the failed sync response; the connection will be cut", again);
            }
            done = true;
        }
        if (pending.size() >= CHUNK_BYTES || (done && pending.size() > 0)) {
            next = Buffer.buffer(pending.toByteArray());
            pending.reset();
        }
    }
}
