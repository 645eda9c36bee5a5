package dev.syncular.server.round;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import java.util.zip.ZipException;
import org.junit.jupiter.api.Test;

/**
 * §1.3: a gzip request body inflated as its chunks arrive ({@link GzipInflation}) gives what
 * {@code GZIPInputStream} gave for the whole body — the same bytes, or the same refusal (400 "not valid gzip") —
 * however the body is cut into chunks, and hands the inflated bytes on in bounded pieces.
 */
class GzipInflationTest {

    @Test
    void inflatesAsAWholeBodyDoesWhateverTheChunking() throws IOException {
        byte[] data = new byte[200_000];
        new SplittableRandom(46).nextBytes(data);
        Arrays.fill(data, 50_000, 150_000, (byte) 'a'); // compressible in the middle
        byte[] plain = gzip(data);
        Map<String, byte[]> bodies = new LinkedHashMap<>();
        bodies.put("one member", plain);
        bodies.put("every optional header field", member(data, true, true, true, true));
        bodies.put("two members", concat(gzip(data), gzip("more".getBytes(StandardCharsets.UTF_8))));
        bodies.put("bytes after the member that are no header", concat(plain, "xyz".getBytes(StandardCharsets.UTF_8)));
        bodies.put("an empty content", gzip(new byte[0]));
        bodies.put("truncated", Arrays.copyOf(plain, plain.length - 3));
        bodies.put("cut inside the header", Arrays.copyOf(plain, 6));
        bodies.put("no byte", new byte[0]);
        bodies.put("not gzip", "plain text".getBytes(StandardCharsets.UTF_8));
        byte[] badCrc = plain.clone();
        badCrc[badCrc.length - 6] ^= 1;
        bodies.put("a wrong trailer CRC", badCrc);
        byte[] badLength = plain.clone();
        badLength[badLength.length - 1] ^= 1;
        bodies.put("a wrong trailer length", badLength);
        byte[] badHeaderCrc = member(data, false, false, false, true);
        badHeaderCrc[10] ^= 1;
        bodies.put("a wrong header CRC", badHeaderCrc);
        byte[] badData = plain.clone();
        badData[20] ^= (byte) 0xff;
        badData[21] ^= (byte) 0xff;
        bodies.put("corrupt deflate data", badData);
        for (Map.Entry<String, byte[]> body : bodies.entrySet()) {
            byte[] expected = whole(body.getValue());
            for (int chunk : new int[] {1, 7, 8192, Integer.MAX_VALUE}) {
                byte[] got = streamed(body.getValue(), chunk);
                String what = body.getKey() + " in chunks of " + chunk;
                if (expected == null) {
                    assertEquals(null, got, what + ": refused as GZIPInputStream refuses it");
                } else {
                    assertNotNull(got, what + ": inflated as GZIPInputStream inflates it");
                    assertArrayEquals(expected, got, what);
                }
            }
        }
    }

    @Test
    void theInflatedBytesLeaveInBoundedPieces() {
        byte[] bomb = gzip(new byte[8 * 1024 * 1024]);
        long[] total = new long[1];
        int[] largest = new int[1];
        GzipInflation inflation = new GzipInflation((b, off, len) -> {
            total[0] += len;
            largest[0] = Math.max(largest[0], len);
        });
        inflation.feed(bomb, 0, bomb.length); // the whole bomb in one chunk
        inflation.finish();
        inflation.end();
        assertEquals(8 * 1024 * 1024, total[0]);
        assertTrue(largest[0] <= GzipInflation.PIECE, "pieces of at most " + GzipInflation.PIECE + ": " + largest[0]);
    }

    /** What {@code GZIPInputStream} made of the whole body: its bytes, or {@code null} for its refusal. */
    private static byte[] whole(byte[] body) throws IOException {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(body))) {
            return in.readAllBytes();
        } catch (ZipException | EOFException refused) {
            return null;
        }
    }

    /** The body fed in chunks of {@code size}: its bytes, or {@code null} when refused as not valid gzip. */
    private static byte[] streamed(byte[] body, int size) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        GzipInflation inflation = new GzipInflation(out::write);
        try {
            for (int p = 0; p < body.length; p += Math.min(size, body.length - p)) {
                inflation.feed(body, p, Math.min(size, body.length - p));
            }
            inflation.finish();
            return out.toByteArray();
        } catch (HttpError refused) {
            assertEquals(400, refused.status());
            assertEquals("request body is not valid gzip", refused.getMessage());
            return null;
        } finally {
            inflation.end();
        }
    }

    private static byte[] gzip(byte[] data) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(data);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return out.toByteArray();
    }

    /** A gzip member written by hand with the optional header fields RFC 1952 §2.3.1 allows. */
    private static byte[] member(byte[] data, boolean extra, boolean name, boolean comment, boolean headerCrc) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int flags = (headerCrc ? 2 : 0) | (extra ? 4 : 0) | (name ? 8 : 0) | (comment ? 16 : 0);
        out.writeBytes(new byte[] {0x1f, (byte) 0x8b, 8, (byte) flags, 0, 0, 0, 0, 0, (byte) 255});
        if (extra) {
            out.writeBytes(new byte[] {5, 0, 'A', 'B', 1, 0, 9});
        }
        if (name) {
            out.writeBytes("request.bin\0".getBytes(StandardCharsets.ISO_8859_1));
        }
        if (comment) {
            out.writeBytes("a comment\0".getBytes(StandardCharsets.ISO_8859_1));
        }
        if (headerCrc) {
            CRC32 crc = new CRC32();
            crc.update(out.toByteArray());
            int v = (int) crc.getValue();
            out.writeBytes(new byte[] {(byte) v, (byte) (v >> 8)});
        }
        Deflater deflater = new Deflater(Deflater.DEFAULT_COMPRESSION, true);
        deflater.setInput(data);
        deflater.finish();
        byte[] buf = new byte[8192];
        while (!deflater.finished()) {
            out.write(buf, 0, deflater.deflate(buf));
        }
        deflater.end();
        CRC32 crc = new CRC32();
        crc.update(data);
        writeInt(out, crc.getValue());
        writeInt(out, data.length);
        return out.toByteArray();
    }

    private static void writeInt(ByteArrayOutputStream out, long v) {
        out.writeBytes(new byte[] {(byte) v, (byte) (v >> 8), (byte) (v >> 16), (byte) (v >> 24)});
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
