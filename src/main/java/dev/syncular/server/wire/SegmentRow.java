package dev.syncular.server.wire;

/** A rows-segment row record (§5.2): the row's {@code serverVersion ≥ 1} and its full-row codec values. */
public record SegmentRow(long serverVersion, Object[] values) {}
