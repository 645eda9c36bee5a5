package dev.syncular.server.round;

import com.github.luben.zstd.ZstdOutputStream;
import dev.syncular.server.errors.ErrorCode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.zip.GZIPOutputStream;

/**
 * Content codings (§1.3, §5.8): a request body's ({@link #ofRequest}: identity or {@code gzip}, inflated as it
 * arrives by the round's intake) and a response's: {@code gzip} (required) and {@code zstd}, negotiated from
 * {@code Accept-Encoding}. Protocol bytes are never compressed at the protocol layer; this is transport
 * compression applied per response by this hop.
 *
 * <p>What pays depends on the response's size ({@link #choose}; figures in docs/BENCHMARKS.md, "Codec", (d), and
 * "Measurements behind code choices"): below {@link #MIN_COMPRESSED_BYTES} a response goes identity-coded whenever
 * identity is acceptable (compressing a tiny response saves bytes worth less than its CPU); between that and
 * {@link #ZSTD_FROM_BYTES} gzip is the cheaper of two equally accepted codings, above it zstd.
 */
public enum ContentCoding {
    IDENTITY(null),
    GZIP("gzip"),
    ZSTD("zstd");

    /** zstd level: 3 is zstd's default, the speed/ratio point §5.8 measured. */
    static final int ZSTD_LEVEL = 3;
    /** A response smaller than this (identity-coded) is not compressed while identity is acceptable. */
    public static final int MIN_COMPRESSED_BYTES = 1024;
    /** From this size on, zstd is chosen over an equally accepted gzip; below it gzip. */
    public static final int ZSTD_FROM_BYTES = 4096;

    /** The {@code Content-Encoding} token, or {@code null} for identity. */
    public final String token;

    ContentCoding(String token) {
        this.token = token;
    }

    /**
     * The coding of a request body, from its {@code Content-Encoding} (§1.3): {@link #IDENTITY} when absent, empty or
     * {@code identity}, {@link #GZIP} for {@code gzip} or {@code x-gzip}; any other coding is 415
     * {@code sync.invalid_request}, answered before the body is read.
     */
    public static ContentCoding ofRequest(String contentEncoding) {
        if (contentEncoding == null) {
            return IDENTITY;
        }
        String c = contentEncoding.trim().toLowerCase(Locale.ROOT);
        if (c.isEmpty() || c.equals("identity")) {
            return IDENTITY;
        }
        if (c.equals("gzip") || c.equals("x-gzip")) {
            return GZIP;
        }
        throw new HttpError(415, ErrorCode.INVALID_REQUEST, "request Content-Encoding must be gzip or identity");
    }

    /**
     * Picks the coding with the highest q-value among {@code zstd} and {@code gzip}; on a tie the one the
     * client lists first, and {@code zstd} when both come from the same {@code *}. No acceptable coding (or
     * no header) means identity.
     */
    public static ContentCoding negotiate(String acceptEncoding) {
        return new Accepted(acceptEncoding).preferred();
    }

    /**
     * The coding for a response of about {@code identityBytes} bytes: identity below
     * {@link #MIN_COMPRESSED_BYTES} unless the client refuses identity ({@code identity;q=0}, or {@code *;q=0}
     * without naming identity); otherwise the client's preferred coding, except that a tie in q-value between
     * gzip and zstd goes to gzip below {@link #ZSTD_FROM_BYTES} and to zstd from there on.
     */
    public static ContentCoding choose(String acceptEncoding, long identityBytes) {
        Accepted a = new Accepted(acceptEncoding);
        if (identityBytes < MIN_COMPRESSED_BYTES && a.identityAcceptable) {
            return IDENTITY;
        }
        if (a.gzip > 0 && a.zstd > 0 && a.gzip == a.zstd) {
            return identityBytes < ZSTD_FROM_BYTES ? GZIP : ZSTD;
        }
        return a.preferred();
    }

    /** The q-values of one {@code Accept-Encoding} header (negative: not named). */
    private static final class Accepted {
        double gzip = -1;
        double zstd = -1;
        int posGzip = Integer.MAX_VALUE;
        int posZstd = Integer.MAX_VALUE;
        boolean identityAcceptable = true;

        Accepted(String acceptEncoding) {
            if (acceptEncoding == null || acceptEncoding.isBlank()) {
                return;
            }
            parse(acceptEncoding);
        }

        private void parse(String acceptEncoding) {
            double qGzip = -1;
            double qZstd = -1;
            double qStar = -1;
            double qIdentity = -1;
            int posGzip = Integer.MAX_VALUE;
            int posZstd = Integer.MAX_VALUE;
            int posStar = Integer.MAX_VALUE;
            String[] items = acceptEncoding.split(",");
            for (int i = 0; i < items.length; i++) {
                String[] parts = items[i].split(";");
                String coding = parts[0].trim().toLowerCase(Locale.ROOT);
                double q = 1.0;
                for (int p = 1; p < parts.length; p++) {
                    String param = parts[p].trim();
                    if (param.length() > 2
                            && (param.charAt(0) == 'q' || param.charAt(0) == 'Q')
                            && param.charAt(1) == '=') {
                        try {
                            q = Double.parseDouble(param.substring(2).trim());
                        } catch (NumberFormatException e) {
                            q = 0;
                        }
                    }
                }
                switch (coding) {
                    case "gzip", "x-gzip" -> {
                        if (qGzip < 0) {
                            qGzip = q;
                            posGzip = i;
                        }
                    }
                    case "zstd" -> {
                        if (qZstd < 0) {
                            qZstd = q;
                            posZstd = i;
                        }
                    }
                    case "*" -> {
                        if (qStar < 0) {
                            qStar = q;
                            posStar = i;
                        }
                    }
                    case "identity" -> {
                        if (qIdentity < 0) {
                            qIdentity = q;
                        }
                    }
                    default -> {}
                }
            }
            if (qGzip < 0 && qStar >= 0) {
                qGzip = qStar;
                posGzip = posStar;
            }
            if (qZstd < 0 && qStar >= 0) {
                qZstd = qStar;
                posZstd = posStar;
            }
            gzip = qGzip;
            zstd = qZstd;
            this.posGzip = posGzip;
            this.posZstd = posZstd;
            identityAcceptable = qIdentity >= 0 ? qIdentity > 0 : qStar != 0;
        }

        ContentCoding preferred() {
            boolean gzipOk = gzip > 0;
            boolean zstdOk = zstd > 0;
            if (!gzipOk && !zstdOk) {
                return IDENTITY;
            }
            if (gzipOk != zstdOk) {
                return zstdOk ? ZSTD : GZIP;
            }
            if (zstd != gzip) {
                return zstd > gzip ? ZSTD : GZIP;
            }
            return posGzip < posZstd ? GZIP : ZSTD;
        }
    }

    /** A fresh streaming compressor for one response body, writing its coded bytes to {@code sink}. */
    public Compressor compressor(ByteArrayOutputStream sink) {
        return new Compressor(this, sink);
    }

    /** Compresses a whole body at once (segment downloads). */
    public byte[] encodeAll(byte[] body) {
        if (this == IDENTITY) {
            return body;
        }
        ByteArrayOutputStream sink = new ByteArrayOutputStream(8192);
        Compressor c = compressor(sink);
        c.write(body, 0, body.length);
        c.finish();
        return sink.toByteArray();
    }

    /**
     * Streaming compressor: {@link #write} puts into its sink whatever coded output the input produced so far
     * (often nothing — the codec buffers, which keeps the ratio of a stream of small frames), {@link #finish} the
     * rest including the trailer. An identity compressor passes the bytes straight to the sink. Not thread-safe;
     * one per response.
     */
    public static final class Compressor {
        private final OutputStream out;

        Compressor(ContentCoding coding, ByteArrayOutputStream sink) {
            try {
                out = switch (coding) {
                    case IDENTITY -> sink;
                    case GZIP -> new GZIPOutputStream(sink, 8192, false);
                    case ZSTD -> new ZstdOutputStream(sink, ZSTD_LEVEL);
                };
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        public void write(byte[] b, int off, int len) {
            try {
                out.write(b, off, len);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        public void finish() {
            try {
                out.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
