package dev.syncular.server.wire.realtime;

/**
 * Realtime channel tags (SPEC.md §8.7). Every binary WebSocket message on the realtime channel is
 * one tag byte followed by its payload. Tags are a closed registry per wire version. The tag is
 * transport framing only; it is never part of an SSP2 message.
 */
public final class ChannelTag {
    /** Server → client: one complete, standalone SSP2 response message (a delta, §8.2). */
    public static final int DELTA = 0x00;

    /** Both directions: one chunk of the in-flight sync round's byte stream. */
    public static final int ROUND = 0x01;

    private ChannelTag() {}

    /** Whether {@code tag} is defined in wire version 1. Only the low 8 bits are considered. */
    public static boolean isKnown(int tag) {
        int b = tag & 0xFF;
        return b == DELTA || b == ROUND;
    }
}
