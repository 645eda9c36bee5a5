package dev.syncular.server.segments;

/** Different bytes published under an existing content address (§5.1): fail loudly, never overwrite. */
public final class SegmentCollisionException extends RuntimeException {
    public SegmentCollisionException() {
        super("segment bytes differ from the bytes stored under the same content address", null, false, false);
    }
}
