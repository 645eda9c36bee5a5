package dev.syncular.server.wire;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Writes SSP2 primitives (Conventions) into a growable little-endian buffer. */
public final class WireWriter {
    private byte[] buf;
    private int size;

    public WireWriter() {
        this(256);
    }

    public WireWriter(int initialCapacity) {
        buf = new byte[Math.max(16, initialCapacity)];
    }

    public int size() {
        return size;
    }

    public void reset() {
        size = 0;
    }

    public byte[] toByteArray() {
        return Arrays.copyOf(buf, size);
    }

    /** The backing array; valid up to {@link #size()}. */
    public byte[] array() {
        return buf;
    }

    private void ensure(int extra) {
        int need = size + extra;
        if (need < 0) {
            throw new WireException(WireException.INVALID_REQUEST, "message exceeds 2 GiB", Map.of());
        }
        if (need > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(need, buf.length * 2));
        }
    }

    public WireWriter u8(int v) {
        ensure(1);
        buf[size++] = (byte) v;
        return this;
    }

    public WireWriter u16(int v) {
        if (v < 0 || v > 0xffff) {
            throw new IllegalArgumentException("u16 out of range");
        }
        ensure(2);
        buf[size++] = (byte) v;
        buf[size++] = (byte) (v >>> 8);
        return this;
    }

    public WireWriter i32(int v) {
        ensure(4);
        buf[size++] = (byte) v;
        buf[size++] = (byte) (v >>> 8);
        buf[size++] = (byte) (v >>> 16);
        buf[size++] = (byte) (v >>> 24);
        return this;
    }

    public WireWriter u32(long v) {
        if (v < 0 || v > 0xffff_ffffL) {
            throw new IllegalArgumentException("u32 out of range");
        }
        return i32((int) v);
    }

    /** Overwrites a u32 at {@code offset} (frame length back-patching). */
    public void patchU32(int offset, long v) {
        int x = (int) v;
        buf[offset] = (byte) x;
        buf[offset + 1] = (byte) (x >>> 8);
        buf[offset + 2] = (byte) (x >>> 16);
        buf[offset + 3] = (byte) (x >>> 24);
    }

    public WireWriter rawI64(long v) {
        ensure(8);
        for (int i = 0; i < 8; i++) {
            buf[size++] = (byte) (v >>> (8 * i));
        }
        return this;
    }

    /** An i64 that must respect the ±(2^53−1) contract; encoders refuse values a reader must reject. */
    public WireWriter i64(long v) {
        if (v > WireReader.MAX_SAFE_INTEGER || v < -WireReader.MAX_SAFE_INTEGER) {
            throw new IllegalArgumentException("i64 outside the safe-integer range");
        }
        return rawI64(v);
    }

    public WireWriter f64(double v) {
        return rawI64(Double.doubleToRawLongBits(v));
    }

    public WireWriter bool(boolean v) {
        return u8(v ? 1 : 0);
    }

    public WireWriter str(String s) {
        int start = size;
        ensure(4);
        size += 4;
        int n = Utf8.encode(s, this);
        patchU32(start, n);
        return this;
    }

    public WireWriter bytes(byte[] b) {
        return bytes(b, 0, b.length);
    }

    public WireWriter bytes(byte[] b, int off, int len) {
        u32(len);
        return raw(b, off, len);
    }

    public WireWriter raw(byte[] b) {
        return raw(b, 0, b.length);
    }

    public WireWriter raw(byte[] b, int off, int len) {
        ensure(len);
        System.arraycopy(b, off, buf, size, len);
        size += len;
        return this;
    }

    void rawByteUnchecked(int b) {
        buf[size++] = (byte) b;
    }

    /**
     * Appends the {@code len} chars of {@code s}, each below U+0080, as one byte each (capacity ensured by the
     * caller): for such a string its UTF-8 form, copied in bulk.
     */
    @SuppressWarnings("deprecation") // String.getBytes(int, int, byte[], int): the low byte of each char, as wanted
    void rawAsciiUnchecked(String s, int len) {
        s.getBytes(0, len, buf, size);
        size += len;
    }

    void ensureCapacity(int extra) {
        ensure(extra);
    }

    public WireWriter optStr(String s) {
        if (s == null) {
            return u8(0);
        }
        return u8(1).str(s);
    }

    public WireWriter optI64(Long v) {
        if (v == null) {
            return u8(0);
        }
        return u8(1).i64(v);
    }

    public WireWriter optI32(Integer v) {
        if (v == null) {
            return u8(0);
        }
        return u8(1).i32(v);
    }

    public WireWriter optBytes(byte[] b) {
        if (b == null) {
            return u8(0);
        }
        return u8(1).bytes(b);
    }

    public WireWriter strList(List<String> list) {
        u32(list.size());
        for (String s : list) {
            str(s);
        }
        return this;
    }

    /** Writes a {@code str → list(str)} map with keys in canonical (UTF-16 code-unit) order. */
    public WireWriter scopeListMap(Map<String, List<String>> map) {
        String[] keys = sortedKeys(map);
        u32(keys.length);
        for (String k : keys) {
            str(k);
            strList(map.get(k));
        }
        return this;
    }

    /** Writes a {@code str → str} map with keys in canonical (UTF-16 code-unit) order. */
    public WireWriter scopeValueMap(Map<String, String> map) {
        String[] keys = sortedKeys(map);
        u32(keys.length);
        for (String k : keys) {
            str(k);
            str(map.get(k));
        }
        return this;
    }

    private static String[] sortedKeys(Map<String, ?> map) {
        String[] keys = map.keySet().toArray(new String[0]);
        Arrays.sort(keys); // String order is UTF-16 code-unit order.
        return keys;
    }
}
