package dev.syncular.server.segments;

import java.util.List;

/** A stored content address (§5.1): one entry per {@code segmentId}, with every publication of it. */
public record StoredSegment(String segmentId, long byteLength, List<SegmentPublication> publications) {
    public StoredSegment {
        publications = List.copyOf(publications);
    }
}
