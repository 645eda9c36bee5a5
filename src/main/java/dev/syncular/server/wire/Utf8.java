package dev.syncular.server.wire;

import java.nio.charset.StandardCharsets;

/** Strict UTF-8: decoding rejects ill-formed bytes (Conventions {@code str}); encoding refuses lone surrogates. */
final class Utf8 {
    private Utf8() {}

    static String decode(byte[] b, int off, int len) {
        int end = off + len;
        int i = off;
        while (i < end && b[i] >= 0) {
            i++;
        }
        if (i == end) {
            return new String(b, off, len, StandardCharsets.ISO_8859_1);
        }
        validate(b, i, end);
        return new String(b, off, len, StandardCharsets.UTF_8);
    }

    /** Validates well-formed UTF-8 per RFC 3629 (no overlongs, no surrogates, ≤ U+10FFFF). */
    static void validate(byte[] b, int i, int end) {
        while (i < end) {
            int c = b[i] & 0xff;
            if (c < 0x80) {
                i++;
                continue;
            }
            int n;
            int min;
            if (c >= 0xc2 && c <= 0xdf) {
                n = 1;
                min = 0x80;
            } else if (c >= 0xe0 && c <= 0xef) {
                n = 2;
                min = 0x800;
            } else if (c >= 0xf0 && c <= 0xf4) {
                n = 3;
                min = 0x10000;
            } else {
                throw WireException.invalid("ill-formed UTF-8");
            }
            if (end - i <= n) {
                throw WireException.invalid("ill-formed UTF-8");
            }
            int cp = c & (0x3f >> n);
            for (int k = 1; k <= n; k++) {
                int cc = b[i + k] & 0xff;
                if ((cc & 0xc0) != 0x80) {
                    throw WireException.invalid("ill-formed UTF-8");
                }
                cp = (cp << 6) | (cc & 0x3f);
            }
            if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
                throw WireException.invalid("ill-formed UTF-8");
            }
            i += n + 1;
        }
    }

    /** Appends the UTF-8 form of {@code s}; returns the byte count. */
    static int encode(String s, WireWriter w) {
        int len = s.length();
        w.ensureCapacity(len);
        int start = w.size();
        int seen = 0;
        for (int k = 0; k < len; k++) {
            seen |= s.charAt(k);
        }
        if (seen < 0x80) {
            // all ASCII (the usual id, key or title): one bulk copy instead of a store per char
            w.rawAsciiUnchecked(s, len);
            return len;
        }
        int i = 0;
        for (; i < len; i++) {
            char ch = s.charAt(i);
            if (ch >= 0x80) {
                break;
            }
            w.rawByteUnchecked(ch);
        }
        for (; i < len; i++) {
            char ch = s.charAt(i);
            if (ch < 0x80) {
                w.u8(ch);
            } else if (ch < 0x800) {
                w.u8(0xc0 | (ch >> 6)).u8(0x80 | (ch & 0x3f));
            } else if (Character.isHighSurrogate(ch)) {
                if (i + 1 >= len || !Character.isLowSurrogate(s.charAt(i + 1))) {
                    throw new IllegalArgumentException("string contains a lone surrogate");
                }
                int cp = Character.toCodePoint(ch, s.charAt(++i));
                w.u8(0xf0 | (cp >> 18))
                        .u8(0x80 | ((cp >> 12) & 0x3f))
                        .u8(0x80 | ((cp >> 6) & 0x3f))
                        .u8(0x80 | (cp & 0x3f));
            } else if (Character.isLowSurrogate(ch)) {
                throw new IllegalArgumentException("string contains a lone surrogate");
            } else {
                w.u8(0xe0 | (ch >> 12)).u8(0x80 | ((ch >> 6) & 0x3f)).u8(0x80 | (ch & 0x3f));
            }
        }
        return w.size() - start;
    }
}
