package dev.syncular.server.wire;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the SSP2 primitives (Conventions) from a bounded byte range. Every length prefix is checked
 * against the bytes actually present before anything is allocated, so an untrusted length can never
 * size an allocation.
 */
public final class WireReader {
    /** JS safe-integer bound: i64 values must lie within ±(2^53−1) (Conventions). */
    public static final long MAX_SAFE_INTEGER = 9_007_199_254_740_991L;

    private final byte[] buf;
    private int pos;
    private final int limit;

    public WireReader(byte[] buf) {
        this(buf, 0, buf.length);
    }

    public WireReader(byte[] buf, int offset, int length) {
        this.buf = buf;
        this.pos = offset;
        this.limit = offset + length;
    }

    public int position() {
        return pos;
    }

    public int remaining() {
        return limit - pos;
    }

    public boolean hasRemaining() {
        return pos < limit;
    }

    /** Fails unless the whole range was consumed (§1.2 rule 3: no trailing bytes inside a known frame). */
    public void expectEnd() {
        if (pos != limit) {
            throw WireException.invalid("trailing bytes inside frame");
        }
    }

    private void need(int n) {
        if (n < 0 || limit - pos < n) {
            throw WireException.invalid("truncated value");
        }
    }

    public int u8() {
        need(1);
        return buf[pos++] & 0xff;
    }

    public int u16() {
        need(2);
        int v = (buf[pos] & 0xff) | (buf[pos + 1] & 0xff) << 8;
        pos += 2;
        return v;
    }

    public int i32() {
        need(4);
        int v = (buf[pos] & 0xff)
                | (buf[pos + 1] & 0xff) << 8
                | (buf[pos + 2] & 0xff) << 16
                | (buf[pos + 3] & 0xff) << 24;
        pos += 4;
        return v;
    }

    /** A u32 as a non-negative long. */
    public long u32() {
        return i32() & 0xffff_ffffL;
    }

    /** A u32 length or count that must fit in the bytes still present (each counted item takes ≥ {@code minItemBytes}). */
    public int count(int minItemBytes) {
        long n = u32();
        if (n * Math.max(1, minItemBytes) > remaining()) {
            throw WireException.invalid("count exceeds remaining bytes");
        }
        return (int) n;
    }

    public long rawI64() {
        need(8);
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = (v << 8) | (buf[pos + i] & 0xff);
        }
        pos += 8;
        return v;
    }

    /** An i64 within the ±(2^53−1) safe range (Conventions). */
    public long i64() {
        long v = rawI64();
        if (v > MAX_SAFE_INTEGER || v < -MAX_SAFE_INTEGER) {
            throw WireException.invalid("i64 outside the safe-integer range");
        }
        return v;
    }

    public double f64() {
        return Double.longBitsToDouble(rawI64());
    }

    public boolean bool() {
        int b = u8();
        if (b == 0) {
            return false;
        }
        if (b == 1) {
            return true;
        }
        throw WireException.invalid("bool byte out of range");
    }

    /** The presence byte of an {@code opt(T)}. */
    public boolean present() {
        int b = u8();
        if (b == 0) {
            return false;
        }
        if (b == 1) {
            return true;
        }
        throw WireException.invalid("option presence byte out of range");
    }

    public String str() {
        int n = count(1);
        String s = Utf8.decode(buf, pos, n);
        pos += n;
        return s;
    }

    public byte[] bytes() {
        int n = count(1);
        byte[] out = new byte[n];
        System.arraycopy(buf, pos, out, 0, n);
        pos += n;
        return out;
    }

    /** A {@code json} value: a {@code str} that must parse as a JSON document, preserved verbatim. */
    public String json() {
        String s = str();
        JsonText.requireDocument(s);
        return s;
    }

    public String optStr() {
        return present() ? str() : null;
    }

    public String optJson() {
        return present() ? json() : null;
    }

    public Long optI64() {
        return present() ? i64() : null;
    }

    public Integer optI32() {
        return present() ? i32() : null;
    }

    public byte[] optBytes() {
        return present() ? bytes() : null;
    }

    public List<String> strList() {
        int n = count(4);
        if (n == 0) {
            return List.of();
        }
        List<String> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(str());
        }
        return Collections.unmodifiableList(out);
    }

    private String mapKey(String previous) {
        String key = str();
        if (previous != null && previous.compareTo(key) >= 0) {
            // String.compareTo is UTF-16 code-unit order, exactly the Conventions' canonical order.
            throw WireException.invalid("map keys duplicated or out of canonical order");
        }
        return key;
    }

    /** A {@code map} of {@code str → list(str)} (scope maps, §3.2). */
    public Map<String, List<String>> scopeListMap() {
        int n = count(8);
        if (n == 0) {
            return Map.of();
        }
        Map<String, List<String>> out = new LinkedHashMap<>(n * 2);
        String prev = null;
        for (int i = 0; i < n; i++) {
            String key = mapKey(prev);
            out.put(key, strList());
            prev = key;
        }
        return Collections.unmodifiableMap(out);
    }

    /** A {@code map} of {@code str → str} (stored scopes, §3.1). */
    public Map<String, String> scopeValueMap() {
        int n = count(8);
        if (n == 0) {
            return Map.of();
        }
        Map<String, String> out = new LinkedHashMap<>(n * 2);
        String prev = null;
        for (int i = 0; i < n; i++) {
            String key = mapKey(prev);
            out.put(key, str());
            prev = key;
        }
        return Collections.unmodifiableMap(out);
    }

    /** Copies every remaining byte (a frame payload that is itself an opaque blob, §5.7). */
    public byte[] bytesToEnd() {
        byte[] out = new byte[remaining()];
        System.arraycopy(buf, pos, out, 0, out.length);
        pos = limit;
        return out;
    }

    /** Advances past {@code n} bytes without copying. */
    public void skip(int n) {
        need(n);
        pos += n;
    }
}
