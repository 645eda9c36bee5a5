package dev.syncular.server.crdt.yjs;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;

/**
 * Reads the lib0 primitives a Yjs v1 update is made of: unsigned and signed variable-length integers
 * (7 data bits a byte, low group first; the signed form keeps a sign bit and 6 data bits in its first
 * byte), length-prefixed UTF-8 strings (malformed UTF-8 refused) and byte arrays, and big-endian IEEE
 * floats. Every read checks the bounds; numbers are limited to the 2^53 range a JavaScript reader accepts.
 */
final class Lib0Reader {
    static final long MAX_SAFE = (1L << 53) - 1;

    private final byte[] bytes;
    private int pos;

    Lib0Reader(byte[] bytes) {
        this.bytes = bytes;
    }

    int position() {
        return pos;
    }

    int readUint8() {
        if (pos >= bytes.length) {
            throw new YjsFormatException("unexpected end of update");
        }
        return bytes[pos++] & 0xff;
    }

    long readVarUint() {
        long num = 0;
        int shift = 0;
        while (true) {
            int b = readUint8();
            if (shift > 49) {
                throw new YjsFormatException("varuint out of range");
            }
            num |= (long) (b & 0x7f) << shift;
            shift += 7;
            if (b < 0x80) {
                if (num > MAX_SAFE) {
                    throw new YjsFormatException("varuint out of range");
                }
                return num;
            }
        }
    }

    /** A lib0 varint as a JavaScript number: {@code -0.0} when the sign bit is set on a zero. */
    double readVarInt() {
        int b = readUint8();
        long num = b & 0x3f;
        boolean negative = (b & 0x40) != 0;
        int shift = 6;
        while ((b & 0x80) != 0) {
            b = readUint8();
            if (shift > 48) {
                throw new YjsFormatException("varint out of range");
            }
            num |= (long) (b & 0x7f) << shift;
            shift += 7;
        }
        if (num > MAX_SAFE) {
            throw new YjsFormatException("varint out of range");
        }
        return negative ? -(double) num : (double) num;
    }

    /** A count of elements that follow, each at least one byte long. */
    int readLength() {
        long n = readVarUint();
        if (n > bytes.length - pos) { // every element takes at least one byte
            throw new YjsFormatException("count past the end of the update");
        }
        return (int) n;
    }

    byte[] readVarBytes() {
        long n = readVarUint();
        if (n > bytes.length - pos) {
            throw new YjsFormatException("unexpected end of update");
        }
        byte[] out = new byte[(int) n];
        System.arraycopy(bytes, pos, out, 0, (int) n);
        pos += (int) n;
        return out;
    }

    /** A length-prefixed UTF-8 string; malformed UTF-8 is refused, as lib0's fatal decoder refuses it. */
    String readVarString() {
        long n = readVarUint();
        if (n > bytes.length - pos) {
            throw new YjsFormatException("unexpected end of update");
        }
        int start = pos;
        pos += (int) n;
        boolean ascii = true;
        for (int i = start; i < pos && ascii; i++) {
            ascii = bytes[i] >= 0;
        }
        if (ascii) {
            return new String(bytes, start, (int) n, StandardCharsets.ISO_8859_1);
        }
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .decode(ByteBuffer.wrap(bytes, start, (int) n))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new YjsFormatException("string is not valid UTF-8");
        }
    }

    private ByteBuffer fixed(int n) {
        if (bytes.length - pos < n) {
            throw new YjsFormatException("unexpected end of update");
        }
        ByteBuffer b = ByteBuffer.wrap(bytes, pos, n);
        pos += n;
        return b;
    }

    float readFloat32() {
        return fixed(4).getFloat();
    }

    double readFloat64() {
        return fixed(8).getDouble();
    }

    long readBigInt64() {
        return fixed(8).getLong();
    }
}
