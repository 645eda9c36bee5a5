package dev.syncular.server.crdt.yjs;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/** Writes the lib0 primitives {@link Lib0Reader} reads, the way lib0's encoder lays them out. */
final class Lib0Writer {
    private static final byte[] REPLACEMENT = {(byte) 0xef, (byte) 0xbf, (byte) 0xbd};

    private byte[] buf;
    private int size;

    Lib0Writer(int capacity) {
        buf = new byte[Math.max(16, capacity)];
    }

    int size() {
        return size;
    }

    byte[] toBytes() {
        return Arrays.copyOf(buf, size);
    }

    private void ensure(int more) {
        if (buf.length - size < more) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + more));
        }
    }

    void writeUint8(int b) {
        ensure(1);
        buf[size++] = (byte) b;
    }

    void writeBytes(byte[] b) {
        ensure(b.length);
        System.arraycopy(b, 0, buf, size, b.length);
        size += b.length;
    }

    void writeVarUint(long n) {
        ensure(10);
        while (n > 0x7f) {
            buf[size++] = (byte) (0x80 | (n & 0x7f));
            n >>>= 7;
        }
        buf[size++] = (byte) n;
    }

    /** lib0's signed varint of an integral JavaScript number, {@code -0.0} keeping its sign bit. */
    void writeVarInt(double value) {
        boolean negative = value < 0 || (value == 0 && 1 / value < 0);
        long n = (long) Math.abs(value);
        writeUint8((n > 0x3f ? 0x80 : 0) | (negative ? 0x40 : 0) | (int) (n & 0x3f));
        n >>>= 6;
        while (n > 0) {
            writeUint8((n > 0x7f ? 0x80 : 0) | (int) (n & 0x7f));
            n >>>= 7;
        }
    }

    void writeVarBytes(byte[] b) {
        writeVarUint(b.length);
        writeBytes(b);
    }

    void writeVarString(String s) {
        writeVarBytes(utf8(s));
    }

    /** UTF-8 as a WHATWG encoder produces it: a lone surrogate becomes U+FFFD. */
    static byte[] utf8(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (Character.isSurrogate(s.charAt(i))) {
                return utf8WithReplacement(s);
            }
        }
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] utf8WithReplacement(String s) {
        CharsetEncoder enc = StandardCharsets.UTF_8
                .newEncoder()
                .onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE)
                .replaceWith(REPLACEMENT);
        try {
            ByteBuffer b = enc.encode(CharBuffer.wrap(s));
            byte[] r = new byte[b.remaining()];
            b.get(r);
            return r;
        } catch (CharacterCodingException e) {
            throw new IllegalStateException(e);
        }
    }

    void writeFloat32(float f) {
        writeBytes(ByteBuffer.allocate(4).putFloat(f).array());
    }

    void writeFloat64(double d) {
        writeBytes(ByteBuffer.allocate(8).putDouble(d).array());
    }

    void writeBigInt64(long v) {
        writeBytes(ByteBuffer.allocate(8).putLong(v).array());
    }
}
