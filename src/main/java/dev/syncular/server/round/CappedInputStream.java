package dev.syncular.server.round;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/** Fails with {@link TooLarge} once more than {@code cap} bytes have been read. */
public final class CappedInputStream extends FilterInputStream {
    public static final class TooLarge extends IOException {
        TooLarge() {
            super("body exceeds the cap", null);
        }
    }

    private final long cap;
    private long read;

    public CappedInputStream(InputStream in, long cap) {
        super(in);
        this.cap = cap;
    }

    @Override
    public int read() throws IOException {
        int b = super.read();
        if (b >= 0) {
            count(1);
        }
        return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        int n = super.read(b, off, len);
        if (n > 0) {
            count(n);
        }
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        long s = super.skip(n);
        count(s);
        return s;
    }

    private void count(long n) throws TooLarge {
        read += n;
        if (read > cap) {
            throw new TooLarge();
        }
    }
}
