package dev.syncular.server.storage;

/** A delete marker {@code (partition, table, rowId, commitSeq)} (§2.2). */
public record Tombstone(String table, String rowId, long commitSeq) {}
