package dev.syncular.server.crdt.yjs;

/** A Yjs struct id: the client that created it and the client's clock at its first tick. */
record YjsId(long client, long clock) {}
