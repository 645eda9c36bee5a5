package dev.syncular.server.round;

import dev.syncular.server.errors.ErrorCode;
import java.io.ByteArrayOutputStream;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * A gzip-coded request body (§1.3, RFC 1952) inflated as its chunks arrive, with the rules
 * {@code java.util.zip.GZIPInputStream} applies to a whole one: the header checked (magic, method 8, the optional
 * fields, the header CRC when flagged), the trailer's CRC-32 and length checked, further members inflated in turn,
 * and bytes after a member that do not begin a valid header ignored. Anything else — a bad header, corrupt deflate
 * data, a wrong trailer, a body that ends inside a member or brings no member — is 400 {@code sync.invalid_request}
 * ("not valid gzip").
 *
 * <p>The inflated bytes are handed to the sink in pieces of at most {@value #PIECE} bytes as they are produced, so
 * the sink's cap is applied before more is inflated (a few KiB of gzip can inflate to gigabytes). Not thread-safe:
 * one body, used by one thread at a time.
 */
final class GzipInflation {
    /** Where the inflated bytes go; it may throw to stop the inflation. */
    interface Sink {
        void accept(byte[] bytes, int offset, int length);
    }

    static final int PIECE = 64 * 1024;

    private static final int FHCRC = 2;
    private static final int FEXTRA = 4;
    private static final int FNAME = 8;
    private static final int FCOMMENT = 16;

    private enum State {
        /** The first member's header. */
        HEADER,
        DATA,
        TRAILER,
        /** After a member: another member's header, or bytes to ignore. */
        NEXT_HEADER,
        /** Bytes after the last member that are no header: ignored. */
        IGNORED
    }

    private final Sink sink;
    private final CRC32 crc = new CRC32();
    /** A header or trailer not yet whole. */
    private final ByteArrayOutputStream held = new ByteArrayOutputStream(32);

    private State state = State.HEADER;
    /** Created with the first member's data, ended by {@link #end}. */
    private Inflater inflater;

    private byte[] piece;

    GzipInflation(Sink sink) {
        this.sink = sink;
    }

    /** Inflates {@code length} more bytes of the body from {@code offset}. */
    void feed(byte[] bytes, int offset, int length) {
        int p = offset;
        int end = offset + length;
        while (p < end) {
            p = switch (state) {
                case HEADER, NEXT_HEADER -> header(bytes, p, end);
                case DATA -> data(bytes, p, end);
                case TRAILER -> trailer(bytes, p, end);
                case IGNORED -> end;
            };
        }
    }

    /** The body ended: 400 unless it ended after a whole member. */
    void finish() {
        if (state == State.HEADER || state == State.DATA || state == State.TRAILER) {
            throw invalid();
        }
    }

    /** Frees the inflater's native memory; idempotent. */
    void end() {
        if (inflater != null) {
            inflater.end();
        }
    }

    static HttpError invalid() {
        return new HttpError(400, ErrorCode.INVALID_REQUEST, "request body is not valid gzip");
    }

    private int header(byte[] bytes, int p, int end) {
        held.write(bytes, p, end - p);
        byte[] h = held.toByteArray();
        int length;
        try {
            length = headerLength(h);
        } catch (HttpError bad) {
            if (state == State.NEXT_HEADER) {
                state = State.IGNORED; // as GZIPInputStream: a malformed header after a member ends the body
                held.reset();
                return end;
            }
            throw bad;
        }
        if (length < 0) {
            return end; // not whole yet
        }
        held.reset();
        if (inflater == null) {
            inflater = new Inflater(true);
            piece = new byte[PIECE];
        } else {
            inflater.reset();
        }
        crc.reset();
        state = State.DATA;
        // the bytes after the header were held with it: inflate them now
        int rest = h.length - length;
        feed(h, length, rest);
        return end;
    }

    /** The length of the gzip header at the start of {@code h}, -1 when it is not whole yet; 400 when malformed. */
    private static int headerLength(byte[] h) {
        int n = h.length;
        if ((n > 0 && (h[0] & 0xff) != 0x1f) || (n > 1 && (h[1] & 0xff) != 0x8b) || (n > 2 && h[2] != 8)) {
            throw invalid();
        }
        if (n < 10) {
            return -1;
        }
        int flags = h[3] & 0xff;
        int p = 10;
        if ((flags & FEXTRA) != 0) {
            if (n < p + 2) {
                return -1;
            }
            p += 2 + ((h[p] & 0xff) | (h[p + 1] & 0xff) << 8);
            if (n < p) {
                return -1;
            }
        }
        for (int field : new int[] {FNAME, FCOMMENT}) {
            if ((flags & field) != 0) {
                while (p < n && h[p] != 0) {
                    p++;
                }
                if (p >= n) {
                    return -1;
                }
                p++;
            }
        }
        if ((flags & FHCRC) != 0) {
            if (n < p + 2) {
                return -1;
            }
            CRC32 headerCrc = new CRC32();
            headerCrc.update(h, 0, p);
            if (((h[p] & 0xff) | (h[p + 1] & 0xff) << 8) != (int) (headerCrc.getValue() & 0xffff)) {
                throw invalid();
            }
            p += 2;
        }
        return p;
    }

    private int data(byte[] bytes, int p, int end) {
        inflater.setInput(bytes, p, end - p);
        try {
            while (true) {
                int n = inflater.inflate(piece);
                if (n > 0) {
                    crc.update(piece, 0, n);
                    sink.accept(piece, 0, n);
                } else if (inflater.finished()) {
                    state = State.TRAILER;
                    return end - inflater.getRemaining();
                } else if (inflater.needsDictionary()) {
                    throw invalid();
                } else {
                    return end; // every byte given is consumed: more to come
                }
            }
        } catch (DataFormatException e) {
            throw invalid();
        }
    }

    private int trailer(byte[] bytes, int p, int end) {
        int take = Math.min(8 - held.size(), end - p);
        held.write(bytes, p, take);
        if (held.size() == 8) {
            byte[] t = held.toByteArray();
            held.reset();
            if (u32(t, 0) != crc.getValue() || u32(t, 4) != (inflater.getBytesWritten() & 0xffffffffL)) {
                throw invalid();
            }
            state = State.NEXT_HEADER;
        }
        return p + take;
    }

    private static long u32(byte[] b, int p) {
        return (b[p] & 0xffL) | (b[p + 1] & 0xffL) << 8 | (b[p + 2] & 0xffL) << 16 | (b[p + 3] & 0xffL) << 24;
    }
}
