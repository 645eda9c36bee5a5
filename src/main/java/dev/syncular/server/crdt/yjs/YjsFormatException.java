package dev.syncular.server.crdt.yjs;

/**
 * Bytes that are not a Yjs v1 update: truncated, an unknown struct or content reference, a number past the
 * 2^53 range lib0 reads, or trailing bytes after the delete set. The merger lets it escape, so the push is
 * rejected with {@code sync.crdt_merge_failed} (§5.10.2, §5.10.6).
 */
public final class YjsFormatException extends RuntimeException {
    public YjsFormatException(String message) {
        super(message, null, false, false);
    }
}
